"""docs/local-fidelity.md is rendered from the rows kept beside these tests (`*/fidelity*.toml`):
the page and the data cannot disagree, and every row keeps the page's rules (one sentence per
rule, a source, what the local run does, a test that exists)."""

from __future__ import annotations

import re

import fidelity


def test_the_page_is_the_rendered_data():
    assert fidelity.PAGE.read_text() == fidelity.render(), (
        "docs/local-fidelity.md differs from embedded_aws/tests/*/fidelity*.toml: "
        "run `python embedded_aws/tests/fidelity.py`"
    )


def test_every_row_keeps_the_rules():
    assert fidelity.problems() == []


def test_the_counts_at_the_top_are_the_rows():
    rows = [row for section in fidelity.sections() for row in section.rows]
    differing = sum(row.differs for row in rows)
    match = re.search(
        r"\*\*(\d+) rules\*\*: (\d+) followed as AWS documents them, (\d+) differ", fidelity.render()
    )
    assert match is not None
    assert tuple(map(int, match.groups())) == (len(rows), len(rows) - differing, differing)
    assert differing > 0 and len(rows) > differing


def test_the_checks_catch_a_row_that_breaks_them():
    """The rules above are not vacuous: two sentences, a missing test, an unknown case each fail."""
    good = fidelity.Row("AWS does one thing.", "a page", "The same.", False, ("test_x.py",))
    assert good.problems() == []
    two = fidelity.Row("AWS does one thing. Then another.", "a page", "The same.", False, ("test_x.py",))
    untested = fidelity.Row("AWS does one thing.", "a page", "The same.", False, ())
    unknown = fidelity.Row("AWS does one thing.", "a page", "x", True, ("test_x.py",), case="no.such-case")
    assert ["one sentence" in p for p in two.problems()] == [True]
    assert ["0 tests" in p for p in untested.problems()] == [True]
    assert ["case 'no.such-case'" in p for p in unknown.problems()] == [True]
