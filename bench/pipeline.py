"""Throughput of the local pipeline: the real stack deployed into the embedded AWS with the CDK
CLI, messages sent to its queue and acknowledged (deleted) by the local Lambda host running the
deployed worker under its own role, IAM enforced, at batch sizes 1 and 10, and at batch size 10
with each PutItem delayed by a simulated network round trip (the embedded AWS's latency fault).

The producer keeps at most a fixed backlog of messages ahead of the stored orders. moto's SQS
scans every message in the queue, several times, on each receive (its retention check recomputes
all queue attributes), so with everything sent at once the emulator, not the host, sets the pace
and gets slower the deeper the queue. A bounded backlog measures the host at a steady queue depth,
which is what shows whether it slows down as a run grows. Progress is sampled from the orders
table's item count (cheap), the end is when the queue reports nothing visible or in flight, and
each run checks that every order was stored exactly once."""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.stats import decile_rates, summarize

# Every poll is a request the emulator serves beside the host's; polling faster slows the run.
POLL_SECONDS = 0.1


class Pipeline:
    """One embedded AWS with the stack deployed at a batch size; `run` measures one drain."""

    def __init__(self, state_dir: Path, progress: Callable[[str], None]) -> None:
        from local.session import LocalSession, free_port

        self.progress = progress
        self.session = LocalSession(state_dir, context={"batch_size": "1"})
        self.port = free_port()
        self.env: dict[str, str] = {}
        self.deploy_seconds: float | None = None

    def start(self) -> None:
        self.session.start_emulator(self.port)
        started = time.perf_counter()
        self.session.deploy()
        self.deploy_seconds = time.perf_counter() - started
        self.env = self.session.user_env()
        self.sqs = self.session.client("sqs")
        self.logs = self.session.client("logs")
        self.dynamodb = self.session.client("dynamodb")
        self.lambda_api = self.session.client("lambda")

    def set_batch_size(self, batch_size: int) -> None:
        """What `cdk deploy -c batch_size=N` changes, without a redeploy: the mapping's BatchSize.
        The host rereads mappings every half second; the records per invocation of each run show
        the batch size that was in effect."""
        from local.session import wait_for

        mapping = self.lambda_api.list_event_source_mappings(FunctionName=self.env["FUNCTION_NAME"])[
            "EventSourceMappings"
        ][0]
        if mapping["BatchSize"] != batch_size:
            self.lambda_api.update_event_source_mapping(UUID=mapping["UUID"], BatchSize=batch_size)
            wait_for(
                lambda: (
                    self.lambda_api.get_event_source_mapping(UUID=mapping["UUID"])["BatchSize"] == batch_size
                ),
                timeout=30,
                what=f"the mapping to report batch size {batch_size}",
            )

    def stop(self) -> None:
        # No `cdk destroy`: the emulator keeps everything in memory, so stopping it removes it all.
        self.session.stop_emulator()

    def outstanding(self) -> int:
        from ops.observe import queue_counters

        counters = queue_counters(self.sqs, self.env["QUEUE_URL"])
        return counters["visible"] + counters["in_flight"] + counters["delayed"]

    def stored(self) -> int:
        """Items in the orders table: cheap to read here, unlike the queue's counters."""
        table = self.dynamodb.describe_table(TableName=self.env["ORDERS_TABLE"])["Table"]
        return int(table["ItemCount"])

    def run(self, messages: int, batch_size: int, backlog: int, timeout: float) -> dict[str, Any]:
        """Send `messages` orders, never more than `backlog` ahead of the stored ones, wait until
        the queue is empty, and check each order was stored exactly once."""
        from local.session import wait_for
        from ops.observe import executions

        if self.outstanding():
            raise RuntimeError("the jobs queue is not empty before a run")
        run_id = uuid.uuid4().hex[:8]
        bodies = [json.dumps({"id": f"tp-{run_id}-{i}", "quantity": 1 + i % 10}) for i in range(messages)]
        base = self.stored()
        # The host writes an invocation's log lines before deleting its messages, so every line of the
        # previous run is older than this.
        start_ms = int(time.time() * 1000)
        deadline = time.monotonic() + timeout
        started = time.perf_counter()
        samples: list[tuple[float, int]] = []
        sent = 0

        def done() -> int:
            count = self.stored() - base
            samples.append((time.perf_counter() - started, count))
            return count

        def room() -> int:
            return backlog - (sent - done())

        while sent < messages:
            free = wait_for(
                lambda: max(room(), 0),
                timeout=max(deadline - time.monotonic(), 1),
                interval=POLL_SECONDS,
                what=f"room in the backlog at batch size {batch_size}",
            )
            allowed = min(free, messages - sent)
            while allowed > 0:
                chunk = bodies[sent : sent + min(10, allowed)]
                response = self.sqs.send_message_batch(
                    QueueUrl=self.env["QUEUE_URL"],
                    Entries=[{"Id": str(n), "MessageBody": body} for n, body in enumerate(chunk)],
                )
                if response.get("Failed"):
                    raise RuntimeError(f"SendMessageBatch failed: {response['Failed'][0]}")
                sent += len(chunk)
                allowed -= len(chunk)
        all_sent = time.perf_counter() - started
        wait_for(
            lambda: done() >= messages,
            timeout=max(deadline - time.monotonic(), 1),
            interval=POLL_SECONDS,
            what=f"{messages} orders stored at batch size {batch_size}",
        )
        wait_for(
            lambda: self.outstanding() == 0,
            timeout=max(deadline - time.monotonic(), 1),
            interval=0.05,
            what=f"{messages} messages acknowledged at batch size {batch_size}",
        )
        elapsed = time.perf_counter() - started
        stored = self._count_stored(run_id)
        if stored != messages:
            raise RuntimeError(f"{stored} of {messages} orders stored after the queue drained")
        runs = executions(self.logs, self.env["LOG_GROUP"], start_ms)
        return {
            "messages": messages,
            "batch_size": batch_size,
            "backlog": backlog,
            "seconds": elapsed,
            "messages_per_second": messages / elapsed,
            "all_sent_after_seconds": all_sent,
            "invocations": runs,
            "mean_records_per_invocation": messages / runs if runs else None,
            "decile_rates": [round(rate, 1) if rate else None for rate in decile_rates(samples, messages)],
        }

    def _count_stored(self, run_id: str) -> int:
        count = 0
        for page in self.dynamodb.get_paginator("scan").paginate(
            TableName=self.env["ORDERS_TABLE"],
            Select="COUNT",
            FilterExpression="begins_with(id, :run)",
            ExpressionAttributeValues={":run": {"S": f"tp-{run_id}-"}},
        ):
            count += page["Count"]
        return count


