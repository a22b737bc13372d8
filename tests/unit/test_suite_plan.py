"""The suite's scheduling plan holds for the modules added later: every module that synthesizes the
app in its own process is marked `jsii`, so the scheduler (conftest.py) runs them all in one
worker and jsii starts once. An unmarked one would start jsii in a second worker: nothing would
fail, the quick loop would just be seconds slower. The end-to-end modules, spread over every
worker, deploy assemblies the run's synth service writes (tests/synth_service.py): one of them
synthesizing in its own process would start jsii in that worker, as silently."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SYNTH_CALLS = {"synth_stack", "synth_assembly"}
SYNTH_FIXTURES = {"synthesized", "template"}


def synthesizes(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("aws_cdk"):
            return True
        if isinstance(node, ast.Import) and any(alias.name.startswith("aws_cdk") for alias in node.names):
            return True
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in SYNTH_CALLS:
            return True
        if (
            isinstance(node, ast.FunctionDef)
            and (node.name.startswith("test_") or node.decorator_list)
            and {arg.arg for arg in node.args.args} & SYNTH_FIXTURES
        ):
            return True  # a test or fixture that takes the session's synthesized stack
    return False


def marked_jsii(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            return any(
                isinstance(mark, ast.Attribute) and mark.attr == "jsii" for mark in ast.walk(node.value)
            )
    return False


def test_every_module_that_synthesizes_in_process_is_marked_jsii():
    modules = [
        path
        for folder in ("tests", "embedded_aws/tests")
        for path in sorted((ROOT / folder).rglob("test_*.py"))
    ]
    synthesizing = {path.relative_to(ROOT).as_posix(): ast.parse(path.read_text()) for path in modules}
    synthesizing = {name: tree for name, tree in synthesizing.items() if synthesizes(tree)}
    assert len(synthesizing) >= 6  # the five infra modules and the context synth, at least
    assert [name for name, tree in synthesizing.items() if not marked_jsii(tree)] == []


def test_collecting_the_suite_loads_no_aws_cdk(loaded_by_collection):
    """Every worker collects every module: aws_cdk loaded at collection costs each worker about 0.7
    CPU-s and a jsii process, although one worker runs the infra tests (tests/infra/assertions.py
    loads it on first use). What this process's collection loaded: in `make test` and `make
    quick`, that is every module."""
    assert loaded_by_collection == []


def test_the_check_sees_a_synthesizing_module_without_the_mark():
    unmarked = ast.parse("from tests.conftest import synth_stack\n\ndef test_x():\n    synth_stack()\n")
    marked = ast.parse("import pytest\n\npytestmark = [pytest.mark.slow, pytest.mark.jsii]\n")
    assert synthesizes(unmarked) and not marked_jsii(unmarked)
    assert marked_jsii(marked) and not synthesizes(ast.parse("def test_y(tmp_path):\n    pass\n"))
    # A helper's parameter named like the fixture is not the fixture.
    assert not synthesizes(ast.parse("def body(template):\n    return template\n"))
    assert synthesizes(ast.parse("def test_z(template):\n    pass\n"))
