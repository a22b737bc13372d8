"""`ops cost` held to the bench's figure for the same run of orders: the cost table's mix (first
deliveries, and one in ten sent again) run through the real stack on the local pipeline at batch
size 10, priced by `ops cost` from the embedded AWS's CloudWatch metrics, and priced again, with
the same price file and model (ops/cost_model.py), from the run's units counted apart from those
metrics (bench/run_units.py): the SQS requests the emulator served (LOCAL_PROFILE's counters), the
REPORT lines and log events of the function's log group, and the orders stored. Goal: within 10%
in total.

Both sides leave out the producer's SendMessage, the empty receives (ops cost's
NumberOfEmptyReceives, the measurement's receives that returned nothing) and the metric-hours (per
hour, not per order): on a short run they are mostly the idle time around it. The cost table's
figure for this worker at batch size 10 is shown beside it, without a goal: it prices micro-benchmark
function time and full batches, so the gap to it is the local stack's, not ops cost's.

`python -m bench.ops_cost_check` runs only this part (a deploy and about a minute) and writes it
into bench/results.json and docs/benchmarks.md beside the last `make bench`'s figures.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.cost_report import SERVICES, render_ops_check
from bench.run_units import RunCounts, log_bytes
from guarded_consumer import contract

GOAL = 0.10  # ops cost at most this far from the measured total, either way
ORDERS = 300
BATCH_SIZE = 10
SETTLE_SECONDS = 180.0


def _mix(run_id: str, duplicate_share: float) -> tuple[list[str], int]:
    """The bodies to send, with the table's share of orders sent a second time (right after the
    batch their first copy is in), and how many orders they hold."""
    resend_every = round(1 / duplicate_share)
    bodies = [json.dumps({"id": f"oc-{run_id}-{i}", "quantity": 1 + i % 10}) for i in range(ORDERS)]
    sent: list[str] = []
    for start in range(0, ORDERS, 10):
        chunk = bodies[start : start + 10]
        sent += chunk
        sent += [body for i, body in enumerate(chunk, start) if i % resend_every == 0]
    return sent, ORDERS


def figures_of(usage: Any, prices: Any, orders: float) -> dict[str, Any]:
    """Units per order and dollars per million orders by service (metrics left out) of `usage`."""
    from ops.cost_model import price

    cost = price(usage, prices, orders=orders).as_json()
    by_service = {k: v for k, v in cost["by_service_per_million_orders"].items() if k != "metrics"}
    return {
        "units_per_order": {name: value / (orders or 1) for name, value in usage.units().items()},
        "usd_per_million_orders": by_service,
        "total_usd_per_million_orders": sum(by_service.values()),
    }


def comparable(report: Mapping[str, Any], prices: Any) -> dict[str, Any]:
    """`ops cost`'s report without what both sides leave out: the producer's sends, the empty
    receives and the metric-hours. SQS requests are ops cost's own estimate of the consumer's
    receives and deletes (one each per invocation, at most one per message)."""
    from ops.cost import usage_of

    left_out = {"sqs_sent": 0.0, "sqs_empty_receives": 0.0}
    function = report["function"]
    usage = usage_of({**report["metrics"], **left_out}, function["memory_mb"], function["architecture"], 0)
    return figures_of(usage, prices, report["orders"])


def ratios(ours: Mapping[str, Any], reference: Mapping[str, Any]) -> dict[str, float | None]:
    """ours / reference by service and in total (None where the reference is 0)."""
    pairs = {
        **{s: (ours["usd_per_million_orders"][s], reference["usd_per_million_orders"][s]) for s in SERVICES},
        "total": (ours["total_usd_per_million_orders"], reference["total_usd_per_million_orders"]),
    }
    return {name: (a / b if b else None) for name, (a, b) in pairs.items()}


@contextmanager
def _profiled_emulator() -> Iterator[None]:
    """LOCAL_PROFILE=1 for an emulator started inside the block (it inherits the environment),
    this process's own setting restored afterwards."""
    before = os.environ.get("LOCAL_PROFILE")
    os.environ["LOCAL_PROFILE"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("LOCAL_PROFILE", None)
        else:
            os.environ["LOCAL_PROFILE"] = before


def _counters(pipeline: Any) -> dict[str, dict[str, Any]]:
    """The emulator's LOCAL_PROFILE counters now (SIGUSR1 dump)."""
    from bench.profile_pipeline import profile_counters

    counters = profile_counters(pipeline.session.state_dir, pipeline.session.require_state()["pid"])
    if not counters:
        raise RuntimeError("the embedded AWS wrote no LOCAL_PROFILE counters: start it with LOCAL_PROFILE=1")
    return counters


def _since(before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {
        name: {"count": value["count"] - before.get(name, {}).get("count", 0)}
        for name, value in after.items()
        if not name.startswith("_")
    }


def _send(pipeline: Any, bodies: list[str]) -> None:
    for start in range(0, len(bodies), 10):
        entries = [{"Id": str(i), "MessageBody": body} for i, body in enumerate(bodies[start : start + 10])]
        pipeline.sqs.send_message_batch(QueueUrl=pipeline.env["QUEUE_URL"], Entries=entries)


def _stored_items(pipeline: Any, table_name: str, run_id: str) -> list[dict[str, Any]]:
    """The orders this run stored (their ids begin with the run's)."""
    return [
        item
        for page in pipeline.dynamodb.get_paginator("scan").paginate(
            TableName=table_name,
            FilterExpression="begins_with(id, :run)",
            ExpressionAttributeValues={":run": {"S": f"oc-{run_id}-"}},
        )
        for item in page["Items"]
    ]


def run(pipeline: Any, table: Mapping[str, Any], progress: Callable[[str], None]) -> dict[str, Any]:
    """Send the mix to the deployed stack (its emulator started with LOCAL_PROFILE=1), count the
    run's units, wait until the metrics hold all of it, and compare. `table` is the cost table
    (results["cost"])."""
    from local.session import wait_for
    from ops import cost, observe
    from ops.aws import Clients, Endpoint
    from ops.cost_model import Prices
    from ops.snapshot import resolve_target
    from stacks.config import Names

    prices = Prices.load()
    pipeline.set_batch_size(BATCH_SIZE)
    clients = Clients(Endpoint.from_env(pipeline.session.aws_env()))
    target = resolve_target(clients, pipeline.session.prefix)
    run_id = uuid.uuid4().hex[:8]
    bodies, orders = _mix(run_id, table["duplicate_share"])
    deliveries = len(bodies)
    base = pipeline.stored()
    before = _counters(pipeline)
    started_ms = int(time.time() * 1000) - 1000
    progress(f"ops cost check: {orders} orders, {deliveries} messages at batch size {BATCH_SIZE}")
    _send(pipeline, bodies)
    wait_for(
        lambda: pipeline.stored() - base == orders and not pipeline.outstanding(),
        timeout=SETTLE_SECONDS,
        interval=0.5,
        what=f"{orders} orders stored and the jobs queue empty",
    )
    # Every message is deleted: the host wrote each invocation's logs before deleting its messages.
    counters = _since(before, _counters(pipeline))
    log_messages = [
        event["message"]
        for event in observe.log_events(pipeline.logs, target.log_group, started_ms)
        if event["timestamp"] >= started_ms
    ]
    stored_items = _stored_items(pipeline, target.orders_table, run_id)
    counts = RunCounts.from_counters(
        counters, bodies=bodies, log_messages=log_messages, stored_items=stored_items
    )
    _, architecture, _ = cost.function_shape(clients, target)
    measured = figures_of(counts.usage(architecture), prices, orders)

    metric = contract.Metric
    accepted, duplicate = (f"decision_{name}" for name in (metric.ACCEPTED, metric.DUPLICATE))
    report: dict[str, Any] = {}

    def metrics_hold_the_run() -> bool:
        since = (time.time() * 1000 - started_ms) / 60_000
        report.update(cost.measure(clients, target, since, prices))
        sums: dict[str, float] = report["metrics"]
        return (
            sums[accepted] >= orders
            and sums[duplicate] >= deliveries - orders
            and sums["sqs_deleted"] >= deliveries
            and sums["dynamodb_write_units"] >= deliveries
            and sums["logs_incoming_bytes"] >= log_bytes(log_messages)
        )

    progress("ops cost check: waiting for the metrics of the whole run")
    wait_for(
        metrics_hold_the_run,
        timeout=SETTLE_SECONDS,
        interval=1,
        what=lambda: f"the run in ops cost, last {report.get('metrics')}",
    )
    ours = comparable(report, prices)
    figures = table["batches"][str(BATCH_SIZE)]["ours"]
    against_measured = ratios(ours, measured)
    against_table = ratios(ours, figures)
    return {
        "orders": orders,
        "deliveries": deliveries,
        "batch_size": BATCH_SIZE,
        "stack": Names(pipeline.session.prefix).stack,
        "ops_cost": ours,
        "ops_cost_orders": report["orders"],
        "measured": {**measured, "counts": counts.as_json(), "architecture": architecture},
        "table": {
            "units_per_order": figures["units_per_order"],
            "usd_per_million_orders": figures["usd_per_million_orders"],
            "total_usd_per_million_orders": figures["total_usd_per_million_orders"],
        },
        "left_out": {
            "sqs_sent": report["metrics"]["sqs_sent"],
            "sqs_empty_receives": report["metrics"]["sqs_empty_receives"],
            "metric_hours": report["units"]["metric_hours"],
            "ops_cost_total_usd_per_million_orders": report["usd_per_million_orders"],
        },
        "ops_cost_metrics": report["metrics"],
        "ratios": against_measured,
        "ratio": against_measured["total"],
        "table_ratios": against_table,
        "goal": GOAL,
        "met": against_measured["total"] is not None and abs(against_measured["total"] - 1) <= GOAL,
    }


def run_alone(table: Mapping[str, Any], progress: Callable[[str], None]) -> dict[str, Any]:
    """Its own embedded AWS and deploy (bench/pipeline.py's Pipeline), stopped afterwards."""
    import shutil
    import tempfile

    from bench.pipeline import Pipeline

    state_dir = Path(tempfile.mkdtemp(prefix="bench-ops-cost-"))
    pipeline = Pipeline(state_dir, progress)
    try:
        progress("ops cost check: embedded AWS (LOCAL_PROFILE=1), cdk bootstrap + deploy")
        with _profiled_emulator():
            pipeline.session.start_emulator(pipeline.port)
        pipeline.start()
        return run(pipeline, table, progress)
    finally:
        pipeline.stop()
        shutil.rmtree(state_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from bench import report

    parser = argparse.ArgumentParser(prog="python -m bench.ops_cost_check", description=__doc__)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    return report.rerun_part(
        "bench.ops_cost_check",
        "cost",
        "cost table",
        "ops_cost",
        lambda results: run_alone(results["cost"], report.progress),
        render_ops_check,
        write_docs=not args.no_docs,
    )


if __name__ == "__main__":
    sys.exit(main())
