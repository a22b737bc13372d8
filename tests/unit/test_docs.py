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


LIB = ROOT / "lib" / "src"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
EMBEDDED = ROOT / "embedded_aws" / "src" / "embedded_aws"
# Top-level folders tools write (.gitignore): not rooms of the tree.
GENERATED = {"node_modules", "__pycache__", "cdk.out"}
PATH_IN_TEXT = re.compile(r"(?<![\w/.])(\w+\.py\b|\w+/(?![\w<]))")


def architecture_rows() -> list[list[str]]:
    """The cells of the architecture table's rows that name rooms (`app.py`, `stacks/`)."""
    rows = []
    for line in ARCHITECTURE.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows.append(cells)
    return rows


def embedded_tree() -> list[tuple[Path, str]]:
    """(folder, text) for each line of the page's drawing of the embedded AWS's folder: the folder
    a line's entry sits in (or is), and the line, so the files it names can be looked up there."""
    text = ARCHITECTURE.read_text()
    block = text[text.index("```\nembedded_aws/\n") + 4 :]
    block = block[: block.index("```")]
    lines: list[tuple[Path, str]] = []
    parents, description_column = [(-1, ROOT)], 0
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip())
        if indent >= description_column > 0:  # a description carried over from the line above
            lines.append((lines[-1][0], line))
            continue
        name = line.split()[0].rstrip(",")
        while parents[-1][0] >= indent:
            parents.pop()
        folder = parents[-1][1]
        rest = line[indent + len(name) :]
        description_column = indent + len(name) + len(rest) - len(rest.lstrip()) if rest.strip() else 0
        if name.endswith("/"):  # `services/<service>/` stands for the folders in services/
            folder = folder / (name[: name.index("<")].rsplit("/", 1)[0] if "<" in name else name)
            parents.append((indent, folder))
        lines.append((folder, line))
    return lines


def test_the_architecture_page_names_every_top_level_folder():
    """Every folder at the top of the tree is on docs/architecture.md as `name/`: a room added or
    renamed cannot go unmentioned."""
    folders = [
        path.name
        for path in ROOT.iterdir()
        if path.is_dir()
        and not path.name.startswith(".")
        and path.name not in GENERATED
        and not path.name.startswith("cdk.out")
    ]
    text = ARCHITECTURE.read_text()
    assert len(folders) >= 7
    assert sorted(name for name in folders if f"`{name}/`" not in text) == []


def test_every_file_and_module_the_architecture_table_names_exists():
    """The table's rooms, the files and folders it names inside them, and the modules of its "may
    import" column are all in the tree."""
    missing = []
    for rooms, what, may_import in architecture_rows():
        names = re.findall(r"`([\w./]+)`", rooms)
        missing += [name for name in names if not (ROOT / name).exists() and not (LIB / name).exists()]
        # A room is a folder of the tree, or a package of the distribution (lib/src/<package>).
        folder = next((name for name in names if name.endswith("/")), None)
        base = ROOT / folder if folder else LIB / names[0] if (LIB / names[0]).is_dir() else ROOT
        for name in re.findall(r"`([\w./]+)`", what):
            if ("/" in name or name.endswith(".py")) and not (
                (base / name).exists() or (ROOT / name).exists()
            ):
                missing.append(f"{base.name}/{name}")
        for module in re.findall(r"`([\w.]+)`", may_import):
            path = module.replace(".", "/")
            roots = (ROOT, EMBEDDED.parent, LIB)
            if not any((r / f"{path}.py").exists() or (r / path / "__init__.py").exists() for r in roots):
                missing.append(module)
    assert len(architecture_rows()) >= 6
    assert missing == []


def test_the_drawing_of_the_embedded_aws_is_true_to_its_folder():
    """Every file and folder the drawing names exists where it draws it; every module and folder
    at the top of the package, every service and every test folder beside it is drawn."""
    tree = embedded_tree()
    missing = [str(folder.relative_to(ROOT)) for folder, _ in tree if not folder.is_dir()]
    missing += [
        f"{folder.relative_to(ROOT)}: {name}"
        for folder, line in tree
        for name in PATH_IN_TEXT.findall(line)
        if not ((folder / name).exists() or (folder.parent / name).exists())
    ]
    assert missing == []
    drawn = " ".join(line for _, line in tree)
    top = [
        p.name + ("/" if p.is_dir() else "")
        for p in EMBEDDED.iterdir()
        if p.name not in {"__init__.py", "__pycache__"}
    ]
    assert sorted(name for name in top if not re.search(rf"(?<![\w/]){re.escape(name)}", drawn)) == []
    services_line = next(line for folder, line in tree if folder == EMBEDDED / "services")
    services = [p.name for p in (EMBEDDED / "services").iterdir() if (p / "__init__.py").exists()]
    assert sorted(name for name in services if not re.search(rf"\b{name}\b", services_line)) == []


def test_the_architecture_page_lists_every_test_folder_and_the_whole_public_surface():
    """The product's test folders, the embedded AWS's test folders and every name its
    `__init__.py` makes public (the fault functions among them) are on the page."""
    import embedded_aws

    text = ARCHITECTURE.read_text()
    product = [p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name not in NOT_TESTS]
    embedded = [
        p.name
        for p in (ROOT / "embedded_aws" / "tests").iterdir()
        if p.name.startswith("test_") and p.is_dir()
    ]
    assert len(product) >= 4 and len(embedded) >= 8
    assert [name for name in product if f"`{name}`" not in text] == []
    assert [name for name in embedded if f"`{name}/`" not in text] == []
    assert [name for name in embedded_aws.__all__ if f"`{name}`" not in text] == []


def test_every_page_opens_with_what_it_answers():
    """A reader finds out what a page is for in its first lines: after its title, every page of
    docs/ opens with a paragraph, never a table, a heading, a code block or a comment."""
    wrong = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        lines = page.read_text().splitlines()
        assert lines[0].startswith("# "), f"{page.name} has no title"
        first = next(line for line in lines[1:] if line.strip())
        if first.startswith(("|", "#", "```", "<!--", "-", "*")):
            wrong.append(f"{page.name}: {first[:60]}")
    assert wrong == []


def test_the_readme_stays_under_ten_kilobytes():
    """The README is the front door: what it is, the two commands, and links (issue 44's goal)."""
    assert len((ROOT / "README.md").read_bytes()) <= 10_000


def test_readme_and_docs_stay_within_what_a_person_reads():
    """README plus docs/ at most 120 KB in all (issue 44): generated reference included, history
    left to the commits."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    sizes = {page.name: len(page.read_bytes()) for page in pages}
    assert sum(sizes.values()) <= 120_000, sorted(sizes.items(), key=lambda item: -item[1])


LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation but `-` and `_` dropped,
    spaces as `-`."""
    anchors = set()
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_every_link_between_the_pages_reaches_its_page_and_heading():
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in LINK.findall(page.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []
