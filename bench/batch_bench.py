"""Function time per order at batch sizes 1 and 10, with a simulated DynamoDB round trip (5 ms)
and without (0), for this worker (a batch's writes two at a time), the lab's handler (one
write after another, a client per invocation) and Powertools (its idempotency around the same
write, a record at a time), side by side in one run; with each invocation's CPU, and the least
time that CPU takes at the stack's memory, where Lambda gives a function memory/1769 of a vCPU. DynamoDB is the embedded AWS in a process of its own (as AWS is
elsewhere: its CPU is not the function's), the round trip its latency fault on every item
operation of both tables (embedded_aws/faults.py). The goal (issue: ten orders for the price of
one): with a 5 ms round trip, an event of ten takes at most 2.5x the function time of an event
of one, and each order is still one write."""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench.variants import LABELS, VARIANTS, BenchContext, handler_of

BLOCK_BEGIN, BLOCK_END = (
    "<!-- bench-batches:begin (written by `make bench`) -->",
    "<!-- bench-batches:end -->",
)
ROUND_TRIPS_MS = (0, 5)
BATCH_SIZES = (1, 10)
GOAL_RATIO = 2.5
# "At 1,769 MB, a function has the equivalent of one vCPU", and CPU is allocated in proportion
# to memory (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
ONE_VCPU_MB = 1769
ORDERS_TABLE, IDEMPOTENCY_TABLE = "batch-orders", "batch-idempotency"
ITEM_ACTIONS = ("PutItem", "GetItem", "UpdateItem", "DeleteItem")


def event_of(ids: list[str]) -> dict:
    import json

    return {
        "Records": [
            {
                "messageId": f"msg-{order_id}",
                "receiptHandle": "bench",
                "body": json.dumps({"id": order_id, "quantity": 3}),
                "attributes": {"ApproximateReceiveCount": "1"},
                "eventSource": "aws:sqs",
            }
            for order_id in ids
        ]
    }


def invoke(variant: str, size: int) -> tuple[float, float]:
    """(seconds, CPU seconds of this process) of one invocation with `size` new orders; the
    embedded AWS runs in another process, so the CPU is the handler's own, all its threads."""
    handler = handler_of(variant)
    event = event_of([f"batch-{variant}-{uuid.uuid4().hex[:10]}" for _ in range(size)])
    started, cpu = time.perf_counter(), time.process_time()
    result = handler(event, BenchContext(timeout_ms=30_000))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    if result["batchItemFailures"]:
        raise RuntimeError(f"{LABELS[variant]} failed records: {result}")
    return seconds, cpu


