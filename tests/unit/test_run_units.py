"""The ops cost check's own count of a run's units (bench/run_units.py) and its verdict
(bench/ops_cost_check.py, bench/cost_report.py): REPORT lines, log bytes, DynamoDB item sizes,
the 64 KB rule on the counted SQS requests, and the goal held against the measurement."""

from __future__ import annotations

import math
from typing import Any

import pytest

from bench.cost_report import render_ops_check
from bench.ops_cost_check import ratios
from bench.run_units import (
    RunCounts,
    billed_of_report,
    item_bytes,
    lambda_units,
    log_bytes,
)
from ops.observe import report_fields

LOCAL_REPORT = (
    "REPORT RequestId: 1f0c\tDuration: 690.12 ms\tBilled Duration: 1201 ms\tMemory Size: 256 MB"
    "\tMax Memory Used: 61 MB\tInit Duration: 510.30 ms\tRuntime Version: python:3.12"
)
AWS_REPORT = (
    "REPORT RequestId: 8a2e\tDuration: 2.31 ms\tBilled Duration: 3 ms\tMemory Size: 128 MB"
    "\tMax Memory Used: 40 MB\t"
)


def test_report_lines_give_billed_duration_and_memory_and_other_lines_nothing() -> None:
    """A REPORT line (the local host's, with Init Duration, or AWS's) yields its Billed Duration
    and Memory Size; START, END and the worker's own lines are not REPORT lines."""
    assert billed_of_report(LOCAL_REPORT) == (1201, 256)
    assert billed_of_report(AWS_REPORT) == (3, 128)
    for line in ("START RequestId: 1f0c Version: $LATEST", "END RequestId: 1f0c", '{"tag": "REPORT"}'):
        assert billed_of_report(line) is None


def test_report_fields_split_init_from_duration() -> None:
    """A cold start's REPORT line has Init Duration apart from Duration; its Billed Duration
    holds both; a warm one has no Init Duration."""
    cold = report_fields(LOCAL_REPORT)
    assert cold is not None
    assert (cold["Duration"], cold["Init Duration"], cold["Billed Duration"]) == (690.12, 510.3, 1201)
    warm = report_fields(AWS_REPORT)
    assert warm is not None and "Init Duration" not in warm
    assert counts().as_json()["cold_starts"] == 4


def test_lambda_units_count_one_invocation_per_report_line_and_bill_each_at_its_memory() -> None:
    """Invocations are the REPORT lines; GB-seconds are billed ms x MB / 1024 / 1000 summed."""
    invocations, gb_seconds = lambda_units(["START RequestId: 1f0c", LOCAL_REPORT, AWS_REPORT])
    assert invocations == 2
    assert gb_seconds == pytest.approx(1201 * 256 / 1024 / 1000 + 3 * 128 / 1024 / 1000)


def test_log_bytes_are_each_messages_utf8_bytes_without_per_event_overhead() -> None:
    """Characters outside ASCII count as their UTF-8 bytes; no 26 bytes per event are added."""
    assert log_bytes(["abc", "é€"]) == 3 + 2 + 3


def test_item_sizes_follow_dynamodbs_rules() -> None:
    """Names and strings in UTF-8 bytes; a number one byte per two significant digits plus one
    (leading and trailing zeros trimmed); a map 3 bytes plus one per element ("DynamoDB item
    sizes and formats")."""
    assert item_bytes({"id": {"S": "oc-1"}}) == 2 + 4
    assert item_bytes({"q": {"N": "12345"}}) == 1 + 3 + 1
    assert item_bytes({"q": {"N": "1000"}}) == 1 + 1 + 1
    assert item_bytes({"ok": {"BOOL": True}}) == 2 + 1
    assert item_bytes({"m": {"M": {"a": {"S": "xy"}}}}) == 1 + 3 + (1 + 2 + 1)
    assert item_bytes({"l": {"L": [{"S": "x"}, {"N": "7"}]}}) == 1 + 3 + (1 + 1) + (2 + 1)


