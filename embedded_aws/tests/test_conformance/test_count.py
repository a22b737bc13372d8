"""The count of recorded cases at the top of docs/local-fidelity.md is the suite's: every case of
recordings.py is held against the local answer by exactly one test here (each passes only while
its case matches, or differs as declared), and each difference has its row in the doc."""

from __future__ import annotations

import ast
from pathlib import Path

from test_conformance.recordings import CASES

HERE = Path(__file__).resolve().parent
DOC = HERE.parents[2] / "docs" / "local-fidelity.md"


def literals_by_module() -> dict[str, set[str]]:
    return {
        path.name: {
            node.value
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        for path in HERE.glob("test_*.py")
        if path.name != Path(__file__).name
    }


def test_every_case_is_checked_by_exactly_one_test_module():
    """No case is counted without a test that holds the local answer to it, and none twice."""
    modules = literals_by_module()
    owners = {case: [name for name, literals in modules.items() if case in literals] for case in CASES}
    assert {case: names for case, names in owners.items() if len(names) != 1} == {}


def test_the_doc_states_the_count():
    """The line at the top of docs/local-fidelity.md is the cases' count."""
    differing = [case for case in CASES.values() if case.differs]
    line = (
        f"**Recorded on AWS**: {len(CASES)} cases taken from LocalStack's recordings of real AWS responses, "
        f"{len(CASES) - len(differing)} match, {len(differing)} differ on purpose"
    )
    assert line in DOC.read_text()


def test_every_difference_has_its_row_and_reason():
    """A differing case says why, and exactly one row of the page's data declares it (marked
    *recorded* on the page)."""
    import fidelity

    declared = [row.case for section in fidelity.sections() for row in section.rows if row.case]
    assert [
        case.id for case in CASES.values() if case.differs and (declared.count(case.id) != 1 or not case.why)
    ] == []
