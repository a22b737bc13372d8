"""What the worker, the stack and the operations tools agree on, written once: the environment the
worker reads, the lines it prints about each record (their tags, decisions and failure classes),
its decision metrics, the one word per outcome that users see, the plain form of a stored item and
the Logs Insights patterns that find the lines. Shipped with the worker (standard library only);
the construct and `ops` import it as guarded_consumer.contract. Renaming anything here renames it
everywhere; nothing else spells these values (tests/unit/test_contract.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from enum import StrEnum
from typing import Any

# Environment variables the worker reads: its orders table, and the namespace of its metrics.
TABLE_NAME_ENV = "TABLE_NAME"
METRICS_NAMESPACE_ENV = "METRICS_NAMESPACE"
# The table's partition key, as the stack declares it: a handler guarding another key refuses to
# start (guarded_consumer.guarded_handler) instead of failing every write.
KEY_ATTRIBUTE_ENV = "KEY_ATTRIBUTE"
# Set only when the stack keeps orders a limited time (order_retention_days): how many seconds an
# order item is kept from its write. The item then carries its expiry in EXPIRES_AT_FIELD (epoch
# seconds), the orders table's time-to-live attribute; the duplicate rule never compares it.
ORDER_RETENTION_SECONDS_ENV = "ORDER_RETENTION_SECONDS"
EXPIRES_AT_FIELD = "expires_at"

# The worker's one write: a PutItem that succeeds only while the order id is not stored. A WRITE
# line leaves it out (it never varies); readers show it from here.
CONDITION = "attribute_not_exists(id)"

# One namespace for every deployment: the worker's function name is the metrics' one dimension.
METRICS_NAMESPACE = "IdempotentOrderConsumer"


class Tag(StrEnum):
    """The first word of each line the worker prints about a record; sorted-key JSON follows."""

    # Printed by earlier workers for every record (the order and the SQS message id), no longer:
    # readers still accept it in logs and histories written before. A failed record's ERROR line
    # now names its order and message, an acknowledged one's WRITE and RESULT lines its order.
    JOB = "JOB"
    WRITE = "WRITE"  # the conditional write: its outcome and the decision taken
    RESULT = "RESULT"  # the record is acknowledged (the lab's pipeline selects these lines)
    ERROR = "ERROR"  # the record failed: reported in batchItemFailures, delivered again; names
    # the order (id, quantity) as far as the body parsed, and the SQS message


class Decision(StrEnum):
    """A WRITE line's `decision`."""

    WRITTEN = "written"  # the order was not stored before
    DUPLICATE = "duplicate"  # the identical order is stored: acknowledged, nothing written
    CONFLICT = "conflict"  # the id is stored with other details: never acknowledged


class WriteOutcome(StrEnum):
    """A WRITE line's `outcome`: how the conditional PutItem ended, in the lab's words."""

    ACCEPTED = "Accepted"
    CONDITION_FAILED = "ConditionalCheckFailed"


class Failure(StrEnum):
    """An ERROR line's `error` for the failures the worker names itself (its exception classes).
    Any other value is the AWS error code (or exception class) of a write that failed."""

    MALFORMED = "JobError"  # the body is not a valid job
    CONFLICT = "ConflictingOrder"  # the id is stored with other details
    OUT_OF_TIME = "OutOfTime"  # too little of the function's time was left to write


class InvalidBody(ValueError):
    """A message body the business parser refuses: its message names the problem in one line, and
    `key` is the body's key value (the record's id) when that much of it is valid. Never
    acknowledged; its ERROR line says Failure.MALFORMED whatever the subclass (the lab's JobError)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class Metric(StrEnum):
    """The decision metrics the worker emits (embedded metric format), one per kind of outcome."""

    ACCEPTED = "Accepted"
    DUPLICATE = "Duplicate"
    CONFLICT = "Conflict"
    MALFORMED = "Malformed"
    ERROR = "Error"  # every failed record that is neither a conflict nor malformed


DECISIONS: tuple[str, ...] = tuple(metric.value for metric in Metric)


class Delivery(StrEnum):
    """What one delivery of a message came to, as `ops` and the view report it; `word` is how a
    user reads it."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"
    MALFORMED = "malformed"
    WRITE_FAILED = "write_failed"
    UNFINISHED = "unfinished"  # (older logs) a JOB line and nothing after it: the invocation ended

    @property
    def word(self) -> str:
        return self.value.replace("_", " ")


