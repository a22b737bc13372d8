"""The cost model (ops/cost_model.py) and its price file: the 64 KB chunk rule, billed GB-seconds,
one service's units priced only in that service, totals that add up, and a price file that names
its region, date and AWS page for every figure."""

from __future__ import annotations

import json
import math
from dataclasses import fields, replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ops.cost_model import (
    PRICE_KEYS,
    PRICES_FILE,
    SERVICES,
    SQS_CHUNK_BYTES,
    FixedUnits,
    PriceError,
    Prices,
    Usage,
    billed_gb_seconds,
    estimated_gb_seconds,
    fixed_monthly,
    price,
    sqs_billed_requests,
    template_fixed_units,
)

PRICES = Prices.load()
amounts = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)
usages = st.builds(
    Usage,
    sqs_requests=amounts,
    sqs_fifo_requests=amounts,
    invocations=amounts,
    gb_seconds=amounts,
    architecture=st.sampled_from(["arm64", "x86_64"]),
    write_units=amounts,
    read_units=amounts,
    log_bytes=amounts,
    metric_hours=amounts,
)
# Which service each unit is billed in.
SERVICE_OF = {
    "sqs_requests": "sqs",
    "sqs_fifo_requests": "sqs",
    "invocations": "lambda",
    "gb_seconds": "lambda",
    "write_units": "dynamodb",
    "read_units": "dynamodb",
    "log_bytes": "logs",
    "metric_hours": "metrics",
}


def test_the_price_file_names_region_date_and_an_aws_page_for_every_figure():
    """Every figure the model reads is in the file with its AWS pricing page and a status that
    says how it was checked; the file is for us-east-1 at a stated date."""
    data = json.loads(PRICES_FILE.read_text())
    assert data["region"] == "us-east-1" and data["as_of"] >= "2026-12-01"
    for key in PRICE_KEYS.values():
        figure = data["prices"][key]
        assert figure["page"].startswith("https://aws.amazon.com/"), key
        assert figure["status"] in {"aws-page", "secondary", "unverified"}, key
        assert figure["status"] == "aws-page" or figure["seen_on"], key


def test_the_list_prices_read_from_the_file():
    """The figures as the model uses them, per single unit: a change to the file shows here."""
    assert PRICES.sqs_request == pytest.approx(0.40e-6)
    assert PRICES.sqs_fifo_request == pytest.approx(0.50e-6)
    assert PRICES.alarm_metric_month == pytest.approx(0.10)
    assert PRICES.dashboard_month == pytest.approx(3.00)
    assert PRICES.metric_month == pytest.approx(0.30)
    assert PRICES.lambda_request == pytest.approx(0.20e-6)
    assert PRICES.gb_second == {"arm64": 0.0000133334, "x86_64": 0.0000166667}
    assert PRICES.write_unit == pytest.approx(0.625e-6)
    assert PRICES.read_unit == pytest.approx(0.125e-6)
    assert PRICES.log_byte * 1024**3 == pytest.approx(0.50)
    assert PRICES.metric_hour * 730 == pytest.approx(0.30)


@pytest.mark.parametrize(
    ("payload", "requests"),
    [
        (0, 1),
        (1, 1),
        (SQS_CHUNK_BYTES - 1, 1),
        (SQS_CHUNK_BYTES, 1),
        (SQS_CHUNK_BYTES + 1, 2),
        (256 * 1024, 4),
    ],
)
def test_the_64_kb_chunk_rule_at_its_boundaries(payload, requests):
    """A call is one request per started 64 KB (65,536 bytes) of payload, at least one: 64 KB
    exactly is one, a byte more is two, 256 KB is four (SQS pricing's own example)."""
    assert sqs_billed_requests(payload) == requests


@given(st.integers(min_value=1, max_value=2**31))
def test_the_chunk_rule_counts_started_chunks(payload):
    """For any payload, the billed requests are the chunks it starts: k requests cover more than
    k-1 whole chunks and at most k."""
    requests = sqs_billed_requests(payload)
    assert (requests - 1) * SQS_CHUNK_BYTES < payload <= requests * SQS_CHUNK_BYTES


def test_a_negative_payload_is_refused():
    """Bad input is named, not priced."""
    with pytest.raises(ValueError, match="payload_bytes must be >= 0"):
        sqs_billed_requests(-1)


