"""The local CloudWatch's metric sources, pure: EMF extraction from log events, and the sums
behind the AWS/Lambda and AWS/SQS service metrics."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from embedded_aws.services.awslambda.metrics import peak_concurrency
from embedded_aws.services.logs.emf import extract
from embedded_aws.services.sqs.metrics import gauges

# --- EMF -------------------------------------------------------------------------------


def emf_event(**overrides) -> str:
    event = {
        "_aws": {
            "Timestamp": 1_700_000_000_000,
            "CloudWatchMetrics": [
                {
                    "Namespace": "Orders",
                    "Dimensions": [["Service"], ["Service", "Stage"]],
                    "Metrics": [{"Name": "Latency", "Unit": "Milliseconds"}, {"Name": "Failures"}],
                }
            ],
        },
        "Service": "checkout",
        "Stage": "local",
        "Latency": [12, 15.5],
        "Failures": 1,
        "requestId": "r-1",
    }
    event.update(overrides)
    return json.dumps(event)


def test_emf_event_becomes_one_metric_per_dimension_set_and_name():
    """Each dimension set makes a metric of its own; arrays keep every value; the unit is the
    declared one (none if absent); the timestamp is _aws.Timestamp."""
    metrics = extract(emf_event())
    assert [(m.name, m.dimensions, m.values, m.unit) for m in metrics] == [
        ("Latency", {"Service": "checkout"}, [12.0, 15.5], "Milliseconds"),
        ("Latency", {"Service": "checkout", "Stage": "local"}, [12.0, 15.5], "Milliseconds"),
        ("Failures", {"Service": "checkout"}, [1.0], None),
        ("Failures", {"Service": "checkout", "Stage": "local"}, [1.0], None),
    ]
    assert {(m.namespace, m.timestamp_ms) for m in metrics} == {("Orders", 1_700_000_000_000)}


def test_emf_without_dimension_sets_publishes_without_dimensions():
    event = json.loads(emf_event())
    event["_aws"]["CloudWatchMetrics"][0]["Dimensions"] = []
    assert {tuple(m.dimensions) for m in extract(json.dumps(event))} == {()}


@pytest.mark.parametrize(
    "message",
    [
        "plain log line",
        '{"_aws": ',  # not JSON
        emf_event(_aws={"CloudWatchMetrics": []}),  # no Timestamp
        emf_event(_aws={"Timestamp": "now", "CloudWatchMetrics": []}),
        emf_event(Service=7),  # a dimension value must be a string
        emf_event(Stage=None),
        emf_event(Failures=True),  # a value must be a number
        emf_event(Failures="1"),
        emf_event(Latency=list(range(101))),  # at most 100 values
        emf_event(Latency=[]),
        json.dumps(
            {
                "_aws": {
                    "Timestamp": 1,
                    "CloudWatchMetrics": [
                        {"Namespace": "N", "Dimensions": [], "Metrics": [{"Name": "M", "Unit": "Parsecs"}]}
                    ],
                },
                "M": 1,
            }
        ),
        "[1, 2]",
    ],
)
def test_invalid_emf_is_an_ordinary_log_line(message):
    """Anything that is not valid EMF yields no metric and no error."""
    assert extract(message) == []


# --- service metrics -------------------------------------------------------------------


def test_peak_concurrency_counts_overlapping_invocations():
    """The peak number of invocations running at one instant; back-to-back ones do not overlap."""
    assert peak_concurrency([]) == 0
    assert peak_concurrency([(0, 10), (1, 2), (1.5, 3), (2, 4)]) == 3
    assert peak_concurrency([(0, 1), (1, 2), (2, 3)]) == 1


def test_sqs_gauges_from_one_pass_over_the_messages():
    """Visible, in flight (visible_at in the future), delayed, and the oldest message's age in
    seconds (in-flight messages count: they are not deleted)."""
    now = 1_000_000.0
    message = lambda sent, visible_at=0.0, delayed_until=0.0: SimpleNamespace(
        sent_timestamp=sent, visible_at=visible_at, delayed_until=delayed_until
    )
    queue = [
        message(now - 1000),
        message(now - 90_500, visible_at=now + 5000),
        message(now - 10, delayed_until=now + 1),
    ]
    assert gauges(queue, now) == {
        "ApproximateNumberOfMessagesVisible": 1,
        "ApproximateNumberOfMessagesNotVisible": 1,
        "ApproximateNumberOfMessagesDelayed": 1,
        "ApproximateAgeOfOldestMessage": 90,
    }
    assert gauges([], now)["ApproximateAgeOfOldestMessage"] == 0
