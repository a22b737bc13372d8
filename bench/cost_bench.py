"""Dollars per million orders for this worker, the lab's handler and Powertools idempotency at
batch sizes 1 and 10, beside the floor any consumer of this shape pays, at the list prices of
ops/prices.json (priced by ops/cost_model.py, as `python -m ops cost` prices a deployment).

Measured here, against moto's server in this process (bench/handler_bench.py): DynamoDB write and
read units by table, counted from item sizes, and the bytes of every line each handler prints,
for batches of first deliveries and the same batches delivered again. Function time is the batch
benchmark's (bench/batch_bench.py), held to the deployed memory's share of a vCPU with a 5 ms
round trip; a duplicate's time is that times the duplicate/first ratio measured here.

Beside the per-order figures, the fixed costs a month (`fixed_monthly`): the alarm metrics and
dashboard of the lab stack as synthesized with cdk.json's context, and the custom metrics the
worker's metrics lines make, priced as `python -m ops cost` prices a deployed stack's.

`python -m bench.cost_bench` runs only this part and writes it into bench/results.json and the
generated block of docs/benchmarks.md, keeping every other figure of the last `make bench`;
`--fixed-only` recounts the fixed costs alone, keeping the last measured figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from bench.cost_report import (
    CHECKED_LINES,
    CHECKED_PLATFORM_LINE,
    FLOOR_GOAL,
    POWERTOOLS_GOAL,
    ROUND_TRIP_MS,
    SERVICES,
    render,
)
from bench.variants import LABELS, VARIANTS, BenchContext, handler_of

BATCH_SIZES = (1, 10)
# Redeliveries per first delivery. SQS standard delivers at least once and redelivers what a
# timed-out or failed invocation did not delete; producers resend on a lost reply. One in ten is
# a pessimistic round share, so what a duplicate costs shows; the per-delivery units are kept in
# results.json for any other share.
DUPLICATE_SHARE = 0.1
# The batch benchmark's variant name for each handler at the deployed memory (256 MB: the worker
# writes one record after another below a whole vCPU).
BATCH_VARIANT = {"ours": "ours-1", "lab": "lab", "powertools": "powertools"}
# Lambda's own lines, one of each per invocation in the text log format the stack uses; the
# sizes are those of the lines as the embedded AWS writes them (lambda_host/host.py).
PLATFORM_LINES = {
    "START": "START RequestId: 8f5b2a4e-3c1d-4e6f-9a7b-0c2d4e6f8a1b Version: $LATEST",
    "END": "END RequestId: 8f5b2a4e-3c1d-4e6f-9a7b-0c2d4e6f8a1b",
    "REPORT": (
        "REPORT RequestId: 8f5b2a4e-3c1d-4e6f-9a7b-0c2d4e6f8a1b\tDuration: 29.76 ms\tBilled Duration: 30 ms"
        "\tMemory Size: 256 MB\tMax Memory Used: 78 MB"
        "\tRuntime Version: python:3.14.v20 arn:aws:lambda:us-east-1::runtime:0123456789abcdef"
    ),
}


def line_kind(line: str) -> str:
    """The kind of a printed line: its tag, or EMF for an embedded-metric-format object."""
    if line.startswith("{") and '"_aws"' in line:
        return "EMF"
    return line.split(" ", 1)[0]


def log_bytes_by_kind(output: str) -> dict[str, int]:
    """UTF-8 bytes of the message of each line (what CloudWatch ingests as one event), by kind."""
    found: dict[str, int] = {}
    for line in output.splitlines():
        if line:
            kind = line_kind(line)
            found[kind] = found.get(kind, 0) + len(line.encode())
    return found


def _event(ids: list[str]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": f"msg-{order_id}-{uuid.uuid4().hex[:6]}",
                "receiptHandle": "bench",
                "body": json.dumps({"id": order_id, "quantity": 3}),
                "attributes": {"ApproximateReceiveCount": "1"},
                "eventSource": "aws:sqs",
            }
            for order_id in ids
        ]
    }


def measure(orders: int = 20, progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Per delivery, for every handler and batch size: DynamoDB units by table, log bytes by kind
    of line, SQS body bytes per batch, and the median time of an invocation (5 ms round trip)."""
    from bench.handler_bench import READ_ACTIONS, WRITE_ACTIONS, EmbeddedDynamoDB
    from bench.stats import read_units, write_units
    from stacks.config import FUNCTION_MEMORY_MB

    db = EmbeddedDynamoDB()
    db.start()
    saved_memory = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
    # The worker sizes its writes in flight by the memory Lambda tells it.
    os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = str(FUNCTION_MEMORY_MB)
    found: dict[str, Any] = {}
    try:
        for variant in VARIANTS:
            handler = handler_of(variant)
            with contextlib.redirect_stdout(io.StringIO()):
                handler(_event([f"cost-warm-{uuid.uuid4().hex[:8]}"]), BenchContext())
            db.latency_seconds = ROUND_TRIP_MS / 1000
            for size in BATCH_SIZES:
                progress(f"cost: {LABELS[variant]}, batches of {size}, {orders} orders twice")
                ids = [f"cost-{variant}-{uuid.uuid4().hex[:10]}" for _ in range(orders)]
                batches = [ids[i : i + size] for i in range(0, len(ids), size)]
                cell: dict[str, Any] = {}
                for delivery in ("first", "duplicate"):
                    output, times, body_bytes = io.StringIO(), [], []
                    with db.record() as requests, contextlib.redirect_stdout(output):
                        for batch in batches:
                            event = _event(batch)
                            body_bytes.append(sum(len(r["body"].encode()) for r in event["Records"]))
                            started = time.perf_counter()
                            result = handler(event, BenchContext(timeout_ms=30_000))
                            times.append((time.perf_counter() - started) * 1000)
                            if result["batchItemFailures"]:
                                raise RuntimeError(f"{LABELS[variant]} failed records: {result}")
                    by_table: dict[str, dict[str, float]] = {}
                    for request in requests:
                        units = by_table.setdefault(request["table"], {"write": 0.0, "read": 0.0})
                        if request["action"] in WRITE_ACTIONS:
                            units["write"] += write_units(request["before"], request["after"]) / orders
                        elif request["action"] in READ_ACTIONS:
                            units["read"] += read_units(request["before"], request["consistent"]) / orders
                    cell[delivery] = {
                        "dynamodb_units_by_table": by_table,
                        "log_bytes_by_kind": {
                            kind: count / orders
                            for kind, count in log_bytes_by_kind(output.getvalue()).items()
                        },
                        "max_batch_body_bytes": max(body_bytes),
                        "median_ms": round(statistics.median(times), 2),
                    }
                found.setdefault(variant, {})[str(size)] = cell
            db.latency_seconds = 0
    finally:
        if saved_memory is None:
            os.environ.pop("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", None)
        else:
            os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = saved_memory
        db.stop()
    return {"orders": orders, "round_trip_ms": ROUND_TRIP_MS, "handlers": found}


