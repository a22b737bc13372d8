"""The docs name the tests that prove their rows; every test they name exists (a renamed or
deleted test would otherwise leave a row that cites nothing)."""

from __future__ import annotations

import ast
import functools
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# `test_x.py`, `tests/e2e/test_x.py`, `embedded_aws/tests/test_sqs/test_x.py`, `test_x.py::test_name`
# or an abbreviated `test_x.py::test_na...`
REFERENCE = re.compile(r"`((?:(?:embedded_aws/)?tests/[\w/]+/)?test_\w+\.py)(?:::(test_\w+)(\.\.\.)?)?")
# The product's tests and the embedded AWS's.
TEST_TREES = (ROOT / "tests", ROOT / "embedded_aws" / "tests")
# A bare `test_name...` after a file was named in the same cell: `file.py::test_a`, `test_b`
BARE = re.compile(r"`(test_\w+)(\.\.\.)?(?:\[[^\]]*\])?`")


# Written while the suite runs (tests/artifacts/cdk-nag is replaced by the nag test): never walked,
# or a folder that vanishes mid-walk fails this module.
NOT_TESTS = {"artifacts", "__pycache__", "__snapshots__"}


def existing_test_files() -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for tree in TEST_TREES:
        for folder, dirs, files in os.walk(tree):
            dirs[:] = [d for d in dirs if d not in NOT_TESTS]
            for name in files:
                if name.startswith("test_") and name.endswith(".py"):
                    found.setdefault(name, []).append(Path(folder) / name)
    return found


@functools.cache
def functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def references(doc: str) -> list[tuple[str, str | None, bool]]:
    return [(m[1], m[2], bool(m[3])) for m in REFERENCE.finditer((ROOT / "docs" / doc).read_text())]


@pytest.mark.parametrize("doc", ["local-fidelity.md", "reliability.md", "security.md"])
def test_every_test_the_docs_name_exists(doc):
    files = existing_test_files()
    missing = []
    for file, name, abbreviated in references(doc):
        candidates = [ROOT / file] if "/" in file else files.get(file, [])
        candidates = [path for path in candidates if path.exists()]
        if not candidates:
            missing.append(file)
        elif name and not any(
            f == name or (abbreviated and f.startswith(name)) for path in candidates for f in functions(path)
        ):
            missing.append(f"{file}::{name}")
    assert missing == []


def test_every_bare_test_name_in_the_fidelity_tables_exists():
    names = {f for paths in existing_test_files().values() for path in paths for f in functions(path)}
    text = (ROOT / "docs" / "local-fidelity.md").read_text()
    missing = [
        m[1]
        for m in BARE.finditer(text)
        if not any(f == m[1] or (m[2] and f.startswith(m[1])) for f in names)
    ]
    assert missing == []


def test_the_reference_pattern_reads_what_the_tables_write():
    """The pattern itself, so a format it misses cannot make the tests above pass vacuously."""
    assert references("local-fidelity.md")
    cell = (
        "`tests/e2e/test_documented_commands.py::test_lab_scenario_figures`, `test_x.py::test_y...`, "
        "`embedded_aws/tests/test_sqs/test_z.py`"
    )
    assert [(m[1], m[2], bool(m[3])) for m in REFERENCE.finditer(cell)] == [
        ("tests/e2e/test_documented_commands.py", "test_lab_scenario_figures", False),
        ("test_x.py", "test_y", True),
        ("embedded_aws/tests/test_sqs/test_z.py", None, False),
    ]


def test_every_shell_block_says_which_test_runs_it():
    """Each ```sh block of the README and docs/ is run as written by a test that exists, or says
    why no test can run it: a command a user copies cannot break unnoticed."""
    from tests.documented import all_blocks

    found = all_blocks()
    assert len(found) >= 6
    unaccounted = [
        (b.document, b.line)
        for b in found
        if not (b.runner or (b.marker or "").startswith("not run by the tests: "))
    ]
    assert unaccounted == []
    missing = [(b.document, b.line, b.runner) for b in found if b.runner and not (ROOT / b.runner).is_file()]
    assert missing == []
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    not_in_ci = [c for b in found if b.runner == ".ci/run" for c in b.bare_commands if c not in ci]
    assert not_in_ci == []
    assert [b.document for b in found if b.runner == ".ci/run"] == ["README.md"]


def test_every_feature_flag_turned_off_is_explained():
    """A feature flag cdk.json sets to false (against its recommended value) has its row, with a
    reason, in docs/feature-flags.md."""
    import json

    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    off = sorted(key for key, value in context.items() if key.startswith("@") and value is False)
    rows = re.findall(
        r"^\| `(@[^`]+)` \| `false` \| (.{40,}) \|$",
        (ROOT / "docs" / "feature-flags.md").read_text(),
        re.MULTILINE,
    )
    assert off == sorted(name for name, _ in rows)
