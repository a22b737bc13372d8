"""The layers of the tree (STYLE.md): arrows point down and there are no import circles.
`stacks` and `lambda` use nothing of ours beyond themselves; `ops` uses only `stacks.config`;
`local` may use `ops` and `stacks`; nothing imports `bench` or `tests`."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Each package and the folder its top level lives in (the embedded AWS is a distribution of its own).
SOURCES = {"stacks": ROOT, "ops": ROOT, "local": ROOT, "bench": ROOT, "embedded_aws": ROOT / "embedded_aws" / "src"}
PACKAGES = tuple(SOURCES)
OURS = (*PACKAGES, "app", "tests")


def module_name(path: Path) -> str:
    base = ROOT if path.parent == ROOT else SOURCES[path.relative_to(ROOT).parts[0]]
    if path.is_relative_to(ROOT / "embedded_aws" / "src"):
        base = ROOT / "embedded_aws" / "src"
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module of ours that `path` imports, at any depth of the file (lazy imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] in OURS)
    return found


def graph() -> dict[str, set[str]]:
    files = [ROOT / "app.py", *(p for package, base in SOURCES.items() for p in (base / package).rglob("*.py"))]
    modules = {module_name(path): path for path in files}
    edges = {}
    for name, path in modules.items():
        # `from ops import observe` names a module; `from ops.aws import Clients` names a class.
        edges[name] = {target if target in modules else target.rsplit(".", 1)[0] for target in imports_of(path)}
        edges[name] = {target for target in edges[name] if target in modules and target != name}
    return edges


def test_each_layer_imports_only_what_is_below_it():
    allowed = {
        "stacks": ("stacks",),
        "ops": ("ops", "stacks.config", "stacks.lambda_code", "embedded_aws.server.guard"),
        "embedded_aws": ("embedded_aws",),
        "local": ("local", "embedded_aws", "ops", "stacks"),
        "bench": ("bench", "local", "embedded_aws", "ops", "stacks"),
        "app": ("stacks",),
    }
    wrong = sorted(
        (name, target) for name, targets in graph().items() for target in targets
        if not any(target == prefix or target.startswith(prefix + ".") for prefix in allowed[name.split(".")[0]])
    )
    assert wrong == []


def test_lambda_code_imports_nothing_of_ours():
    wrong = {str(path.relative_to(ROOT)): imports_of(path) for path in (ROOT / "lambda").rglob("*.py") if imports_of(path)}
    assert wrong == {}


def test_there_are_no_import_circles():
    edges = graph()
    circles = []

    def visit(node: str, path: list[str]) -> None:
        for target in sorted(edges.get(node, ())):
            if target in path:
                circles.append(path[path.index(target):] + [target])
            elif len(path) < 12:
                visit(target, path + [target])

    for start in sorted(edges):
        visit(start, [start])
    assert circles == []