def test_billed_duration_rounds_each_invocation_up_to_the_millisecond():
    """Lambda bills each invocation's duration rounded up to 1 ms, at memory/1024 GB: two
    invocations of 10.2 ms at 256 MB are 22 ms of a quarter GB."""
    assert billed_gb_seconds([10.2, 11.0], 256) == pytest.approx(22 * 0.25 / 1000)


@given(st.lists(st.floats(min_value=0, max_value=900_000), max_size=50), st.sampled_from([128, 256, 1769]))
def test_the_estimate_from_a_sum_is_within_half_a_millisecond_per_invocation(durations, memory):
    """From CloudWatch's Duration Sum the single roundings are unknown: the estimate is off the
    exact bill by at most half a millisecond per invocation."""
    exact = billed_gb_seconds(durations, memory)
    estimate = estimated_gb_seconds(sum(durations), len(durations), memory)
    assert abs(exact - estimate) <= 0.5 * len(durations) * memory / 1024 / 1000 + 1e-9


@given(usages)
def test_each_unit_is_priced_in_its_own_service_and_the_services_add_up_to_the_total(usage):
    """Priced one unit at a time, each unit's dollars land only in its service, and the total of
    the whole usage is the sum of those parts."""
    zero = {name: 0 for name in SERVICE_OF}
    parts = []
    for name, service in SERVICE_OF.items():
        alone = price(replace(usage, **{**zero, name: getattr(usage, name)}), PRICES, orders=1)
        assert all(v == 0 for s, v in alone.by_service.items() if s != service)
        parts.append(alone.total)
    whole = price(usage, PRICES, orders=1)
    assert set(whole.by_service) == set(SERVICES)
    assert whole.total == pytest.approx(math.fsum(parts), rel=1e-9, abs=1e-12)


@given(usages, st.floats(min_value=1, max_value=1e9))
def test_per_million_orders_scales_the_total(usage, orders):
    """Dollars per million orders are the period's dollars over its orders, times a million, for
    the total and for each service."""
    cost = price(usage, PRICES, orders)
    assert cost.per_million_orders == pytest.approx(cost.total / orders * 1e6, rel=1e-9, abs=1e-12)
    report = cost.as_json()
    assert set(report) >= {"orders", "usd_per_million_orders", "by_service"}
    assert math.fsum(report["by_service"].values()) == pytest.approx(report["usd"], rel=1e-9, abs=1e-12)


def test_no_orders_means_no_per_order_figure():
    """With no orders in the period the per-order figure is absent, not a division by zero."""
    cost = price(Usage(sqs_requests=10), PRICES, orders=0)
    assert cost.total > 0 and cost.per_million_orders is None


def test_one_order_at_the_floor():
    """One order with one write unit, three SQS requests (send, receive, delete), one 20 ms
    arm64 invocation at 256 MB and 600 log bytes, priced per million orders: a worked example
    anyone can redo by hand from the price file."""
    usage = Usage(
        sqs_requests=3,
        invocations=1,
        gb_seconds=billed_gb_seconds([20], 256),
        write_units=1,
        log_bytes=600,
    )
    cost = price(usage, PRICES, orders=1).as_json()["by_service_per_million_orders"]
    assert cost["sqs"] == pytest.approx(1.20)
    assert cost["lambda"] == pytest.approx(0.20 + 0.005 * 0.0000133334 * 1e6)
    assert cost["dynamodb"] == pytest.approx(0.625)
    assert cost["logs"] == pytest.approx(600 * 0.50 / 1024**3 * 1e6)


def _alarm(**properties: Any) -> dict[str, Any]:
    return {"Type": "AWS::CloudWatch::Alarm", "Properties": {"AlarmName": "x", **properties}}


def _stat(period: int = 60) -> dict[str, Any]:
    return {"Id": "m", "MetricStat": {"Metric": {"MetricName": "M"}, "Period": period, "Stat": "Sum"}}


def test_the_template_counts_alarm_metrics_and_dashboards():
    """One alarm metric per single-metric alarm and per metric a math alarm reads (its
    expressions are none), one per dashboard; other resources count nothing."""
    template = {
        "Resources": {
            "One": _alarm(MetricName="Errors", Period=60),
            "Math": _alarm(Metrics=[{"Id": "e", "Expression": "a + b"}, _stat(), _stat(300)]),
            "Board": {"Type": "AWS::CloudWatch::Dashboard", "Properties": {}},
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {}},
        }
    }
    assert template_fixed_units(template, custom=5) == FixedUnits(
        alarm_metrics=3, dashboards=1, custom_metrics=5
    )
    assert template_fixed_units({}, custom=0) == FixedUnits(0, 0, 0)


