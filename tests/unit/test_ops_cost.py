"""`python -m ops cost` against moto's CloudWatch: the metrics it reads (only the consumer's own
queue, function, table and log group), the SQS request estimate, the units and dollars it derives,
the metrics with no data named as such, and bad input in one line."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import boto3
import pytest

from ops.__main__ import main
from ops.cost import init_phases, init_progress, metric_hours, period_for, usage_of
from ops.cost_model import Prices, Usage, estimated_gb_seconds, price
from ops.observe import CONTRACT
from stacks.config import DECISION_METRICS, DEFAULT_PREFIX, METRICS_NAMESPACE, Names
from tests.unit.conftest import mocked_aws

NAMES = Names(DEFAULT_PREFIX)
PRICES = Prices.load()
ACCEPTED, DUPLICATE = str(CONTRACT.Metric.ACCEPTED), str(CONTRACT.Metric.DUPLICATE)


@pytest.fixture
def aws():
    """moto with the consumer's two queues (so ops finds it by its prefix) and a CloudWatch client."""
    with mocked_aws():
        sqs = boto3.client("sqs")
        for name in (NAMES.jobs_queue, NAMES.dead_letter_queue):
            sqs.create_queue(QueueName=name)
        yield boto3.client("cloudwatch")


def put(cloudwatch, namespace, name, dimensions, values, minutes_ago=5):
    """One datapoint per value, a minute apart, ending `minutes_ago` minutes ago."""
    now = time.time()
    cloudwatch.put_metric_data(
        Namespace=namespace,
        MetricData=[
            {
                "MetricName": name,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
                "Timestamp": datetime.fromtimestamp(now - (minutes_ago + index) * 60, tz=UTC),
                "Value": value,
            }
            for index, value in enumerate(values)
        ],
    )


def a_run_of_orders(cloudwatch):
    """100 orders sent and consumed in batches of one, 10 of them delivered twice."""
    queue = {"QueueName": NAMES.jobs_queue}
    worker = {"FunctionName": NAMES.worker_function}
    put(cloudwatch, "AWS/SQS", "NumberOfMessagesSent", queue, [60, 40])
    put(cloudwatch, "AWS/SQS", "NumberOfMessagesReceived", queue, [66, 44])
    put(cloudwatch, "AWS/SQS", "NumberOfMessagesDeleted", queue, [66, 44])
    put(cloudwatch, "AWS/Lambda", "Invocations", worker, [66, 44])
    put(cloudwatch, "AWS/Lambda", "Duration", worker, [1320.0, 880.0])
    put(cloudwatch, "AWS/DynamoDB", "ConsumedWriteCapacityUnits", {"TableName": NAMES.orders_table}, [110])
    put(
        cloudwatch,
        "AWS/Logs",
        "IncomingBytes",
        {"LogGroupName": Names.log_group_of(NAMES.worker_function)},
        [88_000],
    )
    put(cloudwatch, METRICS_NAMESPACE, ACCEPTED, worker, [60, 40])
    put(cloudwatch, METRICS_NAMESPACE, DUPLICATE, worker, [6, 4])
    # Another consumer's traffic, which must not count.
    put(cloudwatch, "AWS/SQS", "NumberOfMessagesSent", {"QueueName": "someone-else"}, [1_000_000])
    put(cloudwatch, "AWS/Lambda", "Invocations", {"FunctionName": "someone-else"}, [1_000_000])