def growth(deciles: list[float | None]) -> float | None:
    """Rate in the last measured tenths over the first ones (the final tenth is a tail of
    partially filled batches, so tenths 2-3 are compared with tenths 8-9)."""
    early = [rate for rate in deciles[1:3] if rate]
    late = [rate for rate in deciles[7:9] if rate]
    if not early or not late:
        return None
    return statistics.mean(late) / statistics.mean(early)


WARMUP_MESSAGES = 200


def run(
    *,
    state_dir: Path,
    plan: list[tuple[int, int, int, float]],
    backlog: dict[int, int],
    budget_seconds: float,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """`plan`: (batch size, messages, repeats, round trip in ms), in order, each batch size after
    an uncounted warm-up of WARMUP_MESSAGES; the round trip delays every PutItem on the orders
    table. A step whose estimated time, from the rate measured so far at that batch size and
    round trip, exceeds what is left of the budget is skipped and reported with the reason."""
    pipeline = Pipeline(state_dir, progress)
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    began = time.perf_counter()
    try:
        progress("pipeline: embedded AWS, cdk bootstrap + deploy")
        pipeline.start()
        rates: dict[tuple[int, float], float] = {}
        warmed: set[int] = set()
        for batch_size, messages, repeats, round_trip in plan:
            step = (batch_size, round_trip)
            pipeline.set_batch_size(batch_size)
            pipeline.session.slow_down(
                action="PutItem", table=pipeline.env["ORDERS_TABLE"], latency_ms=round_trip
            )
            left = budget_seconds - (time.perf_counter() - began)
            estimate = messages * repeats / rates[step] if step in rates else None
            if estimate is not None and estimate > left:
                reason = (
                    f"estimated {estimate:.0f} s at the {rates[step]:.0f} msg/s measured, "
                    f"over the {max(left, 0):.0f} s left of the pipeline budget"
                )
                progress(
                    f"pipeline: skipping {messages} messages x{repeats} at batch size {batch_size}: {reason}"
                )
                skipped.append(
                    {
                        "batch_size": batch_size,
                        "messages": messages,
                        "repeats": repeats,
                        "round_trip_ms": round_trip,
                        "reason": reason,
                    }
                )
                continue
            if batch_size not in warmed:
                # Cold sandboxes and the pollers' scaling ramp belong to the cold-start figures,
                # not to the steady rate this step measures.
                progress(
                    f"pipeline: warm-up, {WARMUP_MESSAGES} messages at batch size {batch_size} (not counted)"
                )
                pipeline.run(WARMUP_MESSAGES, batch_size, backlog[batch_size], timeout=max(120.0, left))
                warmed.add(batch_size)
            found = []
            for repeat in range(repeats):
                progress(
                    f"pipeline: {messages} messages at batch size {batch_size}, {round_trip:g} ms round trip "
                    f"(run {repeat + 1}/{repeats})"
                )
                result = pipeline.run(messages, batch_size, backlog[batch_size], timeout=max(120.0, left))
                progress(
                    f"pipeline:   {result['messages_per_second']:.0f} msg/s, "
                    f"{result['mean_records_per_invocation'] or 0:.1f} records per invocation"
                )
                found.append(result)
            rates[step] = statistics.median(r["messages_per_second"] for r in found)
            results.append(
                {
                    "batch_size": batch_size,
                    "round_trip_ms": round_trip,
                    "messages": messages,
                    "backlog": backlog[batch_size],
                    "messages_per_second": summarize([r["messages_per_second"] for r in found], "msg/s"),
                    "late_over_early_rate": [growth(r["decile_rates"]) for r in found],
                    "runs": found,
                }
            )
    finally:
        progress("pipeline: stopping the embedded AWS")
        pipeline.stop()
    return {
        "what": "send (SendMessageBatch, bounded backlog) to acknowledged (deleted by the local Lambda "
        f"host), real stack deployed with the CDK CLI, IAM enforced, after an uncounted warm-up of "
        f"{WARMUP_MESSAGES} messages at each batch size",
        "results": results,
        "skipped": skipped,
        "deploy_seconds": pipeline.deploy_seconds,
    }
