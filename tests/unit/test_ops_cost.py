"""`python -m ops cost` against moto's CloudWatch: the metrics it reads (only the consumer's own
queue, function, table and log group), the SQS request estimate, the units and dollars it derives,
the metrics with no data named as such, and bad input in one line."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import boto3
import pytest

from guarded_consumer import contract as CONTRACT
from ops.__main__ import main
from ops.cost import init_phases, init_progress, metric_hours, period_for, usage_of
from ops.cost_model import PRICES_FILE, Prices, Usage, estimated_gb_seconds, price
from stacks.config import DECISION_METRICS, DEFAULT_PREFIX, METRICS_NAMESPACE, Names
from stacks.lambda_code import load_worker
from tests.unit.conftest import mocked_aws

NAMES = Names(DEFAULT_PREFIX)
PRICES = Prices.load()
FIGURES = json.loads(PRICES_FILE.read_text())["prices"]
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


def alarm(name, metric):
    return {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmName": name,
            **metric,
            "EvaluationPeriods": 1,
            "Threshold": 1,
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        },
    }


def stat(query_id, name, period=60):
    return {
        "Id": query_id,
        "ReturnData": False,
        "MetricStat": {
            "Metric": {"Namespace": "AWS/SQS", "MetricName": name, "Dimensions": []},
            "Period": period,
            "Stat": "Maximum",
        },
    }


# Two single-metric alarms, one metric math alarm reading three metrics through two expressions
# (as the stack's new-dead-letters alarm does), and one dashboard: 2 + 3 alarm metrics.
MONITORING = {
    "Errors": alarm(
        "e", {"MetricName": "Errors", "Namespace": "AWS/Lambda", "Statistic": "Sum", "Period": 60}
    ),
    "Throttles": alarm(
        "t", {"MetricName": "Throttles", "Namespace": "AWS/Lambda", "Statistic": "Sum", "Period": 300}
    ),
    "NewDeadLetters": alarm(
        "n",
        {
            "Metrics": [
                {"Id": "arrivals", "Expression": "DIFF(depth) + deleted", "ReturnData": True},
                {"Id": "depth", "Expression": "visible + held", "ReturnData": False},
                stat("visible", "ApproximateNumberOfMessagesVisible"),
                stat("held", "ApproximateNumberOfMessagesNotVisible"),
                stat("deleted", "NumberOfMessagesDeleted"),
            ]
        },
    ),
    "Dashboard": {
        "Type": "AWS::CloudWatch::Dashboard",
        "Properties": {"DashboardName": "d", "DashboardBody": "{}"},
    },
}


def deploy_stack(names=NAMES, resources=MONITORING):
    """The consumer's stack in moto's CloudFormation: its outputs (so ops finds it) and `resources`."""
    sqs = boto3.client("sqs")
    outputs = {
        "QueueUrl": sqs.get_queue_url(QueueName=names.jobs_queue)["QueueUrl"],
        "DeadLetterQueueUrl": sqs.get_queue_url(QueueName=names.dead_letter_queue)["QueueUrl"],
        "OrdersTableName": names.orders_table,
        "ReferenceTableName": names.reference_table,
        "FunctionName": names.worker_function,
        "LogGroupName": Names.log_group_of(names.worker_function),
    }
    template = {"Resources": resources, "Outputs": {key: {"Value": value} for key, value in outputs.items()}}
    boto3.client("cloudformation").create_stack(StackName=names.stack, TemplateBody=json.dumps(template))


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
    assert report["fixed_monthly"] is None  # no stack deployed: named, not guessed
    assert any(name.startswith("fixed costs (the stack's template:") for name in report["missing"])
    assert set(report["by_service"]) >= {"sqs", "lambda", "dynamodb", "logs"}
    assert report["prices"] == {
        "file": report["prices"]["file"],
        "region": "us-east-1",
        "as_of": PRICES.as_of,
        "list": True,
    }


def test_read_units_are_priced_as_reads(aws, capsys):
    """The table's consumed read units (an operator's scan, say) are billed at the read price
    of the price file, not the write price: DynamoDB's dollars are 110 writes at $0.625 and 400
    reads at $0.125 per million."""
    a_run_of_orders(aws)
    put(aws, "AWS/DynamoDB", "ConsumedReadCapacityUnits", {"TableName": NAMES.orders_table}, [300, 100])
    code, report, err = run_json(capsys)
    assert code == 0, err
    assert report["units"]["read_units"] == 400
    figures = json.loads(PRICES_FILE.read_text())["prices"]
    write = figures["dynamodb_on_demand_write_request_units_per_million"]["usd"]
    read = figures["dynamodb_on_demand_read_request_units_per_million"]["usd"]
    assert report["by_service"]["dynamodb"] == pytest.approx((110 * write + 400 * read) / 1e6)


@pytest.mark.filterwarnings("ignore:Tried to parse AWS")  # only the template is read
def test_fixed_costs_are_a_month_of_the_deployed_stacks_alarms_dashboard_and_custom_metrics(aws, capsys):
    """The deployed template's alarms bill one alarm metric per metric they read (a math alarm's
    expressions are not metrics), its dashboard one dashboard-month, and the worker's metrics
    lines make one custom metric per decision for its function: priced by the month under
    `fixed_monthly`, whose items add up to its total, and kept out of the period's `usd` (still
    its services' sum) and of the per-order figure."""
    a_run_of_orders(aws)
    _, without, _ = run_json(capsys)
    deploy_stack()
    code, report, err = run_json(capsys)
    assert code == 0, err
    fixed = report["fixed_monthly"]
    assert fixed["units"] == {"alarm_metrics": 5, "dashboards": 1, "custom_metrics": len(DECISION_METRICS)}
    assert fixed["by_item"] == pytest.approx(
        {
            "alarms": 5 * FIGURES["alarm_metrics_standard_per_alarm_metric_month"]["usd"],
            "dashboards": FIGURES["dashboards_per_dashboard_month"]["usd"],
            "custom_metrics": 5 * FIGURES["custom_metrics_per_metric_month"]["usd"],
        }
    )
    assert sum(fixed["by_item"].values()) == pytest.approx(fixed["usd_per_month"])
    assert sum(report["by_service"].values()) == pytest.approx(report["usd"])
    assert report["usd"] == pytest.approx(without["usd"])
    assert report["usd_per_million_orders"] == pytest.approx(without["usd_per_million_orders"])
    assert not any(name.startswith("fixed costs") for name in report["missing"])
    assert main(["cost"]) == 0
    text = capsys.readouterr().out
    assert "fixed, a month whatever the orders (from stack labex-q05-consumer's template" in text
    assert "5 alarm metrics" in text and "1 dashboards" in text