def invocation_ms(batches: Mapping[str, Any], variant: str, size: int) -> tuple[float, str]:
    """(first delivery's function time of one invocation, where it comes from): held to the
    deployed memory's CPU share where the batch benchmark could, else on a full core."""
    held = batches.get("held_to_memory") or {}
    key = BATCH_VARIANT[variant]
    if "handlers" in held:
        return held["handlers"][key][f"{ROUND_TRIP_MS} ms"][
            f"batch_{size}_ms"
        ], f"held to {held['share']:.3f} CPU"
    return batches["handlers"][key][f"{ROUND_TRIP_MS} ms"][f"batch_{size}_ms"], "full core (not held)"


def _sum_units(cell: Mapping[str, Any], kind: str, table: str | None = None) -> float:
    return math.fsum(
        units[kind] for name, units in cell["dynamodb_units_by_table"].items() if table in (None, name)
    )


def price_all(
    measured: Mapping[str, Any],
    batches: Mapping[str, Any],
    memory_mb: int,
    duplicate_share: float = DUPLICATE_SHARE,
    prices: Any = None,
) -> dict[str, Any]:
    """Units and dollars per million orders by service for every handler and batch size, the
    floor, and the goals, from `measure`'s figures and the batch benchmark's."""
    from bench.handler_bench import IDEMPOTENCY_TABLE
    from ops.cost_model import Prices, Usage, billed_gb_seconds, price, sqs_billed_requests

    prices = prices or Prices.load()
    deliveries = {"first": 1.0, "duplicate": duplicate_share}  # per order
    rows: dict[str, Any] = {}
    for size in BATCH_SIZES:
        key = str(size)
        per_batch = 1 + duplicate_share  # deliveries per order, in batches of `size`
        checked_bytes = (
            math.fsum(
                measured["handlers"]["ours"][key][d]["log_bytes_by_kind"].get(tag, 0) * share
                for d, share in deliveries.items()
                for tag in CHECKED_LINES
            )
            + len(PLATFORM_LINES[CHECKED_PLATFORM_LINE].encode()) * per_batch / size
        )
        floor = Usage(
            sqs_requests=2 * per_batch / size,
            invocations=per_batch / size,
            gb_seconds=billed_gb_seconds([1], memory_mb) * per_batch / size,  # AWS bills 1 ms at least
            write_units=per_batch,
            log_bytes=checked_bytes,
        )
        cells: dict[str, tuple[Any, dict[str, Any] | None]] = {"floor": (floor, None)}
        for variant in VARIANTS:
            cell = measured["handlers"][variant][key]
            first_ms, source = invocation_ms(batches, variant, size)
            ratio = cell["duplicate"]["median_ms"] / cell["first"]["median_ms"]
            ms = {"first": first_ms, "duplicate": first_ms * ratio}
            platform = sum(len(line.encode()) for line in PLATFORM_LINES.values())
            usage = Usage(
                sqs_requests=math.fsum(
                    (sqs_billed_requests(cell[d]["max_batch_body_bytes"]) + sqs_billed_requests(0)) * s / size
                    for d, s in deliveries.items()
                ),
                invocations=per_batch / size,
                gb_seconds=math.fsum(
                    billed_gb_seconds([ms[d]], memory_mb) * s / size for d, s in deliveries.items()
                ),
                write_units=math.fsum(_sum_units(cell[d], "write") * s for d, s in deliveries.items()),
                read_units=math.fsum(_sum_units(cell[d], "read") * s for d, s in deliveries.items()),
                log_bytes=math.fsum(
                    (sum(cell[d]["log_bytes_by_kind"].values()) + platform / size) * s
                    for d, s in deliveries.items()
                ),
            )
            extra = math.fsum(
                _sum_units(cell[d], "write", IDEMPOTENCY_TABLE) * s for d, s in deliveries.items()
            )
            cells[variant] = (usage, {"time_source": source, "idempotency_table_write_units": extra})
        row: dict[str, Any] = {}
        for name, (usage, notes) in cells.items():
            cost = price(usage, prices, orders=1)
            row[name] = {
                "units_per_order": usage.units(),
                "usd_per_million_orders": {s: cost.by_service[s] * 1e6 for s in SERVICES},
                "total_usd_per_million_orders": cost.total * 1e6,
                **(notes or {}),
            }
        ours, floor_total = (
            row["ours"]["total_usd_per_million_orders"],
            row["floor"]["total_usd_per_million_orders"],
        )
        powertools = row["powertools"]["total_usd_per_million_orders"]
        row["goals"] = {
            "over_floor": ours / floor_total,
            "over_floor_met": ours / floor_total <= FLOOR_GOAL,
            "powertools_over_ours": powertools / ours,
            "powertools_met": powertools / ours >= POWERTOOLS_GOAL,
        }
        rows[key] = row
    return {
        "duplicate_share": duplicate_share,
        "memory_mb": memory_mb,
        "prices": {"file": "ops/prices.json", "region": prices.region, "as_of": prices.as_of},
        "batches": rows,
    }