# Failed records: reported in batchItemFailures (an ERROR line each) and delivered again by SQS.
FAILED_RECORDS: tuple[Delivery, ...] = (Delivery.CONFLICT, Delivery.MALFORMED, Delivery.WRITE_FAILED)

# The delivery each metric counts.
METRIC_DELIVERIES: dict[Metric, Delivery] = {
    Metric.ACCEPTED: Delivery.ACCEPTED,
    Metric.DUPLICATE: Delivery.DUPLICATE,
    Metric.CONFLICT: Delivery.CONFLICT,
    Metric.MALFORMED: Delivery.MALFORMED,
    Metric.ERROR: Delivery.WRITE_FAILED,
}

_DECISION_DELIVERIES = {
    Decision.WRITTEN: Delivery.ACCEPTED,
    Decision.DUPLICATE: Delivery.DUPLICATE,
    Decision.CONFLICT: Delivery.CONFLICT,
}
_FAILURE_DELIVERIES = {Failure.MALFORMED: Delivery.MALFORMED, Failure.CONFLICT: Delivery.CONFLICT}


def delivery_of_decision(decision: Any) -> Delivery:
    """What a WRITE line's `decision` comes to; one that is not a decision is a failed write."""
    return _DECISION_DELIVERIES.get(decision, Delivery.WRITE_FAILED)


def stored_by(write: Mapping[str, Any]) -> Any:
    """The item the table holds after a WRITE line's write: the requested one if the write was
    accepted, the previous one if the condition failed. The line leaves it out, being one of the
    two (lines written before it was left out carry it)."""
    if "stored" in write:
        return write["stored"]
    return write.get("requested") if write.get("outcome") == WriteOutcome.ACCEPTED else write.get("previous")


def delivery_of_failure(error: Any) -> Delivery:
    """What an ERROR line's `error` comes to: anything the worker does not name failed the write."""
    return _FAILURE_DELIVERIES.get(error, Delivery.WRITE_FAILED)


# The fields of the lines that the queries and `ops` read by name.
ID_FIELD = "id"
DECISION_FIELD = "decision"  # WRITE
ERROR_FIELD = "error"  # ERROR
DUPLICATE_FIELD = "duplicate"  # RESULT: true when the order was already stored (the lab's format)

_TAGS = frozenset(tag.value for tag in Tag)


def line(tag: Tag, payload: Mapping[str, Any]) -> str:
    """One line as the worker prints it: the tag, a space, the payload as sorted-key JSON."""
    return f"{tag} {json.dumps(payload, sort_keys=True, default=str)}"


def parse_line(text: str) -> tuple[Tag, dict[str, Any]] | None:
    """(tag, payload) of a line the worker printed about a record; None for any other line."""
    tag, _, rest = text.partition(" ")
    if tag not in _TAGS:
        return None
    try:
        payload = json.loads(rest)
    except ValueError:
        return None
    return (Tag(tag), payload) if isinstance(payload, dict) else None


def plain_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A stored item as the worker compares and logs it: DynamoDB's Decimal numbers as int when
    whole, as their exact decimal text otherwise."""

    def plain(value: Any) -> Any:
        if isinstance(value, Decimal):
            return int(value) if value == value.to_integral_value() else str(value)
        return value

    return {key: plain(value) for key, value in item.items()}


# Logs Insights: a line is text, so a query matches the tag at its start and fields as
# `line` prints them (json.dumps: `"key": "value"`).
def insights_regex(tag: Tag | None = None, fields: Mapping[str, str] | None = None) -> str:
    """`/.../` for `filter @message like`: lines of `tag` (any, if None) whose string fields
    have these values."""
    parts = [f"^{tag} "] if tag is not None else []
    parts += [f'"{name}": "{value}"' for name, value in (fields or {}).items()]
    return "/" + ".*".join(parts) + "/"


def insights_glob(field: str) -> str:
    """`'...'` for `parse @message ... as name`: the value of a string field."""
    return f'\'"{field}": "*"\''
