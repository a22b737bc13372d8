"""The metric math the local CloudWatch evaluates for alarms: which expressions, references to
other expressions, arithmetic, and DIFF/RATE over a time series that holds only the periods
with data."""

from __future__ import annotations

import pytest

from embedded_aws.services.cloudwatch.metric_math import (
    Binary,
    Call,
    Node,
    Number,
    Ref,
    evaluate,
    extra_periods,
    metric_ids,
    parse,
    resolve,
)


def supported(text: str) -> Node:
    """`text` parsed, for the expressions these tests know are supported."""
    node = parse(text)
    assert node is not None, text
    return node


@pytest.mark.parametrize(
    "text,parsed",
    [
        ("DIFF(depth)", Call("DIFF", Ref("depth"))),
        (" RATE( m1 ) ", Call("RATE", Ref("m1"))),
        ("m1", Ref("m1")),
        ("visible + invisible", Binary("+", Ref("visible"), Ref("invisible"))),
        ("m1 + m2 * 2", Binary("+", Ref("m1"), Binary("*", Ref("m2"), Number(2.0)))),
        ("(m1 + m2) / 60", Binary("/", Binary("+", Ref("m1"), Ref("m2")), Number(60.0))),
        ("DIFF(m1 + m2)", Call("DIFF", Binary("+", Ref("m1"), Ref("m2")))),
        ("SUM([m1, m2])", None),
        ("FILL(m1, 0)", None),
        ("m1 +", None),
        ("(m1", None),
        ("M1", None),  # an id starts with a lower-case letter
        ("", None),
    ],
)
def test_which_expressions_are_evaluated(text, parsed):
    assert parse(text) == parsed


def test_references_to_other_expressions_resolve_to_metric_queries():
    expressions = {"total": "visible + invisible", "new": "DIFF(total)", "loop": "loop + 1", "odd": "SUM(x)"}
    resolved = resolve(supported("DIFF(total)"), expressions, {"visible", "invisible"})
    assert resolved == Call("DIFF", Binary("+", Ref("visible"), Ref("invisible")))
    assert metric_ids(resolved) == {"visible", "invisible"} and extra_periods(resolved) == 1
    assert resolve(supported("loop"), expressions, set()) is None  # circular
    assert resolve(supported("odd"), expressions, set()) is None  # unsupported
    assert resolve(supported("missing"), expressions, set()) is None


def test_diff_compares_each_datapoint_with_the_previous_datapoint():
    """[1, 1, 2, None, 4] -> [None, 0, 1, None, 2]: the first value has no predecessor, a
    period without data is skipped (CloudWatch's series holds only datapoints)."""
    assert evaluate(supported("DIFF(d)"), {"d": [1.0, 1.0, 2.0, None, 4.0]}, 60, 5) == [
        None,
        0.0,
        1.0,
        None,
        2.0,
    ]


def test_rate_is_the_change_per_second():
    assert evaluate(supported("RATE(d)"), {"d": [0.0, 60.0, 30.0]}, 60, 3) == [None, 1.0, -0.5]


def test_arithmetic_is_computed_where_both_series_have_data():
    series = {"a": [1.0, 2.0, None, 4.0], "b": [10.0, None, 30.0, 0.0]}
    assert evaluate(supported("a + b"), series, 60, 4) == [11.0, None, None, 4.0]
    assert evaluate(supported("b / a"), series, 60, 4) == [10.0, None, None, 0.0]
    assert evaluate(supported("a / b"), series, 60, 4) == [
        0.1,
        None,
        None,
        None,
    ]  # no value for a division by zero
    assert evaluate(supported("2 * a - 1"), series, 60, 4) == [1.0, 3.0, None, 7.0]


def test_a_depth_held_by_a_reader_is_no_change_in_the_total():
    """The DLQ alarms' case: a listing moves 3 messages from visible to in flight and back; the
    total stays 3, so its DIFF is 0 throughout, while the DIFF of the visible count alone
    would read the release as three new dead letters."""
    series = {"visible": [3.0, 0.0, 3.0], "invisible": [0.0, 3.0, 0.0]}
    assert evaluate(supported("DIFF(visible + invisible)"), series, 60, 3) == [None, 0.0, 0.0]
    assert evaluate(supported("DIFF(visible)"), series, 60, 3) == [None, -3.0, 3.0]