def log_lines(measured: Mapping[str, Any], size: int = 1, prices: Any = None) -> dict[str, Any]:
    """Bytes and dollars per million orders of each kind of line this worker prints (first
    deliveries, batches of `size`), Lambda's own lines spread over the batch."""
    from ops.cost_model import Prices

    prices = prices or Prices.load()
    printed = dict(measured["handlers"]["ours"][str(size)]["first"]["log_bytes_by_kind"])
    printed.update({kind: len(line.encode()) / size for kind, line in PLATFORM_LINES.items()})
    return {
        "batch_size": size,
        "lines": {
            kind: {"bytes": count, "usd_per_million_orders": count * prices.log_byte * 1e6}
            for kind, count in printed.items()
        },
    }


def stack_template() -> dict[str, Any]:
    """The lab stack's CloudFormation template, synthesized in this process with cdk.json's
    context (as `cdk synth` makes it; no AWS call)."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from bench.variants import ROOT
    from stacks.config import StackConfig
    from stacks.consumer_stack import ConsumerStack

    app = cdk.App(context=json.loads((ROOT / "cdk.json").read_text())["context"])
    config = StackConfig.from_context(app.node.try_get_context)
    template: dict[str, Any] = Template.from_stack(
        ConsumerStack(app, config.names.stack, config=config)
    ).to_json()
    return template


def fixed_costs(template: Mapping[str, Any], prices: Any = None) -> dict[str, Any]:
    """The stack's fixed costs a month (ops/cost_model.py `fixed_monthly`): its template's alarm
    metrics and dashboards, and the custom metrics the worker makes for one function."""
    from ops.cost import worker_custom_metrics
    from ops.cost_model import Prices, fixed_monthly, template_fixed_units
    from stacks.config import DEFAULT_PREFIX, Names

    prices = prices or Prices.load()
    units = template_fixed_units(template, worker_custom_metrics(Names(DEFAULT_PREFIX).worker_function))
    return {
        **fixed_monthly(units, prices).as_json(),
        "from": "the lab stack synthesized with cdk.json's context",
    }


def run(
    batches: Mapping[str, Any], orders: int = 20, progress: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    import logging

    from bench import report
    from stacks.config import FUNCTION_MEMORY_MB

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
    with contextlib.redirect_stdout(io.StringIO()):
        measured = measure(orders, progress)
    cost = price_all(measured, batches, FUNCTION_MEMORY_MB)
    cost["log_lines"] = log_lines(measured)
    progress("cost: the stack's fixed costs (synthesizing its template)")
    cost["fixed_monthly"] = fixed_costs(stack_template())
    cost["measured"] = measured
    cost["measured_on"] = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "commit": report.machine()["commit"],
        "orders_per_handler_and_batch_size": orders,
    }
    return cost


def run_in_a_fresh_process(batches: Mapping[str, Any], orders: int = 20) -> dict[str, Any]:
    """`run` in a new interpreter: the handlers keep their clients per process, as on Lambda, so
    in one where they already ran against another endpoint they would still call that one."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        from bench.report import progress

        return pool.submit(run, dict(batches), orders, progress).result()


def main(argv: list[str] | None = None) -> int:
    import logging

    from bench import report

    parser = argparse.ArgumentParser(prog="python -m bench.cost_bench", description=__doc__)
    parser.add_argument("--orders", type=int, default=20, help="orders per handler and batch size")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument(
        "--fixed-only",
        action="store_true",
        help="recount only the fixed costs a month (the stack's template), keeping the measured figures",
    )
    args = parser.parse_args(argv)
    if args.orders < 10 or args.orders % 10:
        print("bench.cost_bench: --orders must be a multiple of 10, at least 10", file=sys.stderr)
        return 2
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    if args.fixed_only:
        return report.rerun_part(
            "bench.cost_bench",
            "cost",
            "cost table",
            "cost",
            lambda results: {**results["cost"], "fixed_monthly": fixed_costs(stack_template())},
            render,
            write_docs=not args.no_docs,
        )
    return report.rerun_part(
        "bench.cost_bench",
        "batches",
        "batch figures",
        "cost",
        lambda results: run(results["batches"], args.orders, report.progress),
        render,
        write_docs=not args.no_docs,
    )


if __name__ == "__main__":
    sys.exit(main())
