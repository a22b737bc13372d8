"""The cost benchmark's tables as docs/benchmarks.md shows them (bench/cost_bench.py measures
and prices; bench/report.py writes the page)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.stats import markdown_table
from bench.variants import LABELS, VARIANTS
from stacks.lambda_code import contract

Tag = contract().Tag
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
    Tag.ERROR: "ops tools: a failed record's order (id, quantity as far as the body parsed), message and error (ops/snapshot.py)",
    Tag.WRITE: "the lab's check (accepted writes, conditional rejections); ops tools: the conditional write's outcome and decision of each record (ops/snapshot.py)",
    Tag.RESULT: "the lab's check (deliveries handled, duplicates acknowledged; the README's RESULT pipeline, verbatim); ops tools",
    "EMF": "the alarms and dashboard (lib/src/idempotent_consumer/monitoring.py) and `ops cost`'s order count: CloudWatch makes the decision metrics from it",
    "START": "the lab's check (executions); ops tools count invocations by it (ops/observe.py)",
    "END": "nobody here",
    "REPORT": "ops tools read a failed invocation's Status on it (ops/observe.py)",
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
        f"{prices['as_of']} ([`{prices['file']}`](../{prices['file']}), each figure with its pricing page; "
        "on demand, first tier, no free tier). Per distinct order, with "
        f"{share:.0%} of orders delivered a second time (a pessimistic round share of SQS's at-least-once "
        "redeliveries and producers' resends). SQS: a ReceiveMessage and a DeleteMessageBatch per batch, "
        "each 64 KB of a batch's bodies one request (the producer's SendMessage, the same for every "
        f"consumer, is left out). Lambda: an invocation per batch and GB-seconds at {cost['memory_mb']} MB "
        f"from the batch benchmark's function time with a {ROUND_TRIP_MS} ms round trip "
        f"({', '.join(sources)}), a duplicate's scaled by the duplicate/first time ratio measured here. "
        "DynamoDB: units counted from item sizes in the embedded DynamoDB, both tables. Logs: the bytes "
        "of every line each handler printed, plus Lambda's START, END and REPORT per invocation; "
        "metrics (per metric-hour, not per order) and storage are left out. Floor: one WRU per delivery, "
        "a receive and a delete per batch, an invocation per batch billed 1 ms, and the lines the lab's "
        "own check (`local/scenario.py`) reads, as this worker prints them: WRITE and RESULT per delivery, "
        "START per invocation.\n\n" + table
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
            f"{logs['batch_size']}, per order, at the Logs ingestion price; START/END/REPORT are per "
            "invocation, shared by the batch, and Lambda's own: the text log format the stack uses always "
            "writes them; log-level filtering, which needs the JSON format, can drop them, AWS Lambda "
            'Developer Guide, "Log-level filtering"). Who reads each line is said beside it. Each line '
            "carries only what its readers need: WRITE leaves out the condition (always the same), the "
            "stored item (the requested or the previous one, which it holds) and a first write's empty "
            "previous item, and EMF names only the "
            "record's own decision, not four zeros. A record that succeeds prints no other line (its WRITE and RESULT "
            "lines name the order; a failed one's ERROR line names its order and message). What the floor "
            "leaves out, the product requires: the decision metrics the alarms need (EMF); END and REPORT "
            "come with the text log format.\n\n"
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
        f"(counted from {fixed['from']}, as `python -m ops cost` counts a deployed stack's from its "
        f"template; same price list, {prices['as_of']}, no free tier): CloudWatch bills each alarm "
        "metric and dashboard by the month, and each custom metric by the hours it is sent in, so "
        "the custom metrics' figure is the most they cost, with every decision counted every hour.\n\n"
        + markdown_table(["item", "units", "$ a month"], rows)
    )


HEADINGS = {"sqs": "SQS", "lambda": "Lambda", "dynamodb": "DynamoDB", "logs": "Logs"}


def _ratio(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def render_ops_check(check: Mapping[str, Any]) -> str:
    """The comparison as markdown: `ops cost` against the run's measured units (the goal), and
    against the cost table (for information), units per order and dollars per million orders."""

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
    records = check["deliveries"] / counts["invocations"] if counts["invocations"] else 0
    duration = counts["duration_ms"] / counts["invocations"] if counts["invocations"] else 0
    off = [
        f"{HEADINGS[s]} {_ratio(check['ratios'][s])}"
        for s in SERVICES
        if check["ratios"][s] is not None and abs(check["ratios"][s] - 1) > check["goal"]
    ]
    return (
        f"**`ops cost` against the run** ({check['orders']} orders in {check['deliveries']} messages, "
        f"one in ten sent twice, batch size {check['batch_size']}, on the local stack). `ops cost` read "
        "the embedded AWS's CloudWatch metrics for the run; the measurement counted the same run's "
        f"units apart from them (`bench/run_units.py`): {counts['sqs_receives_with_messages']} "
        f"receives that returned messages and {counts['sqs_deletes']} deletes the emulator served "
        f"(each one 64 KB chunk: a receive carries at most ten bodies of at most "
        f"{counts['largest_body_bytes']} bytes), {counts['invocations']} REPORT lines "
        f"({counts['billed_ms']:,} ms billed, at {check['measured']['architecture']}: "
        f"{counts['duration_ms']:,.0f} ms of Duration and {counts['init_ms']:,.0f} ms of Init Duration "
        f"in {counts['cold_starts']} cold starts), "
        f"{counts['stored_orders']} orders stored (at most {counts['largest_item_bytes']} bytes, one "
        f"unit each) and {counts['rejected_writes']} rejected conditional writes of "
        f"{counts['put_items']} PutItem calls, and the UTF-8 bytes of {counts['log_events']} log "
        "events, all priced with the same price file and model. Both sides leave out the producer's "
        f"SendMessage ({left['sqs_sent']:.0f} here), the empty receives ({left['sqs_empty_receives']:.0f} "
        f"in ops cost's metrics, {counts['sqs_receives'] - counts['sqs_receives_with_messages']} served "
        f"while counting) and metric-hours ({left['metric_hours']:.0f}); with them `ops cost` "
        f"said ${left['ops_cost_total_usd_per_million_orders']:.2f} per million orders for the period. "
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
        + "\n\n**`ops cost` against the cost table** (for information, no goal): the table prices the "
        "worker's micro-benchmarked function time with a 5 ms round trip and full batches of 10; this "
        f"run's batches held {records:.1f} records on average and its invocations ran {duration:.0f} ms "
        "each (Duration, init aside), mostly waiting for the embedded AWS's answers and for a core it shares "
        "with them.\n\n"
        + markdown_table(
            header,
            [
                row("cost table (this worker)", check["table"]),
                row("ops cost", check["ops_cost"]),
                ratio_row("ops cost / table", check["table_ratios"]),
            ],
        )
    )
