"""The local CloudWatch's alarm rules, pure: how an alarm's state follows from its datapoints
(missing data, M out of N, comparisons), period statistics, the time scale, and the shapes of
what an alarm writes (StateReason, the SNS notification)."""

from __future__ import annotations

import json
from datetime import datetime
from types import SimpleNamespace

import pytest

from embedded_aws.services.cloudwatch.alarm_messages import notification, state_reason
from embedded_aws.services.cloudwatch.alarm_rules import (
    ALARM,
    INSUFFICIENT_DATA,
    OK,
    Rule,
    evaluate,
    statistic,
)
from embedded_aws.services.cloudwatch.clock import Clock, bucket_end
from embedded_aws.services.cloudwatch.evaluator import rule_of

X, O = 5.0, 0.0  # breaching, not breaching (threshold 1, >=)
_: float | None = None  # missing


def rule(
    treat_missing: str = "missing",
    n: int = 3,
    m: int | None = None,
    comparison: str = "GreaterThanOrEqualToThreshold",
    threshold: float = 1.0,
) -> Rule:
    return Rule(comparison, threshold, n, m or n, treat_missing)


# --- missing data: the examples of AWS's table (N = M = 3, an evaluation range of 5) ---------


@pytest.mark.parametrize(
    "points,expected",
    [
        ([O, _, _, _, _], {"missing": OK, "ignore": OK, "breaching": OK, "notBreaching": OK}),
        ([_, _, X, _, _], {"missing": ALARM, "ignore": None, "breaching": ALARM, "notBreaching": OK}),
        (
            [_, _, _, _, _],
            {"missing": INSUFFICIENT_DATA, "ignore": None, "breaching": ALARM, "notBreaching": OK},
        ),
        ([O, _, X, _, X], {"missing": OK, "ignore": OK, "breaching": OK, "notBreaching": OK}),
        ([X, X, O, _, O], {"missing": OK, "ignore": OK, "breaching": OK, "notBreaching": OK}),
    ],
)
def test_missing_data_follows_the_documented_table(points, expected):
    """With N real points the newest N decide whatever TreatMissingData says; with fewer, the
    setting fills the gaps; none at all is INSUFFICIENT_DATA for `missing`, no change for
    `ignore`; a premature alarm (oldest breaching point >= M periods old, nothing newer
    below the threshold) goes to ALARM for `missing` and keeps the state for `ignore`. `None`
    means the state is kept."""
    assert {how: evaluate(rule(how), points).state for how in expected} == expected


def test_more_real_points_than_n_only_the_newest_n_count():
    """Old breaching points beyond the newest N real ones no longer count."""
    assert evaluate(rule(n=3, m=1), [X, X, O, O, O]).state == OK
    assert evaluate(rule(n=3, m=1), [X, O, O, _, X]).state == ALARM


@pytest.mark.parametrize(
    "points,expected",
    [
        ([_, _, X, O, X], ALARM),  # 2 of the last 3, not consecutive
        ([_, _, X, O, O], OK),
        ([X, X, O, O, X], OK),  # only 1 of the newest 3
        ([_, X, _, O, X], ALARM),  # missing points are skipped: the newest 3 real ones are X O X
    ],
)
def test_m_out_of_n(points, expected):
    """DatapointsToAlarm M of EvaluationPeriods N: M breaching among the N decide ALARM."""
    assert evaluate(rule(n=3, m=2), points).state == expected


def test_breaching_fills_only_the_missing_points_needed():
    """With one real point and N = 3, two missing points are filled: with `breaching` that is
    2 breaching points, not enough for M = 3 next to a point within the threshold."""
    verdict = evaluate(rule("breaching"), [_, _, _, _, O])
    assert (verdict.state, verdict.filled) == (OK, 2)
    assert evaluate(rule("breaching", m=2), [_, _, _, _, O]).state == ALARM


@pytest.mark.parametrize(
    "comparison,value,expected",
    [
        ("GreaterThanOrEqualToThreshold", 10.0, ALARM),
        ("GreaterThanOrEqualToThreshold", 9.9, OK),
        ("GreaterThanThreshold", 10.0, OK),
        ("GreaterThanThreshold", 10.1, ALARM),
        ("LessThanThreshold", 10.0, OK),
        ("LessThanThreshold", 9.9, ALARM),
        ("LessThanOrEqualToThreshold", 10.0, ALARM),
        ("LessThanOrEqualToThreshold", 10.1, OK),
    ],
)
def test_each_comparison_operator(comparison, value, expected):
    """The four threshold comparisons, at and either side of the threshold (10)."""
    assert evaluate(rule(n=1, comparison=comparison, threshold=10.0), [_, _, value]).state == expected


def test_alarms_on_dynamodb_metrics_always_ignore_missing_data():
    """AWS: alarms on AWS/DynamoDB metrics keep their state when data is missing, whatever
    TreatMissingData says."""
    alarm = SimpleNamespace(
        comparison_operator="GreaterThanThreshold",
        threshold=0.0,
        evaluation_periods=1,
        datapoints_to_alarm=None,
        treat_missing_data="breaching",
        namespace="AWS/DynamoDB",
    )
    assert rule_of(alarm).treat_missing == "ignore"
    assert rule_of(SimpleNamespace(**{**vars(alarm), "namespace": "AWS/SQS"})).treat_missing == "breaching"


