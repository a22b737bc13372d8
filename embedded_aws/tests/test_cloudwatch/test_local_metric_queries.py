"""GetMetricData from the per-metric index gives what moto's own scan gives, without the scan."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest

from embedded_aws.services.cloudwatch import metric_queries
from embedded_aws.services.cloudwatch.metrics import MetricIndex
from tests.unit.conftest import mocked_aws


def _utc_now() -> datetime:
    """Naive UTC, as in-process moto compares CloudWatch timestamps."""
    return datetime.now(UTC).replace(tzinfo=None)


def query(qid: str, name: str, stat: str, dimensions: dict[str, str], period: int = 60) -> dict:
    return {
        "Id": qid,
        "MetricStat": {
            "Metric": {
                "Namespace": "Test",
                "MetricName": name,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
            },
            "Period": period,
            "Stat": stat,
        },
    }


@pytest.mark.parametrize("scan_by", ["TimestampAscending", "TimestampDescending"])
def test_indexed_answers_match_motos(scan_by):
    from moto.cloudwatch.models import CloudWatchBackend, cloudwatch_backends

    with mocked_aws():
        cloudwatch = boto3.client("cloudwatch")
        start = (_utc_now() - timedelta(minutes=30)).replace(second=0, microsecond=0)
        for minute in range(0, 30, 3):
            for function, value in (("a", minute), ("b", 100 + minute)):
                cloudwatch.put_metric_data(
                    Namespace="Test",
                    MetricData=[
                        {
                            "MetricName": "Accepted",
                            "Value": value,
                            "Timestamp": start + timedelta(minutes=minute, seconds=7),
                            "Dimensions": [{"Name": "FunctionName", "Value": function}],
                        }
                    ],
                )
        backend = cloudwatch_backends["123456789012"]["us-east-1"]
        queries = [
            query("sum", "Accepted", "Sum", {"FunctionName": "a"}),
            query("max", "Accepted", "Maximum", {"FunctionName": "b"}, period=300),
            query("none", "Missing", "Sum", {"FunctionName": "a"}),
        ]
        end = start + timedelta(minutes=31)
        ours = metric_queries.metric_data(MetricIndex(backend), queries, start, end, scan_by)
        theirs = CloudWatchBackend.get_metric_data(backend, queries, start, end, scan_by)
        assert [(r["id"], r["values"], r["timestamps"]) for r in ours] == [
            (r["id"], r["values"], r["timestamps"]) for r in theirs
        ]
        assert len(ours[0]["values"]) == 10 and len(ours[1]["values"]) == 6 and ours[2]["values"] == []

        # moto ignores the namespace of a query with dimensions; CloudWatch (and the index) does not.
        cloudwatch.put_metric_data(
            Namespace="Other",
            MetricData=[
                {
                    "MetricName": "Accepted",
                    "Value": 999,
                    "Timestamp": start + timedelta(minutes=1),
                    "Dimensions": [{"Name": "FunctionName", "Value": "a"}],
                }
            ],
        )
        again = metric_queries.metric_data(MetricIndex(backend), queries[:1], start, end, scan_by)
        assert 999 not in again[0]["values"] and len(again[0]["values"]) == 10


def test_start_time_is_rounded_as_cloudwatch_rounds_it():
    """A StartTime of 12:32:34 buckets from 12:32:00 (moto's own periods start at 12:32:34, so a
    chart's points moved half a minute between two calls a second apart)."""
    from moto.cloudwatch.models import cloudwatch_backends

    with mocked_aws():
        cloudwatch = boto3.client("cloudwatch")
        minute = (_utc_now() - timedelta(minutes=10)).replace(second=0, microsecond=0)
        cloudwatch.put_metric_data(
            Namespace="Test",
            MetricData=[
                {
                    "MetricName": "Accepted",
                    "Value": 1,
                    "Timestamp": minute + timedelta(seconds=50),
                    "Dimensions": [{"Name": "FunctionName", "Value": "a"}],
                }
            ],
        )
        backend = cloudwatch_backends["123456789012"]["us-east-1"]
        answer = metric_queries.metric_data(
            MetricIndex(backend),
            [query("sum", "Accepted", "Sum", {"FunctionName": "a"})],
            minute + timedelta(seconds=34),
            minute + timedelta(minutes=5),
        )
        assert answer[0]["timestamps"] == [minute] and answer[0]["values"] == [1]


@pytest.mark.parametrize(
    ("age_days", "period", "step"),
    [
        (0, 60, 60),
        (14.9, 300, 60),
        (15, 60, 300),
        (62.9, 3600, 300),
        (63, 3600, 3600),
        (0, 10, 10),
        (0, 1, 1),
    ],
)
def test_rounding_steps_follow_the_start_times_age_and_the_period(age_days, period, step):
    now = 1_800_000_000.0
    start = now - age_days * 86_400 - 1234.5
    rounded = metric_queries.rounded_start(start, period, now)
    assert rounded <= start < rounded + step and rounded % step == 0
