"""Developer loop: `cdk synth` and the test suite, timed as a developer runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bench.stats import summarize
from bench.variants import ROOT
from local.session import QUIET_NODE

TEST_SELECTIONS = {
    "unit": ["tests/unit"],
    "unit+infra": ["tests/unit", "tests/infra"],
    "all": [],
}


def _timed(command: list[str], env: dict[str, str], what: str, timeout: float = 900) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)  # noqa: S603  argv lists this bench builds (make, npx), no shell
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        tail = [line for line in (result.stdout + result.stderr).strip().splitlines() if line.strip()][-2:]
        raise RuntimeError(f"{what} failed ({result.returncode}): {' | '.join(tail)}")
    return elapsed


def run(
    *, synth_runs: int, tests: str, test_runs: int, python: str, progress: Callable[[str], None]
) -> dict[str, Any]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(QUIET_NODE)
    found: dict[str, Any] = {}
    out = tempfile.mkdtemp(prefix="bench-synth-")
    try:
        # Own output folder: a shared cdk.out is locked while another CLI reads it.
        command = ["npx", "--no-install", "cdk", "synth", "--quiet", "--output", out]
        progress(f"developer loop: cdk synth x{synth_runs}")
        found["cdk_synth"] = {
            "command": "npx cdk synth --quiet",
            "seconds": summarize([_timed(command, env, "cdk synth") for _ in range(synth_runs)], "s"),
        }
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if tests != "none":
        paths = TEST_SELECTIONS[tests]
        command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths]
        progress(f"developer loop: pytest {' '.join(paths) or '(whole suite)'} x{test_runs}")
        found["tests"] = {
            "command": "python -m pytest -q " + " ".join(paths),
            "selection": tests,
            "seconds": summarize([_timed(command, env, "the test suite") for _ in range(test_runs)], "s"),
        }
    return found
