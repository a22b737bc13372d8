"""PutMetricAlarm's limit on an alarm's evaluation window (API reference, Period): Period x
EvaluationPeriods at most 604,800 s (7 days), and at most 86,400 s (one day) with a Period under an
hour; an alarm at the limit, such as a week of hourly periods, is accepted and evaluated.
In-process moto with the embedded AWS's PutMetricAlarm (alarm_state.py), restored after each test."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.cloudwatch.models import CloudWatchBackend, cloudwatch_backends

from embedded_aws.services.cloudwatch.alarm_rules import evaluation_window_error
from embedded_aws.services.cloudwatch.alarm_state import AlarmStates
from embedded_aws.services.cloudwatch.evaluator import supported
from embedded_aws.services.cloudwatch.history import AlarmHistory
from embedded_aws.services.cloudwatch.resource_types import CloudWatchAlarm

ACCOUNT, REGION = "123456789012", "us-east-1"


@pytest.mark.parametrize(
    ("period", "periods", "refused"),
    [
        (3600, 168, False),
        (3600, 169, True),
        (86400, 7, False),
        (86400, 8, True),
        (60, 1440, False),
        (60, 1441, True),
        (300, 288, False),
        (300, 289, True),
        (10, 8640, False),
    ],
)
def test_the_window_is_seven_days_from_an_hourly_period_and_one_day_below(period, periods, refused):
    """Exactly at each limit is allowed, one period past it is refused with a line naming both
    numbers and the limit."""
    error = evaluation_window_error(period, periods)
    assert (error is not None) == refused
    if error:
        assert f"{period} x {periods}" in error
        assert ("86400" if period < 3600 else "604800") in error


@pytest.fixture
def cloudwatch(monkeypatch):
    for name in ("put_metric_alarm", "set_alarm_state", "delete_alarms"):
        monkeypatch.setattr(CloudWatchBackend, name, getattr(CloudWatchBackend, name))
    AlarmStates(AlarmHistory()).install()
    with mock_aws():
        yield boto3.client("cloudwatch", region_name=REGION)


def depth_queries(period: int) -> list[dict]:
    return [
        {"Id": "e", "Expression": "visible + held", "ReturnData": True},
        *(
            {
                "Id": query_id,
                "ReturnData": False,
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/SQS",
                        "MetricName": metric,
                        "Dimensions": [{"Name": "QueueName", "Value": "q"}],
                    },
                    "Period": period,
                    "Stat": "Maximum",
                },
            }
            for query_id, metric in (
                ("visible", "ApproximateNumberOfMessagesVisible"),
                ("held", "ApproximateNumberOfMessagesNotVisible"),
            )
        ),
    ]


def test_put_metric_alarm_refuses_a_window_past_the_limit(cloudwatch):
    """A single-metric alarm of 169 hourly periods and a metric-math alarm of 1,441 one-minute
    periods are refused (ValidationError) and not stored; 168 hourly periods are stored."""
    common = {"ComparisonOperator": "GreaterThanOrEqualToThreshold", "Threshold": 1}
    with pytest.raises(ClientError) as refused:
        cloudwatch.put_metric_alarm(
            AlarmName="too-long", Namespace="AWS/SQS", MetricName="ApproximateNumberOfMessagesVisible",
            Statistic="Maximum", Period=3600, EvaluationPeriods=169, **common,
        )  # fmt: skip
    assert refused.value.response["Error"]["Code"] == "ValidationError"
    assert "3600 x 169" in refused.value.response["Error"]["Message"]
    with pytest.raises(ClientError, match="60 x 1441"):
        cloudwatch.put_metric_alarm(
            AlarmName="too-long-math", Metrics=depth_queries(60), EvaluationPeriods=1441, **common
        )
    cloudwatch.put_metric_alarm(
        AlarmName="a-week", Metrics=depth_queries(3600), EvaluationPeriods=168, **common
    )
    assert [a["AlarmName"] for a in cloudwatch.describe_alarms()["MetricAlarms"]] == ["a-week"]


def test_a_stack_alarm_of_many_hourly_periods_is_created_and_evaluated(cloudwatch):
    """The shape of dead-letter-expiry (metric math over hourly Maximum, 118 of 118 periods, missing
    data not breaching), created as CloudFormation creates it, is stored as an alarm the evaluator
    supports; a week and an hour of such periods fails the stack resource."""
    props = {
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "Threshold": 1,
        "EvaluationPeriods": 118,
        "DatapointsToAlarm": 118,
        "TreatMissingData": "notBreaching",
        "Metrics": depth_queries(3600),
    }
    CloudWatchAlarm.create_from_cloudformation_json("expiry", {"Properties": props}, ACCOUNT, REGION)
    alarm = cloudwatch_backends[ACCOUNT][REGION].alarms["expiry"]
    assert supported(alarm)
    assert (alarm.evaluation_periods, alarm.datapoints_to_alarm) == (118, 118)
    with pytest.raises(Exception, match="3600 x 169"):
        CloudWatchAlarm.create_from_cloudformation_json(
            "expiry-too-long", {"Properties": {**props, "EvaluationPeriods": 169}}, ACCOUNT, REGION
        )
