"""Idempotent order worker: SQS records in, one conditional DynamoDB PutItem per order.

The duplicate guard is the order item itself, keyed on the business `id` (a producer that
sends the same order twice gets a new SQS message id each time, so the message id cannot be
the key). The write is a single atomic `PutItem ... attribute_not_exists(id)`; a read before the
write would race with a concurrent delivery of the same order.

Pure core (`parse_job`, `decide`) first, then the thin shell that talks to DynamoDB and logs.
Standard library and boto3 only: the Lambda Python runtime provides both. The names the stack
and `ops` share with it are in order_contract.py, beside it.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from order_contract import (
    CONDITION,
    DECISION_FIELD,
    DUPLICATE_FIELD,
    ERROR_FIELD,
    EXPIRES_AT_FIELD,
    METRICS_NAMESPACE_ENV,
    ORDER_RETENTION_SECONDS_ENV,
    TABLE_NAME_ENV,
    Decision,
    Metric,
    Tag,
    WriteOutcome,
    line,
    plain_item,
)
from order_contract import METRICS_NAMESPACE as DEFAULT_METRICS_NAMESPACE

UNIT_PRICE_CENTS = 250
HANDLING_CENTS = 100
MIN_QUANTITY, MAX_QUANTITY = 1, 10
_FIELDS = ("id", "quantity")

# How long a write may take. The client fails fast (short timeouts, no retries of its own) and
# `put_order` retries what is worth retrying while the function's remaining time allows, so a
# slow or throttled DynamoDB makes a record fail (reported, retried by SQS) instead of timing out
# the whole batch. Retrying a conditional write is safe: if an earlier attempt did write, the
# retry is rejected with the identical item and the delivery is acknowledged as a duplicate.
CONNECT_TIMEOUT_SECONDS = 0.3
READ_TIMEOUT_SECONDS = 1.0
ATTEMPT_SECONDS = CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS  # the longest one attempt can take
DEADLINE_MARGIN_SECONDS = 0.1  # kept back for logging and returning the batch response
MAX_ATTEMPTS = 4
BACKOFF_BASE_SECONDS, BACKOFF_CAP_SECONDS = 0.05, 1.0
# Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB. Below that the
# worker's CPU per write (building, signing, parsing) outlasts a DynamoDB round trip of a few ms,
# and a write that waits keeps its share of the CPU for later: held to 256 MB's share by a CPU
# cgroup, two writes in flight made a batch of ten no faster at a 5 ms round trip, so writes go
# one after another. With a whole vCPU, two in flight shorten a batch of ten; the measured
# figures are in docs/benchmarks.md's generated blocks (bench/results.json).
ONE_VCPU_MEMORY_MB = 1769
RETRYABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


# --- pure core ---------------------------------------------------------------------------


class JobError(ValueError):
    """The message body is not a valid job; the message names the problem in one line, and
    `order_id` is the body's id when that much of it is valid (the ERROR line carries it)."""

    def __init__(self, message: str, order_id: str | None = None) -> None:
        super().__init__(message)
        self.order_id = order_id


class ConflictingOrder(RuntimeError):
    """An order with this id was already stored with different details."""


class OutOfTime(RuntimeError):
    """Too little of the function's time is left to finish this record's write."""


class WriteFailed(RuntimeError):
    """The write failed for a reason other than its condition; `code` names the AWS error."""

    def __init__(self, code: str, attempts: int, detail: str) -> None:
        super().__init__(f"PutItem failed after {attempts} attempt{'s' if attempts > 1 else ''}: {detail}")
        self.code = code
        self.attempts = attempts


@dataclass(frozen=True)
class Job:
    id: str
    quantity: int

    @property
    def total_cents(self) -> int:
        return self.quantity * UNIT_PRICE_CENTS + HANDLING_CENTS

    def item(self) -> dict[str, Any]:
        return {"id": self.id, "quantity": self.quantity, "total_cents": self.total_cents}