def run_json(capsys, *args):
    code = main(["cost", "--json", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else None), err


def test_cost_json_reports_the_consumers_own_units_and_dollars(aws, capsys):
    """From the period's metric sums: 100 SQS sends + 110 receives + 110 deletes, 110
    invocations of 20 ms at the stack's 256 MB arm64, 110 write units, 88,000 log bytes; orders
    are the accepted writes (duplicates cost, they are not orders); another queue's and function's
    metrics are not read; the services add up to the total."""
    a_run_of_orders(aws)
    code, report, err = run_json(capsys)
    assert code == 0, err
    assert report["orders"] == 100
    assert report["units"]["sqs_requests"] == 320
    assert report["units"]["invocations"] == 110
    assert report["units"]["write_units"] == 110 and report["units"]["read_units"] == 0
    assert report["units"]["log_bytes"] == 88_000
    assert report["function"]["memory_mb"] == 256 and report["function"]["architecture"] == "arm64"
    assert report["function"]["from"].startswith("the stack's defaults (GetFunctionConfiguration")
    expected = price(
        Usage(
            sqs_requests=320,
            invocations=110,
            gb_seconds=estimated_gb_seconds(2200, 110, 256),
            write_units=110,
            log_bytes=88_000,
            metric_hours=report["units"]["metric_hours"],
        ),
        PRICES,
        orders=100,
    )
    assert report["by_service"] == pytest.approx(dict(expected.by_service))
    assert sum(report["by_service"].values()) == pytest.approx(report["usd"])
    assert report["usd_per_million_orders"] == pytest.approx(report["usd"] / 100 * 1e6)
    assert set(report["by_service"]) >= {"sqs", "lambda", "dynamodb", "logs"}
    assert report["prices"] == {
        "file": report["prices"]["file"],
        "region": "us-east-1",
        "as_of": PRICES.as_of,
        "list": True,
    }


def test_metrics_without_data_are_named_and_counted_as_zero(aws, capsys):
    """A metric with no datapoints in the period (here: empty receives, read units, three
    decision metrics) is listed under `missing` rather than silently taken for zero."""
    a_run_of_orders(aws)
    _, report, _ = run_json(capsys)
    assert "AWS/SQS NumberOfEmptyReceives" in report["missing"]
    assert "AWS/DynamoDB ConsumedReadCapacityUnits" in report["missing"]
    assert "AWS/Lambda Invocations" not in report["missing"]
    assert report["metrics"]["sqs_empty_receives"] == 0


def test_the_period_leaves_out_older_data(aws, capsys):
    """--since bounds the period: orders an hour and a half ago are outside the last 60 minutes."""
    put(aws, METRICS_NAMESPACE, ACCEPTED, {"FunctionName": NAMES.worker_function}, [7], minutes_ago=90)
    put(aws, METRICS_NAMESPACE, ACCEPTED, {"FunctionName": NAMES.worker_function}, [3], minutes_ago=5)
    assert run_json(capsys, "--since", "60")[1]["orders"] == 3
    assert run_json(capsys, "--since", "120")[1]["orders"] == 10


def test_cost_text_is_a_table_by_service_with_total_and_per_order(aws, capsys):
    """The text form: one row per service, a total row, per-million-orders beside the dollars,
    the units and the metrics that had no data."""
    a_run_of_orders(aws)
    assert main(["cost"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "orders (accepted writes): 100" in lines
    for service in ("sqs", "lambda", "dynamodb", "logs", "metrics", "total"):
        assert any(line.split()[0] == service for line in lines if line.strip()), service
    assert "320 SQS requests" in out and "110 invocations" in out
    assert lines[-1].startswith("no data in the period (counted as 0): ")


def test_no_orders_means_no_per_order_figure(aws, capsys):
    """A quiet period costs what its idle polling cost, with no per-order figure to divide by zero."""
    put(aws, "AWS/SQS", "NumberOfEmptyReceives", {"QueueName": NAMES.jobs_queue}, [180])
    code, report, _ = run_json(capsys)
    assert code == 0
    assert report["orders"] == 0 and report["usd_per_million_orders"] is None
    assert report["by_service"]["sqs"] == pytest.approx(180 * PRICES.sqs_request)


@pytest.mark.parametrize("since", ["0", "-5", str(455 * 1440 + 1)])
def test_a_bad_since_is_one_line(aws, capsys, since):
    """--since outside (0, 455 days] is refused in one line naming the flag."""
    code, _, err = run_json(capsys, "--since", since)
    assert code == 1
    assert err.startswith("error: --since must be more than 0") and err.count("\n") == 1


def test_a_missing_consumer_is_one_line(capsys):
    """No stack and no queues of the prefix: one line saying so, exit 1."""
    with mocked_aws():
        code, _, err = run_json(capsys, "--prefix", "nobody")
    assert code == 1
    assert err.startswith("error: stack nobody-consumer not found") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("since", "period"),
    [(60, 60), (1440, 60), (1441, 120), (7 * 1440, 420), (15 * 1440 + 1, 1200), (90 * 1440, 7200)],
)
def test_the_period_keeps_points_few_and_acceptable_to_cloudwatch(since, period):
    """At most 1,440 points per metric, in periods CloudWatch accepts for data that old (multiples
    of 300 s past 15 days, of 3,600 s past 63 days)."""
    assert period_for(since) == period


def test_sqs_requests_follow_the_batches():
    """A batch of ten is one receive and one delete for ten messages; a batch of one is one each;
    empty receives are requests too."""
    sums = {
        "lambda_invocations": 10,
        "sqs_sent": 100,
        "sqs_received": 100,
        "sqs_deleted": 100,
        "sqs_empty_receives": 30,
        "lambda_duration_ms": 0,
        "dynamodb_write_units": 0,
        "dynamodb_read_units": 0,
        "logs_incoming_bytes": 0,
    }
    assert usage_of(sums, 256, "arm64", 0).sqs_requests == 100 + 10 + 30 + 10
    ones = {**sums, "lambda_invocations": 100, "sqs_empty_receives": 0}
    assert usage_of(ones, 256, "arm64", 0).sqs_requests == 300


def test_custom_metrics_are_billed_by_the_hours_they_are_sent_in():
    """Five decision metrics sent in two distinct hours are ten metric-hours, however many points
    each hour holds; a period longer than an hour counts the hours it spans."""
    hour = 3_600_000
    points = [[0, 1.0], [60_000, 1.0], [hour + 5, 1.0]]
    series = {f"decision_{name}": points for name in DECISION_METRICS}
    assert len(DECISION_METRICS) == 5 and metric_hours(series, 60) == 10
    assert metric_hours({f"decision_{ACCEPTED}": [[0, 1.0]]}, 7200) == 2


def test_cold_starts_init_is_billed_from_the_report_lines(aws, capsys):
    """Lambda bills a cold start's INIT phase, which CloudWatch's Duration leaves out: `ops cost`
    adds the Init Duration of the period's REPORT lines (not an INIT_REPORT's, nor an older one's)
    to the GB-seconds, and counts the cold starts."""
    a_run_of_orders(aws)
    logs, group = boto3.client("logs"), Names.log_group_of(NAMES.worker_function)
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s")
    now = int(time.time() * 1000)
    report = "REPORT RequestId: {}\tDuration: 20.00 ms\tBilled Duration: {} ms\tMemory Size: 256 MB\tMax Memory Used: 80 MB"
    lines = [
        (now - 3 * 3600_000, report.format("old", 421) + "\tInit Duration: 400.00 ms"),
        (now - 120_000, report.format("a", 331) + "\tInit Duration: 310.50 ms"),
        (now - 110_000, report.format("b", 21)),
        (now - 100_000, "INIT_REPORT Init Duration: 999.00 ms\tPhase: init\tStatus: error"),
        (now - 90_000, report.format("c", 310) + "\tInit Duration: 289.50 ms"),
    ]
    logs.put_log_events(
        logGroupName=group,
        logStreamName="s",
        logEvents=[{"timestamp": at, "message": text} for at, text in lines],
    )
    code, report_json, err = run_json(capsys)
    assert code == 0, err
    assert report_json["metrics"]["lambda_init_ms"] == 600.0
    assert report_json["metrics"]["lambda_cold_starts"] == 2
    assert report_json["units"]["gb_seconds"] == pytest.approx(estimated_gb_seconds(2200 + 600, 110, 256))
    assert not any("Init Duration" in name for name in report_json["missing"])


def test_reading_the_cold_starts_says_how_far_it_has_got():
    """A long period's REPORT lines take FilterLogEvents pages: the read reports the cold starts
    found and the share of the period read, as `ops cost` prints it once a second on stderr."""

    class Logs:
        def get_paginator(self, name):
            assert name == "filter_log_events"
            report = (
                "REPORT RequestId: {}\tDuration: 1.00 ms\tBilled Duration: 2 ms\tInit Duration: 100.00 ms"
            )
            pages = [
                {"events": [{"timestamp": 1_250, "message": report.format("a")}]},
                {"events": [{"timestamp": 1_750, "message": report.format("b")}]},
            ]
            return type("Paginator", (), {"paginate": lambda self, **kwargs: pages})()

    reported: list[tuple[int, int]] = []
    assert init_phases(Logs(), "group", 1_000, 2_000, reported.append) == (200.0, 2)
    assert reported == [(1, 1_250), (2, 1_750)]
    line = init_progress(1_000, 2_000)
    assert line(reported[0]) == "reading cold starts (REPORT lines): 1 so far, 25% of the period"
    assert line((2, 5_000)).endswith("100% of the period")


def test_progress_says_nothing_of_work_done_within_a_second_then_once_a_second(capsys):
    """ops' progress line (ops/terminal.py): quiet at first, then at most one line a second."""
    from ops.terminal import Progress

    clock = iter([0.0, 0.5, 1.2, 2.3])
    progress = Progress(lambda n: f"done {n}", clock=lambda: next(clock))
    for n in range(1, 4):
        progress(n)
    assert capsys.readouterr().err == "done 2\ndone 3\n"
