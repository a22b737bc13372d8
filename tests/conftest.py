"""Shared fixtures: the handler modules loaded from lambda/, and one synth per session."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("NODE_NO_WARNINGS", "1")



from stacks.lambda_code import load_lambda  # noqa: E402 - the one loader, after ROOT is importable


@pytest.fixture(scope="session")
def worker() -> ModuleType:
    return load_lambda("worker")


@pytest.fixture(scope="session")
def seeder() -> ModuleType:
    return load_lambda("reference_seeder")


# What `cdk synth` passes the app from cdk.json (feature flags and context defaults).
CDK_JSON_CONTEXT = json.loads((ROOT / "cdk.json").read_text())["context"]


def synth_stack(context: dict | None = None, outdir: Path | None = None):
    """Synthesize the app as `cdk synth` would (cdk.json's context first), environment-agnostic;
    returns (app, stack). With `outdir`, the cloud assembly is written there."""
    import aws_cdk as cdk

    from app import build

    app = cdk.App(context={**CDK_JSON_CONTEXT, **(context or {})}, outdir=str(outdir) if outdir else None)
    stack = build(app)
    return app, stack


def synth_assembly(context: dict, outdir: Path) -> Path:
    """A cloud assembly for `cdk deploy --app <dir>`: synthesized once, in this process (jsii
    is already warm here), instead of by the CLI on every deploy."""
    app, _ = synth_stack(context, outdir)
    app.synth()
    return outdir


@pytest.fixture(scope="session")
def synthesized():
    return synth_stack()


@pytest.fixture(scope="session")
def template(synthesized):
    from aws_cdk.assertions import Template

    _, stack = synthesized
    return Template.from_stack(stack)


def pytest_collection_modifyitems(config, items):
    """Modules that wait longest first (`long_wait(seconds)`, about how long the module takes):
    `make test` hands files to its workers in collection order (--dist loadfile
    --no-loadscope-reorder), so the long ones start at once instead of behind dozens of quick
    files, and the quick ones fill the gaps. Scheduling only: nothing asserts the figure."""
    def waits(item) -> float:
        marker = item.get_closest_marker("long_wait")
        return marker.args[0] if marker else 0

    items.sort(key=lambda item: -waits(item))


_FIGURES: list[tuple[str, str]] = []


@pytest.fixture
def figure():
    """Record a measured figure; all of them are printed at the end of the run."""
    def record(name: str, text: str) -> None:
        _FIGURES.append((name, text))
    return record


def pytest_sessionfinish(session):
    """Under pytest-xdist, a worker hands its figures to the controller, which prints them all."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["figures"] = json.dumps(_FIGURES)


def pytest_testnodedown(node, error):
    _FIGURES.extend(tuple(figure) for figure in json.loads(getattr(node, "workeroutput", {}).get("figures", "[]")))


def pytest_terminal_summary(terminalreporter):
    if _FIGURES:
        terminalreporter.section("figures")
        for name, text in _FIGURES:
            terminalreporter.write_line(f"{name}: {text}")


@pytest.fixture(scope="session")
def shared_aws(tmp_path_factory):
    """The run's one embedded AWS (bootstrapped), shared with the other xdist workers."""
    from tests.shared_aws import SharedAWS

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's directory, above each worker's own
    shared = SharedAWS(root / "shared-aws")
    shared.join()
    try:
        yield shared
    finally:
        shared.leave()
