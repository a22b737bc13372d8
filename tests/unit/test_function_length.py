"""No function outside the tests is over 100 lines: a longer one holds several concerns, and each
deserves a name (issue 45). Counted from `def` to its last line, docstring and comments included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("app.py", "stacks", "ops", "local", "bench", "lambda", "examples", "lib/src", "embedded_aws/src")
LIMIT = 100


def long_functions(paths: list[Path], root: Path = ROOT) -> list[str]:
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LIMIT:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return found


def source_files() -> list[Path]:
    files = []
    for name in SOURCES:
        where = ROOT / name
        files += [where] if where.is_file() else sorted(where.rglob("*.py"))
    return [path for path in files if "__pycache__" not in path.parts and "cdk.out" not in path.parts]


def test_no_function_outside_the_tests_is_over_a_hundred_lines():
    assert long_functions(source_files()) == []


def test_the_count_finds_a_long_function(tmp_path):
    """Not vacuous: a 101-line function is found, a 100-line one is not."""
    body = "\n".join(f"    x{i} = {i}" for i in range(99))
    (tmp_path / "long.py").write_text(f"def long():\n{body}\n    return 0\n")
    (tmp_path / "short.py").write_text(f"def short():\n{body}\n")
    found = long_functions([tmp_path / "long.py", tmp_path / "short.py"], root=tmp_path)
    assert found == ["long.py:1 long (101 lines)"]
