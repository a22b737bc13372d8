"""The one-write duplicate guard: a single conditional PutItem keyed on the order id, with
ReturnValuesOnConditionCheckFailure=ALL_OLD, and what its answer means: written, a completed
duplicate (the stored item is the requested order: acknowledged) or a conflict (never
acknowledged). No read before the write: that would race with a concurrent delivery. Retries
what is worth retrying while the function's time allows; logs the decision (the WRITE line)."""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from .contract import (
    DECISION_FIELD,
    DUPLICATE_FIELD,
    EXPIRES_AT_FIELD,
    ID_FIELD,
    ORDER_RETENTION_SECONDS_ENV,
    Decision,
    Tag,
    WriteOutcome,
    plain_item,
)
from .log_lines import log

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
RETRYABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


class Guarded(Protocol):
    """What the guard needs of one business record (the lab's: order_rules.Job). The guard never
    looks inside it: the team's parser makes it from a message body."""

    @property
    def key(self) -> str:
        """The value of the table's key attribute: the record's id in every line."""
        ...

    def item(self) -> dict[str, Any]:
        """The item to store, key attribute included."""
        ...

    def same_as(self, stored: Mapping[str, Any]) -> bool:
        """The stored item is this record (a completed duplicate), not other details for its key."""
        ...

    def fields(self) -> dict[str, Any]:
        """What the RESULT and ERROR lines say of the record, its id first."""
        ...


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
class Outcome:
    """What a delivery amounts to, and the result line it reports."""

    decision: Decision  # written or duplicate
    job: Guarded

    @property
    def result(self) -> dict[str, Any]:
        first = self.decision == Decision.WRITTEN
        return {**self.job.fields(), "processed": first, DUPLICATE_FIELD: not first}


def decide(job: Guarded, existing: Mapping[str, Any] | None) -> Outcome:
    """`existing` is the item returned when the condition failed, None when the write went in.

    The stored order being the requested one means it was already completed: acknowledge it.
    Anything else means the same id arrived with other details; that must never be acknowledged.
    """
    if existing is None:
        return Outcome(Decision.WRITTEN, job)
    if job.same_as(existing):
        return Outcome(Decision.DUPLICATE, job)
    raise ConflictingOrder(
        f"order {job.key!r} already stored with different details: "
        f"stored {json.dumps(plain_item(existing), sort_keys=True, default=str)}, "
        f"requested {json.dumps(job.item(), sort_keys=True, default=str)}"
    )


def stored_item(job: Guarded, retention_seconds: int | None, now: float) -> dict[str, Any]:
    """The item written for `job`: its own, and with a retention the moment from which DynamoDB
    may delete it (epoch seconds). Only `same_as` decides a duplicate, so a later copy whose
    expiry differs is still the same record."""
    item = job.item()
    if retention_seconds is not None:
        item[EXPIRES_AT_FIELD] = int(now) + retention_seconds
    return item


def condition(key_attribute: str) -> str:
    """The write's one condition: nothing is stored under this key yet."""
    return f"attribute_not_exists({key_attribute})"


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


_CLIENT = None


CLIENT_CONFIG = Config(
    connect_timeout=CONNECT_TIMEOUT_SECONDS,
    read_timeout=READ_TIMEOUT_SECONDS,
    retries={"total_max_attempts": 1},
)


def dynamodb_client() -> Any:
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
    client: Any,
    table_name: str,
    job: Guarded,
    remaining: Callable[[], float] = lambda: math.inf,
    key_attribute: str = ID_FIELD,
) -> Outcome:
    """One conditional PutItem on `key_attribute`; on ConditionalCheckFailed the old item comes
    back in the error."""
    if not has_time_for_attempt(remaining()):
        raise OutOfTime(
            f"order {job.key!r} not written: {remaining():.2f} s left, a write may take "
            f"{ATTEMPT_SECONDS + DEADLINE_MARGIN_SECONDS:.2f} s"
        )
    requested = stored_item(job, _retention_seconds(), time.time())
    put = put_order(
        client,
        {
            "TableName": table_name,
            "Item": _to_attributes(requested),
            "ConditionExpression": condition(key_attribute),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
        remaining,
    )
    previous = put.previous
    # Neither the condition (always the same) nor the item stored after the write (the requested
    # one or `previous`) is logged, and `previous` only when there is one: each would cost log
    # bytes on every order and say nothing new.
    decision: dict[str, Any] = {
        ID_FIELD: job.key,
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
        log(Tag.WRITE, {**decision, DECISION_FIELD: Decision.CONFLICT})
        raise
    log(Tag.WRITE, {**decision, DECISION_FIELD: outcome.decision})
    return outcome
