"""Function time per order at batch sizes 1 and 10, with a simulated DynamoDB round trip (5 ms)
and without (0), for this worker, the lab's handler (one write after another, a client per
invocation) and Powertools (its idempotency around the same write, a record at a time), side
by side in one run: first on a full core, as a function of 1,769 MB (one vCPU; this worker then
has two writes in flight), then with this process held to the stack's memory's share of a vCPU
(Lambda gives a function memory/1769 of one; this worker then writes one after another) by a
CPU cgroup where the machine allows it (bench/cpu_share.py), with each invocation's CPU.
DynamoDB is the embedded AWS in a process of its own (as AWS is elsewhere: its CPU is not the
function's), the round trip its latency fault on every item operation of both tables
(embedded_aws/faults.py). The goal (issue: ten orders for the price of one): with a 5 ms round
trip, an event of ten takes at most 2.5x the function time of an event of one, and each order
is still one write."""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench.handlers import load_worker
from bench.variants import LABELS, BenchContext, handler_of

BLOCK_BEGIN, BLOCK_END = (
    "<!-- bench-batches:begin (written by `make bench`) -->",
    "<!-- bench-batches:end -->",
)
ROUND_TRIPS_MS = (0, 5)
BATCH_SIZES = (1, 10)
GOAL_RATIO = 2.5
# "At 1,769 MB, a function has the equivalent of one vCPU", and CPU is allocated in proportion
# to memory (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html); the worker
# holds the figure, as it sizes its writes in flight by it.
ONE_VCPU_MB = load_worker().ONE_VCPU_MEMORY_MB
ORDERS_TABLE, IDEMPOTENCY_TABLE = "batch-orders", "batch-idempotency"
ITEM_ACTIONS = ("PutItem", "GetItem", "UpdateItem", "DeleteItem")
# This worker both ways: it writes one record after another below a whole vCPU and two at a time
# from 1,769 MB (writes_in_flight), so each pass shows its choice beside the other.
VARIANTS = ("ours-1", "ours-2", "lab", "powertools")
BATCH_LABELS = {
    **LABELS,
    "ours-1": "this handler, one write at a time (its choice below 1,769 MB)",
    "ours-2": "this handler, two at a time (its choice from 1,769 MB)",
}


def batch_handler(variant: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    if not variant.startswith("ours-"):
        return handler_of(variant)
    worker, in_flight = load_worker(), int(variant.removeprefix("ours-"))

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        remaining = lambda: context.get_remaining_time_in_millis() / 1000
        table = os.environ[worker.TABLE_NAME_ENV]
        result: dict[str, Any] = worker.handle_event(
            event, worker.dynamodb_client(), table, remaining, in_flight=in_flight
        )
        return result

    return handler


def event_of(ids: list[str]) -> dict[str, Any]:
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
    handler = batch_handler(variant)
    event = event_of([f"batch-{variant}-{uuid.uuid4().hex[:10]}" for _ in range(size)])
    started, cpu = time.perf_counter(), time.process_time()
    result = handler(event, BenchContext(timeout_ms=30_000))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    if result["batchItemFailures"]:
        raise RuntimeError(f"{BATCH_LABELS[variant]} failed records: {result}")
    return seconds, cpu


def _measure(session: Any, rounds: int, progress: Callable[[str], None], where: str) -> dict[str, Any]:
    """Every handler at both batch sizes and round trips, `rounds` interleaved rounds: medians of
    function time and CPU per invocation."""
    found: dict[str, Any] = {}
    for round_trip in ROUND_TRIPS_MS:
        for table in (ORDERS_TABLE, IDEMPOTENCY_TABLE):
            for action in ITEM_ACTIONS:
                session.slow_down(action=action, table=table, latency_ms=round_trip)
        progress(f"batches: {where}, {round_trip} ms round trip, {rounds} interleaved rounds")
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
                "ratio_10_to_1": round(ten / one, 2),
                "cpu_1_ms": round(cpu_one * 1000, 2),
                "cpu_10_ms": round(cpu_ten * 1000, 2),
            }
    return found


