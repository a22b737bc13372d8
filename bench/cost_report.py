"""The cost benchmark's tables as docs/benchmarks.md shows them (bench/cost_bench.py measures
and prices; bench/report.py writes the page)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.stats import markdown_table
from bench.variants import LABELS, VARIANTS
from guarded_consumer.contract import Tag

ROUND_TRIP_MS = 5
FLOOR_GOAL = 1.10  # this worker at most 10% over the floor
POWERTOOLS_GOAL = 1.5  # and at least 1.5x cheaper than Powertools
SERVICES = ("sqs", "lambda", "dynamodb", "logs")

# The lines the lab's own check (local/scenario.py) reads in a run without errors, which the
# floor counts: WRITE (accepted writes, conditional rejections) and RESULT (deliveries handled,
# duplicates acknowledged) per delivery, and START (executions) per invocation.
CHECKED_LINES = (Tag.WRITE, Tag.RESULT)
CHECKED_PLATFORM_LINE = "START"

# Which lines someone reads: the lab's check, the operators' tools, the alarms.
LINE_USERS = {
    Tag.ERROR: "`ops`: a failed record's order, message and error",
    Tag.WRITE: "the lab's check (writes, rejections); `ops`: each record's outcome",
    Tag.RESULT: "the lab's check (handled, duplicates); `ops`",
    "EMF": "the alarms, the dashboard and `ops cost` (the decision metrics)",
    "START": "the lab's check (executions); `ops` counts invocations",
    "END": "nobody here",
    "REPORT": "`ops`: a failed invocation's status",
}


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def ratio(value: float, goal: float) -> str:
    """A ratio to two decimals, or three where two would read as the goal itself."""
    return f"{value:.3f}x" if f"{value:.2f}" == f"{goal:.2f}" and value != goal else f"{value:.2f}x"


def render(cost: Mapping[str, Any]) -> str:
    """The cost table and the log-line table, markdown."""
    share = cost["duplicate_share"]
    rows = []
    for size, row in cost["batches"].items():
        goals = row["goals"]
        for name in ("floor", *VARIANTS):
            figures = row[name]
            units = figures["units_per_order"]
            note = ""
            if name == "ours":
                note = (
                    f"{ratio(goals['over_floor'], FLOOR_GOAL)} the floor (goal <= {FLOOR_GOAL:.2f}x: "
                    f"{verdict(goals['over_floor_met'])})"
                )
            elif name == "powertools":
                note = (
                    f"{ratio(goals['powertools_over_ours'], POWERTOOLS_GOAL)} this worker (goal >= {POWERTOOLS_GOAL}x: "
                    f"{verdict(goals['powertools_met'])}); its idempotency table: "
                    f"{figures['idempotency_table_write_units']:.2f} WRU"
                )
            rows.append(
                [
                    size,
                    "floor" if name == "floor" else LABELS[name],
                    (
                        f"{units['sqs_requests']:.2f} req, {units['invocations']:.2f} inv, "
                        f"{units['gb_seconds'] * 1e6:.0f} uGB-s, {units['write_units']:.2f} WRU, "
                        f"{units['read_units']:.2f} RRU, {units['log_bytes']:.0f} log B"
                    ),
                    *(f"{figures['usd_per_million_orders'][s]:.3f}" for s in SERVICES),
                    f"**{figures['total_usd_per_million_orders']:.3f}**",
                    note,
                ]
            )
    table = markdown_table(
        ["batch", "handler", "units per order", "SQS", "Lambda", "DynamoDB", "Logs", "total", "goal"], rows
    )
    sources = sorted(
        {
            row[v]["time_source"]
            for row in cost["batches"].values()
            for v in VARIANTS
            if "time_source" in row[v]
        }
    )
    prices = cost["prices"]
    when = cost.get("measured_on")
    text = (
        "**Cost per million orders**"
        + (
            f" (measured {when['date']} at commit {when['commit']}, {when['orders_per_handler_and_batch_size']} "
            "orders per handler and batch size, each delivered twice)"
            if when
            else ""
        )
        + f" in US dollars: AWS list prices for {prices['region']} as of "
        f"{prices['as_of']} ([`{prices['file']}`](../{prices['file']}), on demand, no free tier), per "
        f"distinct order with {share:.0%} of orders delivered twice. SQS: a receive and a delete per "
        f"batch; Lambda: an invocation per batch and GB-seconds at {cost['memory_mb']} MB from the batch "
        f"benchmark's time with a {ROUND_TRIP_MS} ms round trip ({', '.join(sources)}); DynamoDB: units "
        "from item sizes; Logs: every line printed plus START, END and REPORT. Floor: one WRU per "
        "delivery, a receive, a delete and a 1 ms invocation per batch, and only the lines the lab's "
        "check reads.\n\n" + table
    )
    fixed = cost.get("fixed_monthly")
    if fixed:
        text += "\n\n" + render_fixed(fixed, prices)
    logs = cost.get("log_lines")
    if logs:
        rows = [
            [
                kind,
                f"{figures['bytes']:.0f}",
                f"{figures['usd_per_million_orders']:.4f}",
                LINE_USERS.get(kind, ""),
            ]
            for kind, figures in logs["lines"].items()
        ]
        text += (
            "\n\n**What each line costs** (this worker, first deliveries in batches of "
            f"{logs['batch_size']}, per order, at the Logs ingestion price; START, END and REPORT are "
            "Lambda's own, per invocation). Each line carries only what its readers need.\n\n"
            + markdown_table(["line", "bytes per order", "$ per million orders", "read by"], rows)
        )
    return text + "\n"


FIXED_ROWS = {
    "alarms": ("alarm_metrics", "alarm metrics (standard resolution; a math alarm's each metric it reads)"),
    "dashboards": ("dashboards", "dashboards"),
    "custom_metrics": ("custom_metrics", "custom metrics (the worker's decisions, by function), at most"),
}


def render_fixed(fixed: Mapping[str, Any], prices: Mapping[str, Any]) -> str:
    """The fixed costs a month as markdown: what a deployment pays whatever its orders."""
    rows = [
        [item, f"{fixed['units'][FIXED_ROWS[item][0]]} {FIXED_ROWS[item][1]}", f"{dollars:.2f}"]
        for item, dollars in fixed["by_item"].items()
    ]
    rows.append(["**total**", "", f"**{fixed['usd_per_month']:.2f}**"])
    return (
        f"**Fixed costs a month** in US dollars, whatever the orders and not in the figures above "
        f"(counted from {fixed['from']}, as `ops cost` counts a deployed stack's; same price list); "
        "custom metrics at most, every decision counted every hour.\n\n"
        + markdown_table(["item", "units", "$ a month"], rows)
    )


HEADINGS = {"sqs": "SQS", "lambda": "Lambda", "dynamodb": "DynamoDB", "logs": "Logs"}


def _ratio(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def render_ops_check(check: Mapping[str, Any]) -> str:
    """The comparison as markdown: `ops cost` against the run's measured units (the goal), in
    units per order and dollars per million orders."""

    def row(name: str, figures: Mapping[str, Any]) -> list[str]:
        units = figures["units_per_order"]
        return [
            name,
            (
                f"{units['sqs_requests']:.3f} req, {units['invocations']:.3f} inv, "
                f"{units['gb_seconds'] * 1e6:.0f} uGB-s, {units['write_units']:.2f} WRU, "
                f"{units['log_bytes']:.0f} log B"
            ),
            *(f"{figures['usd_per_million_orders'][s]:.3f}" for s in SERVICES),
            f"**{figures['total_usd_per_million_orders']:.3f}**",
        ]

    def ratio_row(name: str, found: Mapping[str, float | None]) -> list[str]:
        return [name, "", *(_ratio(found[s]) for s in SERVICES), f"**{_ratio(found['total'])}**"]

    header = ["source", "units per order", *(HEADINGS[s] for s in SERVICES), "total"]
    left = check["left_out"]
    counts = check["measured"]["counts"]
    off = [
        f"{HEADINGS[s]} {_ratio(check['ratios'][s])}"
        for s in SERVICES
        if check["ratios"][s] is not None and abs(check["ratios"][s] - 1) > check["goal"]
    ]
    return (
        f"**`ops cost` against the run** ({check['orders']} orders in {check['deliveries']} messages, "
        f"one in ten sent twice, batch size {check['batch_size']}, on the local stack): `ops cost` from "
        "the embedded AWS's CloudWatch metrics, against the same run's units counted apart "
        f"(`bench/run_units.py`: {counts['invocations']} REPORT lines, {counts['put_items']} PutItem calls, "
        f"{counts['log_events']} log events). Both leave out the producer's SendMessage, empty receives "
        f"and metric-hours; with them `ops cost` said ${left['ops_cost_total_usd_per_million_orders']:.2f} "
        "per million orders. "
        f"Goal: within {check['goal']:.0%} of the measurement in total: {_ratio(check['ratio'])}, "
        f"{verdict(check['met'])}"
        + (f" (more than {check['goal']:.0%} off: {', '.join(off)})" if off else "")
        + ".\n\n"
        + markdown_table(
            header,
            [
                row("measured (this run)", check["measured"]),
                row("ops cost", check["ops_cost"]),
                ratio_row("ops cost / measured", check["ratios"]),
            ],
        )
    )
