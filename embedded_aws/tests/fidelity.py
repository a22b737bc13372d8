"""docs/local-fidelity.md, rendered from the rules kept beside the tests that show them.

Each `fidelity.toml` under embedded_aws/tests/ holds one section of the page: a title, an order,
an optional short intro, and its rows. A row is one rule this stack depends on:

    [[row]]
    rule = "One sentence: what AWS does."            # one sentence, at most RULE_LIMIT characters
    source = "SQS API reference, DeleteMessage"      # the AWS page, or the recording
    local = "What the local run does, and why a difference stays."
    differs = true                                   # the local run does not do what AWS does
    tests = ["embedded_aws/tests/test_sqs/test_quotas.py::test_x"]
    case = "sns.envelope"                            # optional: the recorded case it declares

`python embedded_aws/tests/fidelity.py` rewrites the page; test_fidelity_page.py fails when the
page and the data disagree, or a row breaks the limits below.
"""

from __future__ import annotations

import functools
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PAGE = ROOT / "docs" / "local-fidelity.md"
RULE_LIMIT = 220
LOCAL_LIMIT = 300
SOURCE_LIMIT = 140
INTRO_LIMIT = 500
TESTS_LIMIT = 2
SENTENCE_BREAK = re.compile(r"[.;!?] +[A-Z(`]")

if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_conformance.recordings import CASES

TEST_TREES = (ROOT / "tests", HERE)
TEST_FUNCTION = re.compile(r"^\s*def (test_\w+)\(", re.MULTILINE)


@functools.cache
def unique_test_names() -> frozenset[str]:
    """The test functions whose name only one test file of the tree holds."""
    files: dict[str, set[Path]] = {}
    for tree in TEST_TREES:
        for path in tree.rglob("test_*.py"):
            for name in TEST_FUNCTION.findall(path.read_text()):
                files.setdefault(name, set()).add(path)
    return frozenset(name for name, where in files.items() if len(where) == 1)


@dataclass(frozen=True)
class Row:
    rule: str
    source: str
    local: str
    differs: bool
    tests: tuple[str, ...]
    case: str = ""

    def problems(self) -> list[str]:
        found = []
        if not self.rule.endswith(".") or SENTENCE_BREAK.search(self.rule):
            found.append("the rule is not one sentence ending in a full stop")
        for name, text, limit in (
            ("rule", self.rule, RULE_LIMIT),
            ("local", self.local, LOCAL_LIMIT),
            ("source", self.source, SOURCE_LIMIT),
        ):
            if not text.strip():
                found.append(f"{name} is empty")
            elif len(text) > limit:
                found.append(f"{name} has {len(text)} characters, over {limit}")
        if "|" in self.rule + self.local + self.source:
            found.append("a cell holds '|'")
        if not 1 <= len(self.tests) <= TESTS_LIMIT:
            found.append(f"{len(self.tests)} tests: name the one or two that show it best (a file for more)")
        if self.case and (self.case not in CASES or not CASES[self.case].differs or not self.differs):
            found.append(f"case {self.case!r} is not a recorded case that differs")
        return [f"{self.rule[:60]!r}: {problem}" for problem in found]

    def markdown(self) -> str:
        source = f"{self.source}; *recorded*" if self.case else self.source
        local = f"**differs**: {self.local}" if self.differs else self.local
        return f"| {self.rule.removesuffix('.')} ({source}). | {local} | {self.shown_by()} |"

    def shown_by(self) -> str:
        """The tests: a function by its name alone where no other test has it (`pytest -k` and grep
        find it), else with its file; a file where the row names a whole file."""
        unique = unique_test_names()
        cells = []
        for test in self.tests:
            name = test.partition("::")[2]
            cells.append(f"`{name}`" if name in unique else f"`{test}`")
        return ", ".join(cells)


@dataclass(frozen=True)
class Section:
    path: Path
    title: str
    order: int
    intro: str
    rows: tuple[Row, ...]

    def markdown(self) -> str:
        parts = [f"## {self.title}", ""]
        if self.intro:
            parts += [self.intro.strip(), ""]
        parts += ["| AWS's rule (source) | the local run | shown by |", "|---|---|---|"]
        parts += [row.markdown() for row in self.rows]
        return "\n".join(parts)


def sections() -> list[Section]:
    found = []
    for path in sorted(HERE.glob("*/fidelity*.toml")):
        data = tomllib.loads(path.read_text())
        rows = tuple(
            Row(
                rule=row["rule"].strip(),
                source=row["source"].strip(),
                local=row["local"].strip(),
                differs=bool(row.get("differs", False)),
                tests=tuple(row["tests"]),
                case=row.get("case", ""),
            )
            for row in data.get("row", [])
        )
        found.append(Section(path, data["title"], int(data["order"]), data.get("intro", ""), rows))
    return sorted(found, key=lambda section: (section.order, section.title))


def problems() -> list[str]:
    found = []
    for section in sections():
        where = section.path.relative_to(ROOT)
        if len(section.intro) > INTRO_LIMIT:
            found.append(f"{where}: the intro has {len(section.intro)} characters, over {INTRO_LIMIT}")
        found += [f"{where}: {problem}" for row in section.rows for problem in row.problems()]
    declared = [row.case for section in sections() for row in section.rows if row.case]
    for case in CASES.values():
        if case.differs and declared.count(case.id) != 1:
            found.append(
                f"recorded case {case.id!r} differs and is declared by {declared.count(case.id)} rows"
            )
    return found


def render() -> str:
    every = sections()
    rows = [row for section in every for row in section.rows]
    differing = [row for row in rows if row.differs]
    cases_differing = [case for case in CASES.values() if case.differs]
    head = f"""# Local fidelity: where the local run follows AWS, and where it does not

For anyone trusting a local result: each AWS rule this stack depends on, what the local run (moto,
patched, and our Lambda host) does, and the test that shows it. **{len(rows)} rules**: {len(rows) - len(differing)} followed as AWS documents them, {len(differing)} differ
(marked **differs**, with the reason). **Recorded on AWS**: {len(CASES)} cases taken from LocalStack's recordings of real AWS responses, {len(CASES) - len(cases_differing)} match, {len(cases_differing)} differ on purpose
(marked *recorded*). Rendered from `embedded_aws/tests/*/fidelity*.toml` by
`python embedded_aws/tests/fidelity.py`.
"""
    return "\n\n".join([head.rstrip()] + [section.markdown() for section in every]) + "\n"


if __name__ == "__main__":
    issues = problems()
    if "--check" in sys.argv:
        for section in sections():
            size = len(section.markdown().encode())
            print(f"{section.path.relative_to(ROOT)}: {len(section.rows)} rows, {size:,} bytes")
        print("\n".join(issues) or "no problems")
        sys.exit(1 if issues else 0)
    if issues:
        sys.exit("\n".join(issues))
    PAGE.write_text(render())
    print(f"wrote {PAGE.relative_to(ROOT)} ({len(PAGE.read_bytes()):,} bytes)")
