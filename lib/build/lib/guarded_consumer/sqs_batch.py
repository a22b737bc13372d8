"""The batch loop around the write guard: each SQS record of an invocation parsed, written once,
counted in its decision metric and logged (RESULT for an acknowledged record, ERROR for a failed
one, which is reported in the partial batch response and so never acknowledged); writes one after
another or a few in flight by the function's memory; a FIFO queue's batch stopped at its first
failure, as AWS's rule for FIFO partial batch responses requires."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from .contract import (
    DUPLICATE_FIELD,
    ERROR_FIELD,
    ID_FIELD,
    METRICS_NAMESPACE_ENV,
    Failure,
    InvalidBody,
    Metric,
    Tag,
)
from .contract import METRICS_NAMESPACE as DEFAULT_METRICS_NAMESPACE
from .log_lines import log, print_line, printing_together
from .write_guard import ConflictingOrder, Guarded, WriteFailed, write_order


@dataclass(frozen=True)
class Consumer:
    """What a batch's records are written to, and how their bodies are read: the team's part."""

    table_name: str
    parse: Callable[[Any], Guarded]  # a message body to its record, or raises InvalidBody
    key_attribute: str = ID_FIELD  # the table's partition key: the guard's one condition


# Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB. Below that the
# worker's CPU per write (building, signing, parsing) outlasts a DynamoDB round trip of a few ms,
# and a write that waits keeps its share of the CPU for later: held to 256 MB's share by a CPU
# cgroup, two writes in flight made a batch of ten no faster at a 5 ms round trip, so writes go
# one after another. With a whole vCPU, two in flight shorten a batch of ten; the measured
# figures are in docs/benchmarks.md's generated blocks (bench/results.json).
ONE_VCPU_MEMORY_MB = 1769


def process_record(
    record: Mapping[str, Any],
    client: Any,
    consumer: Consumer,
    remaining: Callable[[], float] = lambda: math.inf,
    job: Guarded | None = None,
) -> dict[str, Any]:
    """Parse (unless `job` is its body, parsed), write, log one SQS record; raises on anything
    that must not be acknowledged. An acknowledged record's WRITE and RESULT lines name its order;
    a failed one's ERROR line (error_line) names the order and the message."""
    job = consumer.parse(record.get("body")) if job is None else job
    outcome = write_order(client, consumer.table_name, job, remaining, consumer.key_attribute)
    result = outcome.result
    log(Tag.RESULT, result)
    return result


def failure_kind(error: Exception) -> Metric:
    """The decision metric a failed record counts in."""
    if isinstance(error, InvalidBody):
        return Metric.MALFORMED
    if isinstance(error, ConflictingOrder):
        return Metric.CONFLICT
    return Metric.ERROR


def metrics_line(decision: Metric, function_name: str, namespace: str, now_ms: int) -> dict[str, Any]:
    """One embedded-metric-format record counting one record's decision: CloudWatch Logs turns it
    into a datapoint of that decision's metric, with the function as the only dimension (never
    the order id, which would make a metric per order). The other decisions are left out, not sent
    as zeros: each would cost log bytes on every order, and a minute without a decision of a kind
    is a missing datapoint that the alarms treat as not breaching."""
    return {
        "_aws": {
            "Timestamp": now_ms,
            "CloudWatchMetrics": [
                {
                    "Namespace": namespace,
                    "Dimensions": [["FunctionName"]],
                    "Metrics": [{"Name": decision.value, "Unit": "Count"}],
                }
            ],
        },
        "FunctionName": function_name,
        decision.value: 1,
    }


@dataclass(frozen=True)
class Settled:
    """A record acknowledged: its order written, or a duplicate; `result` is its RESULT line."""

    result: dict[str, Any]


@dataclass(frozen=True)
class Failed:
    """A record left on the queue, with the error that was logged for it."""

    error: Exception


Attempt = Settled | Failed


def decision_of(attempt: Attempt) -> Metric:
    """The decision metric a record's outcome counts in."""
    if isinstance(attempt, Failed):
        return failure_kind(attempt.error)
    return Metric.DUPLICATE if attempt.result[DUPLICATE_FIELD] else Metric.ACCEPTED


def _count(decision: Metric) -> None:
    """The record's metrics line, printed with its other lines as soon as it is decided: a
    line kept for the end of the batch would be lost with the batch's decisions if the
    function were stopped at its timeout."""
    emf = metrics_line(
        decision,
        os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "local"),
        os.environ.get(METRICS_NAMESPACE_ENV, DEFAULT_METRICS_NAMESPACE),
        int(time.time() * 1000),
    )
    print_line(json.dumps(emf, sort_keys=True, separators=(",", ":")))


def attempt_record(
    record: Mapping[str, Any],
    client: Any,
    consumer: Consumer,
    remaining: Callable[[], float],
    job: Guarded | None = None,
) -> Attempt:
    """One record, never raising: Settled, or Failed with its error logged; its decision counted."""
    attempt: Attempt
    try:
        job = consumer.parse(record.get("body")) if job is None else job
        attempt = Settled(process_record(record, client, consumer, remaining, job))
    except Exception as error:  # noqa: BLE001 - every failure is reported, none acknowledged
        attempt = Failed(error)
        log(Tag.ERROR, error_line(error, record, job))
    _count(decision_of(attempt))
    return attempt