def _clip(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_job(body: Any) -> Job:
    """Parse an SQS message body into a Job, or raise JobError naming the bad field and value."""
    if not isinstance(body, str):
        raise JobError(f"body must be a string, got {type(body).__name__}")
    try:
        data = json.loads(body, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except JobError:
        raise
    except ValueError as error:
        raise JobError(f"body is not valid JSON: {str(error).splitlines()[0]}") from None
    except RecursionError:
        raise JobError("body is not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise JobError(f"body must be a JSON object with id and quantity, got {type(data).__name__}")
    id_problem = _id_problem(data["id"]) if "id" in data else "missing field: id"
    known_id = data["id"] if id_problem is None else None  # named by every later error
    missing = [key for key in _FIELDS if key not in data]
    if missing:
        raise JobError(f"missing field: {', '.join(missing)}", known_id)
    extra = sorted(key for key in data if key not in _FIELDS)
    if extra:
        raise JobError(f"unexpected field: {', '.join(_clip(key, 40) for key in extra)}", known_id)
    if id_problem is not None:
        raise JobError(id_problem)
    order_id, quantity = data["id"], data["quantity"]
    # bool is a subclass of int in Python; JSON true/false are not quantities.
    if isinstance(quantity, bool) or not isinstance(quantity, int):
        raise JobError(
            f"quantity must be an integer, got {type(quantity).__name__} {_clip(quantity)}", order_id
        )
    if not MIN_QUANTITY <= quantity <= MAX_QUANTITY:
        raise JobError(f"quantity must be {MIN_QUANTITY}..{MAX_QUANTITY}, got {_clip(quantity)}", order_id)
    return Job(id=order_id, quantity=quantity)


def _id_problem(order_id: Any) -> str | None:
    """What is wrong with a body's `id`, in one line; None for a valid id."""
    if not isinstance(order_id, str):
        return f"id must be a string, got {type(order_id).__name__} {_clip(order_id)}"
    if not order_id.strip():
        return f"id must be a non-empty string, got {_clip(order_id)}"
    try:
        size = len(order_id.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate such as "\ud800": JSON allows it, DynamoDB does not
        return f"id is not valid UTF-8 text, got {_clip(order_id)}"
    if size > 1024:
        # DynamoDB's limit for a string partition key is 2048 bytes; 1024 keeps ids sane.
        return f"id is too long: {size} bytes (max 1024)"
    return None


def _reject_constant(name: str) -> None:
    raise JobError(f"body is not valid JSON: {name} is not a JSON value")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise JobError(f"duplicate field: {', '.join(_clip(key, 40) for key in repeated)}")
    return dict(pairs)


@dataclass(frozen=True)
class Outcome:
    """What a delivery amounts to, and the result line it reports."""

    decision: Decision  # written or duplicate
    job: Job

    @property
    def result(self) -> dict[str, Any]:
        first = self.decision == Decision.WRITTEN
        return {
            "id": self.job.id,
            "quantity": self.job.quantity,
            "processed": first,
            DUPLICATE_FIELD: not first,
        }


def same_order(job: Job, stored: Mapping[str, Any]) -> bool:
    """The stored item is this order: the same id and quantity, compared type-strictly (a stored
    boolean true is not quantity 1). `total_cents` is the result the first delivery reached and
    is not compared, so a later price change does not turn redeliveries into conflicts."""
    quantity = stored.get("quantity")
    return (
        type(stored.get("id")) is str
        and stored["id"] == job.id
        and type(quantity) is int
        and quantity == job.quantity
    )


def decide(job: Job, existing: Mapping[str, Any] | None) -> Outcome:
    """`existing` is the item returned when the condition failed, None when the write went in.

    The stored order being the requested one means it was already completed: acknowledge it.
    Anything else means the same id arrived with other details; that must never be acknowledged.
    """
    if existing is None:
        return Outcome(Decision.WRITTEN, job)
    if same_order(job, existing):
        return Outcome(Decision.DUPLICATE, job)
    raise ConflictingOrder(
        f"order {job.id!r} already stored with different details: "
        f"stored {json.dumps(plain_item(existing), sort_keys=True, default=str)}, "
        f"requested {json.dumps(job.item(), sort_keys=True)}"
    )


def order_item(job: Job, retention_seconds: int | None, now: float) -> dict[str, Any]:
    """The item written for `job`: the order, and with a retention the moment from which DynamoDB
    may delete it (epoch seconds). Only id and quantity decide a duplicate (`same_order`), so a
    later copy whose expiry differs is still the same order."""
    item = job.item()
    if retention_seconds is not None:
        item[EXPIRES_AT_FIELD] = int(now) + retention_seconds
    return item


def retry_delay(attempt: int, retryable: bool, remaining: float, jitter: float) -> float | None:
    """Seconds to wait before another attempt after attempt number `attempt` failed, or None to
    give up: the error is not worth retrying, the attempts are spent, or another attempt could
    not end before the function's deadline. `jitter` in [0, 1) spreads retries out (full jitter)."""
    if not retryable or attempt >= MAX_ATTEMPTS:
        return None
    delay = jitter * min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** (attempt - 1))
    return delay if has_time_for_attempt(remaining - delay) else None


def has_time_for_attempt(remaining: float) -> bool:
    """An attempt starts only if it can end, however slow, before the function's deadline."""
    return remaining >= ATTEMPT_SECONDS + DEADLINE_MARGIN_SECONDS


# --- DynamoDB and logging shell ------------------------------------------------------------

_CLIENT = None


CLIENT_CONFIG = Config(
    connect_timeout=CONNECT_TIMEOUT_SECONDS,
    read_timeout=READ_TIMEOUT_SECONDS,
    retries={"total_max_attempts": 1},
)


def _client() -> Any:
    """One client per process, created on first use; endpoint from AWS_ENDPOINT_URL if set."""
    global _CLIENT
    if _CLIENT is None:
        _CLIENT = boto3.client("dynamodb", config=CLIENT_CONFIG)
    return _CLIENT


def _retention_seconds() -> int | None:
    raw = os.environ.get(ORDER_RETENTION_SECONDS_ENV, "")
    return int(raw) if raw.isdigit() else None


_SERIALIZER, _DESERIALIZER = TypeSerializer(), TypeDeserializer()


def _to_attributes(item: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _SERIALIZER.serialize(value) for key, value in item.items()}


def item_from_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """A stored item as the worker compares it (whole numbers as int)."""
    return plain_item({key: _DESERIALIZER.deserialize(value) for key, value in attributes.items()})


_LINES = threading.local()  # while a record of a batch is processed: its lines, printed together
_PRINT_LOCK = threading.Lock()


def _log(tag: Tag, payload: Mapping[str, Any]) -> None:
    # print() is what the lab used; each line lands in CloudWatch as one event.
    _print(line(tag, payload))


def _print(line: str) -> None:
    kept = getattr(_LINES, "kept", None)
    if kept is None:
        print(line, flush=True)
    else:
        kept.append(line)


def _retryable(error: Exception) -> tuple[str, bool]:
    """(the error's code, whether another attempt may succeed)."""
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "ClientError")
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return code, code in RETRYABLE_CODES or status >= 500
    return type(error).__name__, isinstance(error, (BotoConnectionError, HTTPClientError))


@dataclass(frozen=True)
class PutOutcome:
    """How the conditional PutItem ended: `previous` is None when the item went in, the stored
    item when the condition failed; `retried_after` names the failures of earlier attempts."""

    previous: dict[str, Any] | None
    retried_after: tuple[str, ...] = ()


def put_order(
    client: Any,
    request: Mapping[str, Any],
    remaining: Callable[[], float],
    sleep: Callable[[float], None] = time.sleep,
) -> PutOutcome:
    """The conditional PutItem, retried while it is worth it and time allows; raises
    WriteFailed when it gives up."""
    failures: list[str] = []
    while True:
        try:
            client.put_item(**request)
            return PutOutcome(None, tuple(failures))
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                # ReturnValuesOnConditionCheckFailure's item, a key botocore's error type does not list
                stored = error.response.get("Item")
                return PutOutcome(
                    item_from_attributes(stored if isinstance(stored, dict) else {}), tuple(failures)
                )
            failure: Exception = error
        except (BotoConnectionError, HTTPClientError) as error:
            failure = error
        code, retryable = _retryable(failure)
        failures.append(code)
        delay = retry_delay(len(failures), retryable, remaining(), random.random())  # noqa: S311  retry jitter, not a secret
        if delay is None:
            raise WriteFailed(code, len(failures), str(failure).splitlines()[0]) from failure
        sleep(delay)


def write_order(
    client: Any, table_name: str, job: Job, remaining: Callable[[], float] = lambda: math.inf
) -> Outcome:
    """One conditional PutItem; on ConditionalCheckFailed the old item comes back in the error."""
    if not has_time_for_attempt(remaining()):
        raise OutOfTime(
            f"order {job.id!r} not written: {remaining():.2f} s left, a write may take "
            f"{ATTEMPT_SECONDS + DEADLINE_MARGIN_SECONDS:.2f} s"
        )
    requested = order_item(job, _retention_seconds(), time.time())
    put = put_order(
        client,
        {
            "TableName": table_name,
            "Item": _to_attributes(requested),
            "ConditionExpression": CONDITION,
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
        remaining,
    )
    previous = put.previous
    # Neither the condition (always CONDITION) nor the item stored after the write (the requested
    # one or `previous`) is logged, and `previous` only when there is one: each would cost log
    # bytes on every order and say nothing new.
    decision: dict[str, Any] = {
        "id": job.id,
        "outcome": WriteOutcome.ACCEPTED if previous is None else WriteOutcome.CONDITION_FAILED,
        "requested": requested,
    }
    if previous is not None:
        decision["previous"] = previous
    if put.retried_after:
        # After a timed-out attempt a rejection may be this delivery's own earlier write: the
        # line says so, and the order is stored either way.
        decision["retried_after"] = list(put.retried_after)
    try:
        outcome = decide(job, previous)
    except ConflictingOrder:
        _log(Tag.WRITE, {**decision, DECISION_FIELD: Decision.CONFLICT})
        raise
    _log(Tag.WRITE, {**decision, DECISION_FIELD: outcome.decision})
    return outcome


def process_record(
    record: Mapping[str, Any],
    client: Any,
    table_name: str,
    remaining: Callable[[], float] = lambda: math.inf,
    job: Job | None = None,
) -> dict[str, Any]:
    """Parse (unless `job` is its body, parsed), write, log one SQS record; raises on anything
    that must not be acknowledged. An acknowledged record's WRITE and RESULT lines name its order;
    a failed one's ERROR line (error_line) names the order and the message."""
    job = parse_job(record.get("body")) if job is None else job
    outcome = write_order(client, table_name, job, remaining)
    result = outcome.result
    _log(Tag.RESULT, result)
    return result


def failure_kind(error: Exception) -> Metric:
    """The decision metric a failed record counts in."""
    if isinstance(error, JobError):
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
    _print(json.dumps(emf, sort_keys=True, separators=(",", ":")))


def _attempt(
    record: Mapping[str, Any],
    client: Any,
    table_name: str,
    remaining: Callable[[], float],
    job: Job | None = None,
) -> Attempt:
    """One record, never raising: Settled, or Failed with its error logged; its decision counted."""
    attempt: Attempt
    try:
        job = parse_job(record.get("body")) if job is None else job
        attempt = Settled(process_record(record, client, table_name, remaining, job))
    except Exception as error:  # noqa: BLE001 - every failure is reported, none acknowledged
        attempt = Failed(error)
        _log(Tag.ERROR, error_line(error, record, job))
    _count(decision_of(attempt))
    return attempt


def error_line(error: Exception, record: Mapping[str, Any], job: Job | None) -> dict[str, Any]:
    """A failed record's ERROR line: what failed, the SQS message, and the job as far as its body
    parsed (the order's id and quantity, or the id alone when only the id is valid), so that an
    operator finds every failure of an order by its id. Succeeding records print no such line:
    their WRITE and RESULT lines name the order."""
    payload: dict[str, Any] = {
        ERROR_FIELD: error.code if isinstance(error, WriteFailed) else type(error).__name__,
        "message": str(error).splitlines()[0] if str(error) else type(error).__name__,
        "message_id": record.get("messageId", ""),
        "receive_count": record.get("attributes", {}).get("ApproximateReceiveCount"),
    }
    if job is not None:
        payload.update(id=job.id, quantity=job.quantity)
    elif isinstance(error, JobError) and error.order_id is not None:
        payload["id"] = error.order_id
    return payload


def _attempt_printing_together(
    record: Mapping[str, Any], client: Any, table_name: str, remaining: Callable[[], float], job: Job
) -> Attempt:
    """`_attempt` on a thread of the batch: the record's lines are printed in one go as soon as
    it is done (a line printed late is a line lost if the function is stopped at its timeout)."""
    _LINES.kept = []
    try:
        return _attempt(record, client, table_name, remaining, job)
    finally:
        lines, _LINES.kept = _LINES.kept, None
        with _PRINT_LOCK:
            for line in lines:
                print(line, flush=True)


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
    table_name: str,
    remaining: Callable[[], float],
    in_flight: int,
) -> list[Attempt]:
    """Every record's Attempt, in the batch's order: one after another, or with
    `in_flight` writes at once. With more than one, the bodies are parsed first, here: a
    malformed one is reported at once and never waits for a thread, and a lone order takes the
    plain path; each order is still its own conditional write and retries."""
    if in_flight <= 1:
        return [_attempt(record, client, table_name, remaining) for record in records]
    outcomes: dict[int, Attempt] = {}
    jobs: dict[int, Job] = {}
    for index, record in enumerate(records):
        try:
            jobs[index] = parse_job(record.get("body"))
        except JobError:
            outcomes[index] = _attempt(record, client, table_name, remaining)  # reports it, writes nothing
    if len(jobs) <= 1:
        for index, job in jobs.items():
            outcomes[index] = _attempt(records[index], client, table_name, remaining, job)
        return [outcomes[index] for index in range(len(records))]
    futures = {
        _pool(in_flight).submit(
            _attempt_printing_together, records[index], client, table_name, remaining, job
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
    table_name: str,
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
            records, lambda record: _attempt(record, client, table_name, remaining)
        )
        return {"batchItemFailures": [{"itemIdentifier": r.get("messageId", "")} for r in unfinished]}
    outcomes = _attempt_all(records, client, table_name, remaining, in_flight)
    failures = [
        {"itemIdentifier": record.get("messageId", "")}
        for record, attempt in zip(records, outcomes)
        if isinstance(attempt, Failed)
    ]
    return {"batchItemFailures": failures}


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    def remaining() -> float:
        return context.get_remaining_time_in_millis() / 1000 if context is not None else math.inf

    memory = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "")
    in_flight = writes_in_flight(int(memory) if memory.isdigit() else None)
    return handle_event(event, _client(), os.environ[TABLE_NAME_ENV], remaining, in_flight)
