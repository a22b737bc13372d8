"""The layers of the tree (docs/architecture.md): each package imports only what the page's table
allows it, and there are no import circles. The rules are read from the page, so the picture
and the code cannot drift apart; nothing imports `bench` or `tests`."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import embedded_aws

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# Where each package's top level lives (the embedded AWS is a distribution of its own).
SOURCES = {
    "stacks": ROOT,
    "ops": ROOT,
    "local": ROOT,
    "bench": ROOT,
    "embedded_aws": ROOT / "embedded_aws" / "src",
    "idempotent_consumer": ROOT / "lib" / "src",
    "guarded_consumer": ROOT / "lib" / "src",
}
OURS = (*SOURCES, "app", "tests")
# Everything outside the embedded AWS, which may use only what `embedded_aws/__init__.py` names.
OUTSIDE_EMBEDDED_AWS = (
    "app.py",
    "conftest.py",
    "stacks",
    "ops",
    "local",
    "bench",
    "lambda",
    "tests",
    "lib",
    "examples",
)
# Rewritten while the suite runs (the nag test replaces tests/artifacts): never walked.
NOT_SOURCES = {"artifacts", "__pycache__", "__snapshots__", "node_modules"}
# {module: (embedded_aws modules it may import past the public surface, why)}.
PAST_THE_SURFACE = {
    "bench.handler_bench": (
        ("embedded_aws.compat.patches", "embedded_aws.compat.registry"),
        "its recorder of DynamoDB calls is a change to moto, so it is declared to the patch registry",
    ),
    "ops.guard": (
        ("embedded_aws.server.guard",),
        "the loopback rules the live view shares with the emulator's front door (docs/architecture.md, ops row)",
    ),
    "tests.infra.test_dead_letter_expiry_warning": (
        ("embedded_aws.services.cloudwatch", "embedded_aws.services.sqs"),
        "days of DLQ samples cannot be waited for: the emulator's pure SQS and CloudWatch rules run on them",
    ),
}


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
    found: set[str] = set()
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
    assert set(allowed_imports()) >= {*SOURCES, "app", "lambda", "examples"}
    assert allowed_imports()["embedded_aws"] == ("embedded_aws",)
    assert allowed_imports()["guarded_consumer"] == ("guarded_consumer",)


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


def test_function_code_and_the_example_import_only_the_distribution():
    """Code deployed as a function (lambda/, the example's handler) imports of ours only the
    handler library; the example app only the distribution, as a team's would."""
    allowed = allowed_imports()
    wrong = {
        str(path.relative_to(ROOT)): found
        for room in ("lambda", "examples")
        for path in (ROOT / room).rglob("*.py")
        if (found := {t for t in imports_of(path) if t.split(".")[0] not in allowed[room]})
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


def past_the_surface(source: str) -> set[str]:
    """The embedded_aws modules and names `source` imports that its public surface does not name."""
    public = {"embedded_aws", *(f"embedded_aws.{name}" for name in embedded_aws.__all__)}
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = (
                [node.module]
                if node.module != "embedded_aws"
                else [f"embedded_aws.{a.name}" for a in node.names]
            )
        else:
            continue
        found.update(name for name in names if name.split(".")[0] == "embedded_aws" and name not in public)
    return found


def outside_sources() -> dict[str, Path]:
    """{module name: path} of every Python file outside embedded_aws/."""
    found = {}
    for top in OUTSIDE_EMBEDDED_AWS:
        if top.endswith(".py"):
            found[top.removesuffix(".py")] = ROOT / top
            continue
        for folder, dirs, files in os.walk(ROOT / top):
            dirs[:] = [d for d in dirs if d not in NOT_SOURCES]
            for name in files:
                if name.endswith(".py"):
                    path = Path(folder) / name
                    found[module_name(path)] = path
    return found


def test_nothing_outside_the_embedded_aws_imports_past_its_public_surface():
    """Product, ops, local driver, benchmarks and the product's tests import the embedded AWS only
    through what `embedded_aws/__init__.py` names, except the allow-listed modules (each with its
    reason); an allow-list entry no longer needed fails too, so the list cannot rot."""
    wrong, used = [], set()
    for name, path in sorted(outside_sources().items()):
        allowed = PAST_THE_SURFACE.get(name, ((), ""))[0]
        for target in sorted(past_the_surface(path.read_text())):
            if any(target == prefix or target.startswith(prefix + ".") for prefix in allowed):
                used.add(name)
            else:
                wrong.append((name, target))
    assert wrong == []
    assert used == set(PAST_THE_SURFACE)


def test_the_public_surface_check_reads_every_import_form():
    """The scanner itself, so a form it misses cannot make the test above pass vacuously."""
    source = (
        "from embedded_aws import ACCOUNT_ID, EmbeddedAWS\n"
        "import embedded_aws\n"
        "from embedded_aws.services.sqs.limits import IN_FLIGHT_TAG\n"
        "import embedded_aws.server.guard\n"
        "from embedded_aws import faults\n"
        "def lazy():\n"
        "    from embedded_aws.lambda_host import runtimes\n"
    )
    assert past_the_surface(source) == {
        "embedded_aws.services.sqs.limits",
        "embedded_aws.server.guard",
        "embedded_aws.faults",
        "embedded_aws.lambda_host",
    }
    assert {"local.aws_cli", "bench.dlq_redrive", "app", "tests.unit.test_layers"} <= set(outside_sources())
