"""The layers of the tree (docs/architecture.md): each package imports only what the page's table
allows it, and there are no import circles. The rules are read from the page, so the picture
and the code cannot drift apart; nothing imports `bench` or `tests`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# Where each package's top level lives (the embedded AWS is a distribution of its own).
SOURCES = {
    "stacks": ROOT,
    "ops": ROOT,
    "local": ROOT,
    "bench": ROOT,
    "embedded_aws": ROOT / "embedded_aws" / "src",
}
OURS = (*SOURCES, "app", "tests")


def allowed_imports() -> dict[str, tuple[str, ...]]:
    """{package: module prefixes it may import}, from the rows of the page's table whose first
    cell names packages (`app.py`, `stacks/`) and whose last names modules (`ops`, `stacks.config`)."""
    rules = {}
    for line in ARCHITECTURE.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        rooms = [name.removesuffix(".py").rstrip("/") for name in re.findall(r"`([\w./]+)`", cells[0])]
        targets = tuple(re.findall(r"`([\w.]+)`", cells[2]))
        for room in rooms:
            rules[room] = targets
    return rules


def module_name(path: Path) -> str:
    base = next((base for package, base in SOURCES.items() if path.is_relative_to(base / package)), ROOT)
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
    files = [
        ROOT / "app.py",
        *(p for package, base in SOURCES.items() for p in (base / package).rglob("*.py")),
    ]
    modules = {module_name(path): path for path in files}
    edges = {}
    for name, path in modules.items():
        # `from ops import observe` names a module; `from ops.aws import Clients` names a class.
        edges[name] = {
            target if target in modules else target.rsplit(".", 1)[0] for target in imports_of(path)
        }
        edges[name] = {target for target in edges[name] if target in modules and target != name}
    return edges


def test_the_architecture_page_gives_a_rule_for_every_package():
    assert set(allowed_imports()) >= {*SOURCES, "app", "lambda"}
    assert allowed_imports()["embedded_aws"] == ("embedded_aws",)


def test_each_layer_imports_only_what_the_architecture_page_allows():
    allowed = allowed_imports()
    wrong = sorted(
        (name, target)
        for name, targets in graph().items()
        for target in targets
        if not any(
            target == prefix or target.startswith(prefix + ".") for prefix in allowed[name.split(".")[0]]
        )
    )
    assert wrong == []


def test_lambda_code_imports_nothing_of_ours():
    wrong = {
        str(path.relative_to(ROOT)): imports_of(path)
        for path in (ROOT / "lambda").rglob("*.py")
        if imports_of(path)
    }
    assert wrong == {}


def test_there_are_no_import_circles():
    edges = graph()
    circles = []

    def visit(node: str, path: list[str]) -> None:
        for target in sorted(edges.get(node, ())):
            if target in path:
                circles.append(path[path.index(target) :] + [target])
            elif len(path) < 12:
                visit(target, path + [target])

    for start in sorted(edges):
        visit(start, [start])
    assert circles == []