@pytest.mark.parametrize("alarm", [_alarm(MetricName="M", Period=10), _alarm(Metrics=[_stat(30)])])
def test_a_high_resolution_alarm_is_named_not_priced(alarm):
    """An alarm on a period under a minute is billed at the high-resolution rate, not in the
    price file: refused in one line naming the alarm."""
    with pytest.raises(ValueError, match="alarm x has a .* s period: high-resolution") as raised:
        template_fixed_units({"Resources": {"Fast": alarm}}, custom=0)
    assert "\n" not in str(raised.value)


def test_the_fixed_costs_a_month_by_item_add_up():
    """12 alarm metrics, one dashboard and five custom metrics, at the price file's monthly
    figures; the items add up to the total."""
    figures = json.loads(PRICES_FILE.read_text())["prices"]
    cost = fixed_monthly(FixedUnits(alarm_metrics=12, dashboards=1, custom_metrics=5), PRICES)
    assert cost.by_item == pytest.approx(
        {
            "alarms": 12 * figures["alarm_metrics_standard_per_alarm_metric_month"]["usd"],
            "dashboards": figures["dashboards_per_dashboard_month"]["usd"],
            "custom_metrics": 5 * figures["custom_metrics_per_metric_month"]["usd"],
        }
    )
    report = cost.as_json()
    assert math.fsum(report["by_item"].values()) == pytest.approx(report["usd_per_month"])
    assert report["units"] == {"alarm_metrics": 12, "dashboards": 1, "custom_metrics": 5}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("region"), "price file has no 'region'"),
        (lambda d: d["prices"].pop("lambda_gb_second_arm64"), "lambda_gb_second_arm64.usd must be a number"),
        (lambda d: d["prices"]["sqs_standard_requests_per_million"].update(usd="0.40"), "must be a number"),
        (lambda d: d["prices"]["logs_ingestion_standard_per_gb"].update(usd=-1), "must be a number >= 0"),
    ],
)
def test_a_bad_price_file_is_named_in_one_line(change, message):
    """A price file without a figure, or with one that is not a non-negative number, is refused
    with a line naming the figure."""
    data = json.loads(PRICES_FILE.read_text())
    change(data)
    with pytest.raises(PriceError, match=message) as raised:
        Prices.from_json(data)
    assert "\n" not in str(raised.value)


def test_a_missing_price_file_is_one_line(tmp_path):
    """The path is named and no traceback text leaks into the message."""
    with pytest.raises(PriceError, match="cannot read the price file .*nowhere.json"):
        Prices.load(tmp_path / "nowhere.json")


def test_usage_refuses_an_unknown_architecture_and_negative_units():
    """Usage is validated at the edge: the architectures Lambda prices, no negative units."""
    with pytest.raises(ValueError, match="architecture must be one of arm64, x86_64"):
        Usage(architecture="sparc")
    for field in fields(Usage):
        if field.name != "architecture":
            with pytest.raises(ValueError, match="must be >= 0"):
                negative: dict[str, Any] = {field.name: -1}
                Usage(**negative)


@pytest.mark.parametrize(
    ("unit", "service", "each"),
    [
        ("sqs_requests", "sqs", PRICES.sqs_request),
        ("sqs_fifo_requests", "sqs", PRICES.sqs_fifo_request),
        ("invocations", "lambda", PRICES.lambda_request),
        ("gb_seconds", "lambda", PRICES.gb_second["arm64"]),
        ("write_units", "dynamodb", PRICES.write_unit),
        ("read_units", "dynamodb", PRICES.read_unit),
        ("log_bytes", "logs", PRICES.log_byte),
        ("metric_hours", "metrics", PRICES.metric_hour),
    ],
)
def test_each_unit_is_priced_at_its_own_price(unit, service, each):
    """A million of one unit alone costs a million times that unit's own price, in its own
    service: read units priced at the write price (five times more) or a unit charged twice
    passed the add-up checks above, which hold whatever price a unit is given."""
    alone: dict[str, Any] = {unit: 1e6}
    cost = price(replace(Usage(architecture="arm64"), **alone), PRICES, orders=1)
    assert cost.by_service[service] == pytest.approx(1e6 * each)
    assert cost.total == pytest.approx(1e6 * each)
