"""`ops cost` held to the cost table: the mix of orders the table prices (first deliveries, and
one in ten sent again), run through the real stack on the local pipeline at batch size 10, then
priced by `ops cost` from the embedded AWS's CloudWatch metrics, beside the table's figure for this
worker at that batch size. Goal: within 10% in total.

Like with like. The table leaves out the producer's SendMessage, the pollers' empty receives and
the metrics' hours; `ops cost` counts all three for a period (on a short run they are mostly the
idle minutes around it), so they are taken out of its figure here and shown beside it. Function
time differs by design: the table's is held to 256 MB's share of a vCPU, the local host's runs on a
full core, so the Lambda line shows how much of the gap is that.

`python -m bench.ops_cost_check` runs only this part (a deploy and about a minute) and writes it
into bench/results.json and docs/benchmarks.md beside the last `make bench`'s figures.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.cost_report import render_ops_check

GOAL = 0.10  # at most this far from the table's total, either way
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


def comparable(report: Mapping[str, Any], prices: Any) -> dict[str, Any]:
    """`ops cost`'s report without what the table leaves out: the producer's sends, the empty
    receives and the metric-hours. SQS requests are ops cost's own estimate of the consumer's
    receives and deletes (one each per invocation, at most one per message)."""
    from ops.cost import usage_of
    from ops.cost_model import price

    left_out = {"sqs_sent": 0.0, "sqs_empty_receives": 0.0}
    function = report["function"]
    usage = usage_of({**report["metrics"], **left_out}, function["memory_mb"], function["architecture"], 0)
    cost = price(usage, prices, orders=report["orders"]).as_json()
    by_service = {k: v for k, v in cost["by_service_per_million_orders"].items() if k != "metrics"}
    orders = report["orders"] or 1
    return {
        "units_per_order": {name: value / orders for name, value in usage.units().items()},
        "usd_per_million_orders": by_service,
        "total_usd_per_million_orders": sum(by_service.values()),
    }


def run(pipeline: Any, table: Mapping[str, Any], progress: Callable[[str], None]) -> dict[str, Any]:
    """Send the mix to the deployed stack, wait until it is stored and the metrics hold all of it,
    and compare. `table` is the cost table (results["cost"])."""
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
    bodies, orders = _mix(uuid.uuid4().hex[:8], table["duplicate_share"])
    deliveries = len(bodies)
    base = pipeline.stored()
    started_ms = int(time.time() * 1000) - 1000
    progress(f"ops cost check: {orders} orders, {deliveries} messages at batch size {BATCH_SIZE}")
    for start in range(0, deliveries, 10):
        entries = [{"Id": str(i), "MessageBody": body} for i, body in enumerate(bodies[start : start + 10])]
        pipeline.sqs.send_message_batch(QueueUrl=pipeline.env["QUEUE_URL"], Entries=entries)
    wait_for(
        lambda: pipeline.stored() - base == orders and not pipeline.outstanding(),
        timeout=SETTLE_SECONDS,
        interval=0.5,
        what=f"{orders} orders stored and the jobs queue empty",
    )
    metric = observe.CONTRACT.Metric
    accepted, duplicate = (f"decision_{name}" for name in (metric.ACCEPTED, metric.DUPLICATE))
    report: dict[str, Any] = {}

    def measured() -> bool:
        since = (time.time() * 1000 - started_ms) / 60_000
        report.update(cost.measure(clients, target, since, prices))
        sums: dict[str, float] = report["metrics"]
        return (
            sums[accepted] >= orders
            and sums[duplicate] >= deliveries - orders
            and sums["sqs_deleted"] >= deliveries
            and sums["dynamodb_write_units"] >= deliveries
            and sums["logs_incoming_bytes"] > 0
        )

    progress("ops cost check: waiting for the metrics of the whole run")
    wait_for(
        measured,
        timeout=SETTLE_SECONDS,
        interval=1,
        what=lambda: f"the run in ops cost, last {report.get('metrics')}",
    )
    ours = comparable(report, prices)
    figures = table["batches"][str(BATCH_SIZE)]["ours"]
    ratio = ours["total_usd_per_million_orders"] / figures["total_usd_per_million_orders"]
    return {
        "orders": orders,
        "deliveries": deliveries,
        "batch_size": BATCH_SIZE,
        "stack": Names(pipeline.session.prefix).stack,
        "ops_cost": ours,
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
        "ratio": ratio,
        "goal": GOAL,
        "met": abs(ratio - 1) <= GOAL,
    }


def run_alone(table: Mapping[str, Any], progress: Callable[[str], None]) -> dict[str, Any]:
    """Its own embedded AWS and deploy (bench/pipeline.py's Pipeline), stopped afterwards."""
    import shutil
    import tempfile

    from bench.pipeline import Pipeline

    state_dir = Path(tempfile.mkdtemp(prefix="bench-ops-cost-"))
    pipeline = Pipeline(state_dir, progress)
    try:
        progress("ops cost check: embedded AWS, cdk bootstrap + deploy")
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
