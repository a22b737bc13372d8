"""The goals `make bench` reports beside its figures (bench/report.py, bench/cost_bench.py): met
or NOT met from the figures alone, no timing and no AWS."""

from __future__ import annotations

import pytest

from bench import cost_bench, cost_report, report
from ops.cost_model import Prices


def _step(batch_size: int, median: float, growth: list[float | None]) -> dict:
    return {
        "batch_size": batch_size,
        "messages_per_second": {"median": median},
        "late_over_early_rate": growth,
    }


def test_verdict_takes_floors_and_ceilings_inclusively():
    """A figure equal to its goal meets it, whichever way the goal points."""
    assert report.verdict(200, 200) == "met"
    assert report.verdict(199.9, 200) == "NOT met"
    assert report.verdict(1.15, 1.15, at_least=False) == "met"
    assert report.verdict(1.16, 1.15, at_least=False) == "NOT met"


def test_pipeline_row_names_each_goal_it_meets_or_misses():
    """A row's goal cell checks the rate against its batch size's goal and its lowest late/early."""
    assert report.pipeline_goals(_step(10, 116.2, [0.90, 1.14])) == (
        ">= 200 msg/s: NOT met; late/early >= 0.9: met"
    )
    assert report.pipeline_goals(_step(1, 80.0, [1.04, 0.66])) == (
        ">= 80 msg/s: met; late/early >= 0.9: NOT met"
    )
    assert report.pipeline_goals(_step(5, 50.0, [None])) == "-"


def test_pipeline_summary_quotes_the_deciding_figures():
    """The sentence above the table gives the best rate per batch size and the lowest late/early."""
    summary = report.pipeline_summary(
        {"results": [_step(10, 116.2, [0.9]), _step(10, 210.0, [0.95]), _step(1, 34.8, [0.87])]}
    )
    assert summary == (
        "Goals: at least 200 msg/s at batch size 10: met (best median 210.0); at least 80 msg/s at "
        "batch size 1: NOT met (best median 34.8); late/early at least 0.9 in every run: NOT met "
        "(lowest 0.87)."
    )
    assert "batch size 1: not measured" in report.pipeline_summary({"results": [_step(10, 250, [])]})


def _measured(ours_log: float, powertools_writes: float) -> dict:
    def cell(writes: dict[str, float], log: float) -> dict:
        return {
            "dynamodb_units_by_table": {
                table: {"write": units, "read": 0.0} for table, units in writes.items()
            },
            "log_bytes_by_kind": {"RESULT": 91.0, "WRITE": 120.0, "JOB": log},
            "max_batch_body_bytes": 300,
            "median_ms": 10.0,
        }

    handlers = {}
    for variant, writes, log in (
        ("ours", {"bench-orders": 1.0}, ours_log),
        ("lab", {"bench-orders": 1.0}, ours_log),
        ("powertools", {"bench-orders": 1.0, "bench-idempotency": powertools_writes - 1}, 0.0),
    ):
        handlers[variant] = {
            str(size): {"first": cell(writes, log), "duplicate": cell(writes, log)} for size in (1, 10)
        }
    return {"handlers": handlers}


def _batches(ms: float) -> dict:
    times = {f"batch_{size}_ms": ms for size in (1, 10)}
    variants = {name: {"5 ms": times} for name in ("ours-1", "lab", "powertools")}
    return {"held_to_memory": {"share": 0.1447, "handlers": variants}, "handlers": variants}


def test_cost_goals_are_met_near_the_floor_and_missed_far_from_it():
    """Little over the floor and a third of Powertools' writes meets both goals; kilobytes of
    logs an order miss the floor goal, and the table says so beside the figure."""
    prices = Prices.load()
    near = cost_bench.price_all(_measured(0, 3), _batches(1), 256, prices=prices)
    for size in ("1", "10"):
        goals = near["batches"][size]["goals"]
        assert goals["over_floor"] == pytest.approx(1.0, abs=0.1)
        assert goals["over_floor_met"] and goals["powertools_met"]
    far = cost_bench.price_all(_measured(20_000, 1), _batches(500), 256, prices=prices)
    assert not far["batches"]["10"]["goals"]["over_floor_met"]
    assert not far["batches"]["10"]["goals"]["powertools_met"]
    table = cost_report.render(far)
    assert "(goal <= 1.10x: NOT met)" in table and "(goal >= 1.5x: NOT met)" in table
    assert "(goal <= 1.10x: met)" in cost_report.render(near)


def test_cost_floor_is_a_write_unit_and_two_requests_per_delivery_batch():
    """The floor per order: 1 + share WRU, and a receive, a delete and an invocation per batch;
    of the logs, the lines the lab's check reads (WRITE and RESULT per delivery, START per
    invocation), not JOB."""
    cost = cost_bench.price_all(
        _measured(500, 3), _batches(1), 256, duplicate_share=0.1, prices=Prices.load()
    )
    floor = cost["batches"]["10"]["floor"]["units_per_order"]
    assert floor["write_units"] == pytest.approx(1.1)
    assert floor["sqs_requests"] == pytest.approx(0.22)
    assert floor["invocations"] == pytest.approx(0.11)
    start = len(cost_bench.PLATFORM_LINES["START"].encode())
    assert floor["log_bytes"] == pytest.approx((91 + 120) * 1.1 + start * 0.11)


def test_log_lines_are_counted_by_kind():
    """Tagged lines count under their tag, embedded-metric-format objects under EMF."""
    output = 'JOB {"id": "a"}\n{"_aws": {"Timestamp": 1}, "Accepted": 1}\nRESULT {}\n\nRESULT {}\n'
    assert cost_bench.log_bytes_by_kind(output) == {"JOB": 15, "EMF": 41, "RESULT": 18}


def test_the_cost_table_shows_the_fixed_costs_a_month_apart():
    """The stack's fixed costs (alarm metrics, dashboards, the worker's custom metrics) are counted
    from its template and priced by the month, in a table of their own after the per-order one;
    a results file from before them renders without it."""
    prices = Prices.load()
    template = {
        "Resources": {
            "One": {"Type": "AWS::CloudWatch::Alarm", "Properties": {"MetricName": "Errors", "Period": 60}},
            "Board": {"Type": "AWS::CloudWatch::Dashboard", "Properties": {}},
        }
    }
    fixed = cost_bench.fixed_costs(template, prices)
    assert fixed["units"] == {"alarm_metrics": 1, "dashboards": 1, "custom_metrics": 5}
    assert fixed["usd_per_month"] == pytest.approx(
        prices.alarm_metric_month + prices.dashboard_month + 5 * prices.metric_month
    )
    cost = cost_bench.price_all(_measured(0, 3), _batches(1), 256, prices=prices)
    assert "Fixed costs a month" not in cost_report.render(cost)
    table = cost_report.render({**cost, "fixed_monthly": fixed})
    assert table.index("**Cost per million orders**") < table.index("**Fixed costs a month**")
    assert "| dashboards | 1 dashboards | 3.00 |" in table
    assert f"| **total** |  | **{fixed['usd_per_month']:.2f}** |" in table