@pytest.mark.filterwarnings("ignore:Tried to parse AWS")  # only the template is read
def test_a_high_resolution_alarm_is_refused_not_priced_at_the_standard_rate(aws, capsys):
    """An alarm on a period under a minute bills at the high-resolution rate the price file does
    not hold: the fixed costs are not given, and `missing` names the alarm."""
    deploy_stack(resources={"Fast": alarm("fast", {"Metrics": [stat("m", "NumberOfMessagesSent", 10)]})})
    _, report, _ = run_json(capsys)
    assert report["fixed_monthly"] is None
    assert any("alarm fast has a 10 s period" in name for name in report["missing"])


@pytest.fixture
def fifo_aws():
    """moto with a FIFO deployment's queues (`.fifo` names) and a CloudWatch client."""
    names = Names(DEFAULT_PREFIX, fifo=True)
    with mocked_aws():
        sqs = boto3.client("sqs")
        for name in (names.jobs_queue, names.dead_letter_queue):
            sqs.create_queue(QueueName=name, Attributes={"FifoQueue": "true"})
        yield boto3.client("cloudwatch")


def test_a_fifo_queue_is_billed_at_the_fifo_rate_with_its_deduplicated_sends(fifo_aws, capsys):
    """A FIFO jobs queue's requests are priced at the FIFO rate, and every send counts, also the
    ones deduplication dropped (NumberOfDeduplicatedSentMessages): SQS bills each action as a
    request. 100 sent + 15 deduplicated + 110 receives + 110 deletes = 335 FIFO requests."""
    queue = {"QueueName": Names(DEFAULT_PREFIX, fifo=True).jobs_queue}
    worker = {"FunctionName": NAMES.worker_function}
    put(fifo_aws, "AWS/SQS", "NumberOfMessagesSent", queue, [60, 40])
    put(fifo_aws, "AWS/SQS", "NumberOfDeduplicatedSentMessages", queue, [10, 5])
    put(fifo_aws, "AWS/SQS", "NumberOfMessagesReceived", queue, [66, 44])
    put(fifo_aws, "AWS/SQS", "NumberOfMessagesDeleted", queue, [66, 44])
    put(fifo_aws, "AWS/Lambda", "Invocations", worker, [66, 44])
    code, report, err = run_json(capsys)
    assert code == 0, err
    assert report["queue_type"] == "fifo"
    assert report["units"]["sqs_fifo_requests"] == 335 and report["units"]["sqs_requests"] == 0
    fifo_rate = FIGURES["sqs_fifo_requests_per_million"]["usd"]
    assert fifo_rate > FIGURES["sqs_standard_requests_per_million"]["usd"]
    assert report["by_service"]["sqs"] == pytest.approx(335 * fifo_rate / 1e6)
    assert main(["cost"]) == 0
    assert "335 SQS requests (fifo)" in capsys.readouterr().out


def test_a_standard_queue_is_billed_at_the_standard_rate_and_reads_no_deduplication(aws, capsys):
    """A standard queue has no deduplication: its metric is not read (nor named as missing), and
    its requests are at the standard rate."""
    a_run_of_orders(aws)
    _, report, _ = run_json(capsys)
    assert report["queue_type"] == "standard"
    assert "sqs_deduplicated" not in report["metrics"]
    assert not any("Deduplicated" in name for name in report["missing"])
    assert report["by_service"]["sqs"] == pytest.approx(
        320 * FIGURES["sqs_standard_requests_per_million"]["usd"] / 1e6
    )


def test_the_custom_metrics_are_the_worker_metric_names_by_dimension_values():
    """One custom metric per namespace, metric name and dimension values the worker's metrics
    lines carry: one per decision for one function, however many lines repeat it; another
    function's lines are other metrics."""
    from ops.cost_model import custom_metrics

    worker = load_worker()

    def lines(function):
        return [worker.metrics_line(m, function, METRICS_NAMESPACE, 0) for m in worker.Metric]

    assert custom_metrics(lines("f")) == len(DECISION_METRICS) == 5
    assert custom_metrics(lines("f") * 3) == 5
    assert custom_metrics(lines("f") + lines("g")) == 10


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