def run(progress: Callable[[str], None], rounds: int = 15, held_rounds: int = 7) -> dict[str, Any]:
    """The handlers on this machine's CPU, then (`held_rounds`) held to the stack's memory's
    share of a vCPU by a CPU cgroup, where the machine allows one."""
    import tempfile
    from pathlib import Path

    from bench.cpu_share import Unavailable, held_to
    from local.session import LocalSession, free_port
    from stacks.config import FUNCTION_MEMORY_MB as memory

    session = LocalSession(Path(tempfile.mkdtemp(prefix="bench-batch-")))
    progress("batches: embedded AWS in its own process")
    session.start_emulator(free_port())
    saved = dict(os.environ)
    held: dict[str, Any] = {}
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
            # A full core is a function of 1,769 MB: the worker sizes its writes in flight by the
            # memory Lambda tells it (AWS_LAMBDA_FUNCTION_MEMORY_SIZE).
            os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = str(ONE_VCPU_MB)
            found = _measure(session, rounds, progress, "full CPU")
            os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = str(memory)
            try:
                # The embedded AWS started before this and stays outside the limit.
                with held_to(memory / ONE_VCPU_MB) as share:
                    held = {
                        "share": share,
                        "rounds": held_rounds,
                        "handlers": _measure(session, held_rounds, progress, f"held to {share:.3f} CPU"),
                    }
            except Unavailable as why:
                progress(f"batches: not held to {memory} MB's CPU share: {why}")
                held = {"unavailable": str(why)}
        written = dynamodb.scan(TableName=ORDERS_TABLE, Select="COUNT")["Count"]
        measured_rounds = rounds + (held_rounds if "handlers" in held else 0)
        invocations = measured_rounds * len(ROUND_TRIPS_MS) * sum(BATCH_SIZES) * len(VARIANTS) + len(VARIANTS)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        session.stop_emulator()
    last = f"{ROUND_TRIPS_MS[-1]} ms"
    # The worker's own choice in each pass, by the memory it was told.
    chosen, chosen_at_memory = (f"ours-{load_worker().writes_in_flight(mb)}" for mb in (ONE_VCPU_MB, memory))
    return {
        "rounds": rounds,
        "memory_mb": memory,
        "handlers": found,
        "held_to_memory": held,
        "orders_sent": invocations,
        "orders_stored": written,
        "goal": f"this handler as it chooses, {ROUND_TRIPS_MS[-1]} ms round trip: batch of 10 <= {GOAL_RATIO}x batch of 1",
        "goal_met": found[chosen][last]["ratio_10_to_1"] <= GOAL_RATIO,
        "goal_met_at_memory": (
            held["handlers"][chosen_at_memory][last]["ratio_10_to_1"] <= GOAL_RATIO
            if "handlers" in held
            else None
        ),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def run_in_a_fresh_process() -> dict[str, Any]:
    """`run` in a new interpreter. The handlers create their clients once per process, as on
    Lambda (Powertools' when imported, ours on first use), so in a process where they already
    ran against another endpoint (`make bench` measures the handlers first) they would still
    call that one."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        from bench.report import progress

        return pool.submit(run, progress).result()


def render(result: dict[str, Any]) -> str:
    memory = result["memory_mb"]
    held = result.get("held_to_memory") or {}
    share = held.get("share", memory / ONE_VCPU_MB)
    rows = []
    for variant in VARIANTS:
        for round_trip in ROUND_TRIPS_MS:
            cell = result["handlers"][variant][f"{round_trip} ms"]
            if "handlers" in held:
                there = held["handlers"][variant][f"{round_trip} ms"]
                at_memory = f"{there['batch_1_ms']} / {there['batch_10_ms']} | {there['ratio_10_to_1']}x"
            else:
                floor_one, floor_ten = (cell[f"cpu_{size}_ms"] / share for size in BATCH_SIZES)
                at_memory = f"at least {floor_one:.0f} / {floor_ten:.0f} (the CPU / {share:.3f}) | -"
            rows.append(
                f"| {BATCH_LABELS[variant]} | {round_trip} ms | {cell['batch_1_ms']} / {cell['batch_10_ms']} | "
                f"{cell['ratio_10_to_1']}x | {cell['cpu_1_ms']} / {cell['cpu_10_ms']} | {at_memory} |"
            )
    if "handlers" in held:
        how = (
            f"then held to {memory} MB's share of a vCPU, {share:.3f} (memory/1769, by a CPU cgroup), where this "
            f"handler writes one after another, median of {held['rounds']} rounds; goal {'met' if result['goal_met_at_memory'] else 'NOT met'} there"
        )
    else:
        how = f"not held to {memory} MB's share of a vCPU: {held.get('unavailable', 'not tried')}"
    return (
        "**Batches** (median function time of one invocation, "
        f"{result['rounds']} interleaved rounds on a full core ({ONE_VCPU_MB} MB: two writes at a time), "
        f"each DynamoDB request delayed by the round trip; {result['orders_sent']:,} orders sent, "
        f"{result['orders_stored']:,} stored; load average {result['load_average_at_start']}; "
        f"goal ({result['goal']}) {'met' if result['goal_met'] else 'NOT met'}; "
        f"{how})\n\n"
        "| handler | round trip | batch of 1 / 10, ms | 10 vs 1 | CPU, batch of 1 / 10, ms | "
        f"at {memory} MB: batch of 1 / 10, ms | 10 vs 1 at {memory} MB |\n"
        "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )


if __name__ == "__main__":
    from bench import report

    found = run(report.progress)
    print(render(found))
    report.update_page(render(found), begin=BLOCK_BEGIN, end=BLOCK_END)