def counts(**overrides: Any) -> RunCounts:
    values: dict[str, Any] = {
        "receives_with_messages": 4,
        "deletes": 3,
        "receives": 9,
        "largest_body_bytes": 40,
        "report_messages": (LOCAL_REPORT,) * 4,
        "log_messages": (LOCAL_REPORT,) * 4 + ("x" * 100,),
        "stored_item_bytes": (100, 1500),
        "put_items": 5,
    }
    return RunCounts(**{**values, **overrides})


def test_counted_units_price_rejected_writes_and_the_64_kb_rule() -> None:
    """PutItem calls beyond the stored orders are rejected conditional writes, each sized by the
    largest stored item; a receive whose ten largest bodies pass 64 KB is two requests."""
    run = counts()
    assert run.rejected_writes == 3
    assert run.dynamodb_write_units() == 1 + 2 + 3 * 2
    assert run.sqs_requests() == 4 + 3
    assert counts(largest_body_bytes=7000).sqs_requests() == 4 * 2 + 3
    usage = run.usage("arm64")
    assert (usage.invocations, usage.write_units, usage.read_units) == (4, 9, 0)
    assert usage.log_bytes == 4 * len(LOCAL_REPORT) + 100
    assert math.isclose(usage.gb_seconds, 4 * 1201 * 256 / 1024 / 1000)


def test_counters_are_read_by_name_and_missing_ones_count_zero() -> None:
    """LOCAL_PROFILE's counters: the poller's receives with messages, both delete calls, PutItem."""
    run = RunCounts.from_counters(
        {
            "poller receive with messages": {"count": 33},
            "http sqs:DeleteMessageBatch": {"count": 30},
            "http sqs:ReceiveMessage": {"count": 90},
            "http dynamodb:PutItem": {"count": 330},
        },
        bodies=['{"id": "a"}', '{"id": "abc"}'],
        log_messages=[AWS_REPORT, "START"],
        stored_items=[{"id": {"S": "a"}}],
    )
    assert (run.receives_with_messages, run.deletes, run.put_items) == (33, 30, 330)
    assert run.largest_body_bytes == len('{"id": "abc"}')
    assert run.report_messages == (AWS_REPORT,)
    assert run.receives == 90
    assert run.as_json()["rejected_writes"] == 329


def figures(sqs: float, lam: float, ddb: float, logs: float) -> dict[str, Any]:
    by = {"sqs": sqs, "lambda": lam, "dynamodb": ddb, "logs": logs}
    units = {
        "sqs_requests": 0.2,
        "invocations": 0.1,
        "gb_seconds": 1e-3,
        "write_units": 1.1,
        "log_bytes": 900,
    }
    return {
        "units_per_order": units,
        "usd_per_million_orders": by,
        "total_usd_per_million_orders": sum(by.values()),
    }


def test_the_goal_is_held_against_the_measurement_and_names_services_far_off() -> None:
    """The verdict is ops cost / measured in total; a service more than 10% off is named even
    when the total is within; the cost table is a second comparison without a goal."""
    measured, ops = figures(0.1, 0.3, 0.7, 0.5), figures(0.13, 0.3, 0.7, 0.5)
    found = ratios(ops, measured)
    assert found["sqs"] == pytest.approx(1.3)
    assert found["total"] == pytest.approx(1.63 / 1.6)
    check = {
        "orders": 300,
        "deliveries": 330,
        "batch_size": 10,
        "measured": {**measured, "architecture": "arm64", "counts": counts().as_json()},
        "ops_cost": ops,
        "table": figures(0.1, 0.1, 0.7, 0.5),
        "left_out": {
            "sqs_sent": 330,
            "sqs_empty_receives": 12,
            "metric_hours": 5,
            "ops_cost_total_usd_per_million_orders": 9.0,
        },
        "ratios": found,
        "ratio": found["total"],
        "table_ratios": ratios(ops, figures(0.1, 0.1, 0.7, 0.5)),
        "goal": 0.1,
        "met": True,
    }
    text = render_ops_check(check)
    assert "Goal: within 10% of the measurement in total: 1.02x, met (more than 10% off: SQS 1.30x)" in text
    assert "| ops cost / measured |  | 1.30x | 1.00x | 1.00x | 1.00x | **1.02x** |" in text
    assert "NOT met" in render_ops_check({**check, "met": False})