def error_line(error: Exception, record: Mapping[str, Any], job: Guarded | None) -> dict[str, Any]:
    """A failed record's ERROR line: what failed, the SQS message, and the job as far as its body
    parsed (the order's id and quantity, or the id alone when only the id is valid), so that an
    operator finds every failure of an order by its id. Succeeding records print no such line:
    their WRITE and RESULT lines name the order."""
    payload: dict[str, Any] = {
        ERROR_FIELD: _error_name(error),
        "message": str(error).splitlines()[0] if str(error) else type(error).__name__,
        "message_id": record.get("messageId", ""),
        "receive_count": record.get("attributes", {}).get("ApproximateReceiveCount"),
    }
    if job is not None:
        payload.update(job.fields())
    elif isinstance(error, InvalidBody) and error.key is not None:
        payload[ID_FIELD] = error.key
    return payload


def _error_name(error: Exception) -> str:
    """An ERROR line's `error`: the failure class the worker names (any parser's refusal is
    MALFORMED), else the AWS error code or the exception's class."""
    if isinstance(error, InvalidBody):
        return Failure.MALFORMED
    return error.code if isinstance(error, WriteFailed) else type(error).__name__


def _attempt_printing_together(
    record: Mapping[str, Any], client: Any, consumer: Consumer, remaining: Callable[[], float], job: Guarded
) -> Attempt:
    """`attempt_record` on a thread of the batch: the record's lines are printed in one go as soon as
    it is done (a line printed late is a line lost if the function is stopped at its timeout)."""
    return printing_together(lambda: attempt_record(record, client, consumer, remaining, job))


def writes_in_flight(memory_mb: int | None) -> int:
    """How many of a batch's writes are in flight at once, for a function of `memory_mb`."""
    return 2 if memory_mb is not None and memory_mb >= ONE_VCPU_MEMORY_MB else 1


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool(size: int) -> ThreadPoolExecutor:
    """One pool per process, kept between invocations; the threads share the one client
    (boto3 clients are thread-safe)."""
    if size not in _POOLS:
        _POOLS[size] = ThreadPoolExecutor(max_workers=size, thread_name_prefix="write")
    return _POOLS[size]


def _attempt_all(
    records: list[Mapping[str, Any]],
    client: Any,
    consumer: Consumer,
    remaining: Callable[[], float],
    in_flight: int,
) -> list[Attempt]:
    """Every record's Attempt, in the batch's order: one after another, or with
    `in_flight` writes at once. With more than one, the bodies are parsed first, here: a
    malformed one is reported at once and never waits for a thread, and a lone order takes the
    plain path; each order is still its own conditional write and retries."""
    if in_flight <= 1:
        return [attempt_record(record, client, consumer, remaining) for record in records]
    outcomes: dict[int, Attempt] = {}
    jobs: dict[int, Guarded] = {}
    for index, record in enumerate(records):
        try:
            jobs[index] = consumer.parse(record.get("body"))
        except InvalidBody:
            outcomes[index] = attempt_record(
                record, client, consumer, remaining
            )  # reports it, writes nothing
    if len(jobs) <= 1:
        for index, job in jobs.items():
            outcomes[index] = attempt_record(records[index], client, consumer, remaining, job)
        return [outcomes[index] for index in range(len(records))]
    futures = {
        _pool(in_flight).submit(
            _attempt_printing_together, records[index], client, consumer, remaining, job
        ): index
        for index, job in jobs.items()
    }
    for future in as_completed(futures):
        outcomes[futures[future]] = future.result()
    return [outcomes[index] for index in range(len(records))]


def from_fifo_queue(record: Mapping[str, Any]) -> bool:
    """The record came from a FIFO queue: its ARN ends in `.fifo`, or it carries a message group."""
    return str(record.get("eventSourceARN", "")).endswith(".fifo") or "MessageGroupId" in (
        record.get("attributes") or {}
    )


def unfinished_fifo_records(
    records: list[Mapping[str, Any]], attempt: Callable[[Mapping[str, Any]], Attempt]
) -> list[Mapping[str, Any]]:
    """AWS's rule for a FIFO queue with partial batch responses ("Handling errors for an SQS event
    source in Lambda"): process the records one after another and stop at the first failure; that
    record and every later one are reported, so no later order of its message group is written
    before it. A duplicate (acknowledged) is not a failure."""
    for index, record in enumerate(records):
        if isinstance(attempt(record), Failed):
            return records[index:]
    return []


def handle_event(
    event: Mapping[str, Any],
    client: Any,
    consumer: Consumer,
    remaining: Callable[[], float] = lambda: math.inf,
    in_flight: int = 1,
) -> dict[str, Any]:
    """Process every record; report the failed ones so only they are retried (partial batch
    response). A failed record is logged and left on the queue, never acknowledged. `remaining`
    gives the seconds left before the function's deadline. With `in_flight` over one, that many
    of a batch's writes run at once, and each record's lines are printed together when it is
    done, with its metrics line. From a FIFO queue, records go one after another and the batch
    stops at its first failure (unfinished_fifo_records)."""
    records = list(event.get("Records", []))
    if any(from_fifo_queue(record) for record in records):
        unfinished = unfinished_fifo_records(
            records, lambda record: attempt_record(record, client, consumer, remaining)
        )
        return {"batchItemFailures": [{"itemIdentifier": r.get("messageId", "")} for r in unfinished]}
    outcomes = _attempt_all(records, client, consumer, remaining, in_flight)
    failures = [
        {"itemIdentifier": record.get("messageId", "")}
        for record, attempt in zip(records, outcomes)
        if isinstance(attempt, Failed)
    ]
    return {"batchItemFailures": failures}