# --- statistics of a period ------------------------------------------------------------


def test_statistics_of_a_period_combine_values_and_statistic_sets():
    """Raw values and StatisticValues sets (sum, min, max, count) combine; percentiles need raw
    values; an empty period has no datapoint."""
    values, sets = [1.0, 2.0, 3.0, 4.0], [(10.0, 0.5, 6.0, 2.0)]
    assert statistic("Sum", values, sets) == 20.0
    assert statistic("SampleCount", values, sets) == 6.0
    assert statistic("Average", values, sets) == pytest.approx(20 / 6)
    assert (statistic("Minimum", values, sets), statistic("Maximum", values, sets)) == (0.5, 6.0)
    assert (statistic("p50", values), statistic("p100", values), statistic("p99.9", values)) == (
        2.0,
        4.0,
        4.0,
    )
    assert statistic("p90", [], sets) is None
    assert statistic("Sum", []) is None


# --- the time scale --------------------------------------------------------------------


def test_time_scale_comes_from_the_environment(monkeypatch):
    """LOCAL_CLOUDWATCH_SPEEDUP (default 12) divides periods; nonsense is refused."""
    monkeypatch.delenv("LOCAL_CLOUDWATCH_SPEEDUP", raising=False)
    assert Clock.from_env().wall(60) == 5.0
    monkeypatch.setenv("LOCAL_CLOUDWATCH_SPEEDUP", "60")
    assert Clock.from_env().metric_minute == 1.0
    for bad in ("0", "-3", "fast", "inf"):
        monkeypatch.setenv("LOCAL_CLOUDWATCH_SPEEDUP", bad)
        with pytest.raises(ValueError, match="LOCAL_CLOUDWATCH_SPEEDUP"):
            Clock.from_env()
    assert bucket_end(12.4, 5.0) == 10.0


# --- what an alarm writes --------------------------------------------------------------


def test_state_reason_reads_like_cloudwatch():
    """The breaching datapoints with their period's start (dd/MM/yy HH:mm:ss UTC), the
    comparison and the M needed, as in AWS's StateReason."""
    verdict = evaluate(rule(n=1), [_, _, 5.0])
    starts = [1_795_000_000.0 + 60 * i for i in range(3)]
    assert state_reason(rule(n=1), verdict, [_, _, 5.0], starts, INSUFFICIENT_DATA) == (
        "Threshold Crossed: 1 out of the last 1 datapoints [5.0 (18/11/26 11:08:40)] was greater than or equal "
        "to the threshold (1.0) (minimum 1 datapoint for INSUFFICIENT_DATA -> ALARM transition)."
    )
    ok = evaluate(rule(n=1), [_, _, 0.0])
    assert (
        "was not greater than or equal to the threshold (1.0) (minimum 1 datapoint for ALARM -> OK"
        in state_reason(rule(n=1), ok, [_, _, 0.0], starts, ALARM)
    )
    assert (
        state_reason(rule(), evaluate(rule(), [_] * 5), [_] * 5, starts, OK)
        == "Insufficient Data: 3 datapoints were unknown."
    )


def test_notification_has_the_cloudwatch_alarm_message_shape():
    """The SNS message: the alarm, both states, the Region's display name and the Trigger."""
    alarm = SimpleNamespace(
        name="depth",
        description=None,
        state_value=ALARM,
        state_reason="Threshold Crossed: ...",
        state_updated_timestamp=datetime(2026, 11, 29, 12, 0, 1),
        configuration_updated_timestamp=datetime(2026, 11, 29),
        alarm_arn="arn:aws:cloudwatch:us-east-1:123456789012:alarm:depth",
        ok_actions=[],
        alarm_actions=["arn:t"],
        insufficient_data_actions=[],
        metric_name="ApproximateNumberOfMessagesVisible",
        namespace="AWS/SQS",
        extended_statistic=None,
        statistic="Maximum",
        unit=None,
        period=60,
        evaluation_periods=1,
        datapoints_to_alarm=None,
        comparison_operator="GreaterThanOrEqualToThreshold",
        threshold=1.0,
        treat_missing_data=None,
        evaluate_low_sample_count_percentile=None,
        dimensions=[SimpleNamespace(name="QueueName", value="jobs")],
        metric_data_queries=[],
    )
    subject, text = notification(alarm, OK, "123456789012", "us-east-1")
    message = json.loads(text)
    assert subject == 'ALARM: "depth" in US East (N. Virginia)'
    assert (message["NewStateValue"], message["OldStateValue"], message["Region"]) == (
        ALARM,
        OK,
        "US East (N. Virginia)",
    )
    assert message["StateChangeTime"] == "2026-11-29T12:00:01.000+0000"
    assert message["Trigger"] == {
        "MetricName": "ApproximateNumberOfMessagesVisible",
        "Namespace": "AWS/SQS",
        "StatisticType": "Statistic",
        "Statistic": "MAXIMUM",
        "Unit": None,
        "Dimensions": [{"value": "jobs", "name": "QueueName"}],
        "Period": 60,
        "EvaluationPeriods": 1,
        "DatapointsToAlarm": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "Threshold": 1.0,
        "TreatMissingData": "",
        "EvaluateLowSampleCountPercentile": "",
    }
