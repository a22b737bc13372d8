"""The metric math the local CloudWatch evaluates for alarms: which expressions, and DIFF/RATE
over a time series that holds only the periods with data."""

from __future__ import annotations

import pytest

from embedded_aws.services.cloudwatch.metric_math import Expression, apply, parse


@pytest.mark.parametrize(
    "text,parsed",
    [
        ("DIFF(depth)", Expression("DIFF", "depth")),
        (" RATE( m1 ) ", Expression("RATE", "m1")),
        ("m1", Expression(None, "m1")),
        ("SUM([m1, m2])", None),
        ("m1 + m2", None),
        ("FILL(m1, 0)", None),
        ("", None),
    ],
)
def test_which_expressions_are_evaluated(text, parsed):
    assert parse(text) == parsed


def test_diff_compares_each_datapoint_with_the_previous_datapoint():
    """[1, 1, 2, None, 4] -> [None, 0, 1, None, 2]: the first value has no predecessor, a
    period without data is skipped (CloudWatch's series holds only datapoints)."""
    assert apply(Expression("DIFF", "d"), [1.0, 1.0, 2.0, None, 4.0], 60) == [None, 0.0, 1.0, None, 2.0]


def test_rate_is_the_change_per_second():
    assert apply(Expression("RATE", "d"), [0.0, 60.0, 30.0], 60) == [None, 1.0, -0.5]


def test_a_bare_id_is_the_metric_itself():
    assert apply(Expression(None, "d"), [3.0, None], 60) == [3.0, None]