def run(progress: Callable[[str], None], rounds: int = 15, memory_mb: int | None = None) -> dict[str, Any]:
    import tempfile
    from pathlib import Path

    from local.session import LocalSession, free_port

    session = LocalSession(Path(tempfile.mkdtemp(prefix="bench-batch-")))
    progress("batches: embedded AWS in its own process")
    session.start_emulator(free_port())
    saved = dict(os.environ)
    found: dict[str, Any] = {}
    try:
        dynamodb = session.client("dynamodb")
        for table in (ORDERS_TABLE, IDEMPOTENCY_TABLE):
            dynamodb.create_table(
                TableName=table,
                BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            )
        # Handlers create their clients from the environment, as on Lambda.
        for key in [key for key in os.environ if key.startswith("AWS_")]:
            del os.environ[key]
        os.environ.update(
            {
                **session.aws_env(),
                "TABLE_NAME": ORDERS_TABLE,
                "IDEMPOTENCY_TABLE": IDEMPOTENCY_TABLE,
                "AWS_LAMBDA_FUNCTION_NAME": "bench-worker",
            }
        )
        with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
            for variant in VARIANTS:
                invoke(variant, 1)  # imports, clients and credentials outside the figures
            for round_trip in ROUND_TRIPS_MS:
                for table in (ORDERS_TABLE, IDEMPOTENCY_TABLE):
                    for action in ITEM_ACTIONS:
                        session.slow_down(action=action, table=table, latency_ms=round_trip)
                progress(f"batches: {round_trip} ms round trip, {rounds} interleaved rounds")
                times: dict[tuple[str, int], list[float]] = {}
                cpus: dict[tuple[str, int], list[float]] = {}
                for _ in range(rounds):
                    for variant in VARIANTS:
                        for size in BATCH_SIZES:
                            seconds, cpu = invoke(variant, size)
                            times.setdefault((variant, size), []).append(seconds)
                            cpus.setdefault((variant, size), []).append(cpu)
                for variant in VARIANTS:
                    one, ten = (statistics.median(times[(variant, size)]) for size in BATCH_SIZES)
                    cpu_one, cpu_ten = (statistics.median(cpus[(variant, size)]) for size in BATCH_SIZES)
                    found.setdefault(variant, {})[f"{round_trip} ms"] = {
                        "batch_1_ms": round(one * 1000, 2),
                        "batch_10_ms": round(ten * 1000, 2),
                        "per_order_10_ms": round(ten * 100, 2),
                        "ratio_10_to_1": round(ten / one, 2),
                        "cpu_1_ms": round(cpu_one * 1000, 2),
                        "cpu_10_ms": round(cpu_ten * 1000, 2),
                    }
        written = dynamodb.scan(TableName=ORDERS_TABLE, Select="COUNT")["Count"]
        invocations = rounds * len(ROUND_TRIPS_MS) * sum(BATCH_SIZES) * len(VARIANTS) + len(VARIANTS)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        session.stop_emulator()
    ratio = found["ours"][f"{ROUND_TRIPS_MS[-1]} ms"]["ratio_10_to_1"]
    return {
        "rounds": rounds,
        "memory_mb": memory_mb or deployed_memory_mb(),
        "handlers": found,
        "orders_sent": invocations,
        "orders_stored": written,
        "goal": f"ours, {ROUND_TRIPS_MS[-1]} ms round trip: batch of 10 <= {GOAL_RATIO}x batch of 1",
        "goal_met": ratio <= GOAL_RATIO,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def _progress(message: str) -> None:
    import sys

    print(f"bench: {message}", file=sys.stderr, flush=True)


def run_in_a_fresh_process() -> dict[str, Any]:
    """`run` in a new interpreter. The handlers create their clients once per process, as on
    Lambda (Powertools' when imported, ours on first use), so in a process where they already
    ran against another endpoint (`make bench` measures the handlers first) they would still
    call that one."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(run, _progress).result()


def deployed_memory_mb() -> int:
    """The worker's memory as the stack deploys it."""
    from stacks.config import FUNCTION_MEMORY_MB

    return FUNCTION_MEMORY_MB


def render(result: dict[str, Any]) -> str:
    memory = result["memory_mb"]
    share = memory / ONE_VCPU_MB
    rows = []
    for variant in VARIANTS:
        for round_trip in ROUND_TRIPS_MS:
            cell = result["handlers"][variant][f"{round_trip} ms"]
            floor_one, floor_ten = (cell[f"cpu_{size}_ms"] / share for size in BATCH_SIZES)
            rows.append(
                f"| {LABELS[variant]} | {round_trip} ms | {cell['batch_1_ms']} | {cell['batch_10_ms']} | "
                f"{cell['per_order_10_ms']} | {cell['ratio_10_to_1']}x | "
                f"{cell['cpu_1_ms']} / {cell['cpu_10_ms']} | {floor_one:.0f} / {floor_ten:.0f} | "
                f"{floor_ten / floor_one:.1f}x |"
            )
    return (
        "**Batches** (function time of one invocation, median of "
        f"{result['rounds']} interleaved rounds; the embedded AWS in its own process, each DynamoDB item "
        "request delayed by the round trip; this handler writes a batch's records two at a time; "
        f"{result['orders_sent']:,} orders sent, {result['orders_stored']:,} stored; load average "
        f"{result['load_average_at_start']}; goal ({result['goal']}) {'met' if result['goal_met'] else 'NOT met'})\n\n"
        f"| handler | round trip | batch of 1, ms | batch of 10, ms | per order at 10, ms | 10 vs 1 | "
        f"CPU, batch of 1 / 10, ms | that CPU at {memory} MB ({share:.3f} vCPU), ms | 10 vs 1 in CPU |\n"
        "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )


if __name__ == "__main__":
    from bench import report

    found = run(_progress)
    print(render(found))
    report.update_page(render(found), begin=BLOCK_BEGIN, end=BLOCK_END)
