"""Idempotent order worker: SQS records in, one conditional DynamoDB PutItem per order.

The duplicate guard is the order item itself, keyed on the business `id` (a producer that
sends the same order twice gets a new SQS message id each time, so the message id cannot be
the key). The write is a single atomic `PutItem ... attribute_not_exists(id)`; a read before the
write would race with a concurrent delivery of the same order.

Pure core (`parse_job`, `decide`) first, then the thin shell that talks to DynamoDB and logs.
Standard library and boto3 only: the Lambda Python runtime provides both.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

TABLE_NAME_ENV = "TABLE_NAME"
CONDITION = "attribute_not_exists(id)"
UNIT_PRICE_CENTS = 250
HANDLING_CENTS = 100
MIN_QUANTITY, MAX_QUANTITY = 1, 10
_FIELDS = ("id", "quantity")


# --- pure core ---------------------------------------------------------------------------

class JobError(ValueError):
    """The message body is not a valid job; the message names the problem in one line."""


class ConflictingOrder(RuntimeError):
    """An order with this id was already stored with different details."""


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
    missing = [key for key in _FIELDS if key not in data]
    if missing:
        raise JobError(f"missing field: {', '.join(missing)}")
    extra = sorted(key for key in data if key not in _FIELDS)
    if extra:
        raise JobError(f"unexpected field: {', '.join(_clip(key, 40) for key in extra)}")
    order_id, quantity = data["id"], data["quantity"]
    if not isinstance(order_id, str):
        raise JobError(f"id must be a string, got {type(order_id).__name__} {_clip(order_id)}")
    if not order_id.strip():
        raise JobError(f"id must be a non-empty string, got {_clip(order_id)}")
    if len(order_id.encode("utf-8")) > 1024:
        # DynamoDB's limit for a string partition key is 2048 bytes; 1024 keeps ids sane.
        raise JobError(f"id is too long: {len(order_id.encode('utf-8'))} bytes (max 1024)")
    # bool is a subclass of int in Python; JSON true/false are not quantities.
    if isinstance(quantity, bool) or not isinstance(quantity, int):
        raise JobError(f"quantity must be an integer, got {type(quantity).__name__} {_clip(quantity)}")
    if not MIN_QUANTITY <= quantity <= MAX_QUANTITY:
        raise JobError(f"quantity must be {MIN_QUANTITY}..{MAX_QUANTITY}, got {_clip(quantity)}")
    return Job(id=order_id, quantity=quantity)


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

    decision: str  # "written" | "duplicate"
    job: Job

    @property
    def result(self) -> dict[str, Any]:
        first = self.decision == "written"
        return {"id": self.job.id, "quantity": self.job.quantity, "processed": first, "duplicate": not first}


def decide(job: Job, existing: Mapping[str, Any] | None) -> Outcome:
    """`existing` is the item returned when the condition failed, None when the write went in.

    An identical existing item means the order was already completed: acknowledge it. Anything
    else means the same id arrived with other details; that must never be acknowledged.
    """
    if existing is None:
        return Outcome("written", job)
    if dict(existing) == job.item():
        return Outcome("duplicate", job)
    raise ConflictingOrder(
        f"order {job.id!r} already stored with different details: "
        f"stored {json.dumps(_plain(existing), sort_keys=True)}, "
        f"requested {json.dumps(job.item(), sort_keys=True)}"
    )


def _plain(item: Mapping[str, Any]) -> dict[str, Any]:
    """DynamoDB numbers come back as Decimal; make whole numbers ints so items compare and log."""
    def plain(value: Any) -> Any:
        if isinstance(value, Decimal):
            return int(value) if value == value.to_integral_value() else str(value)
        return value

    return {key: plain(value) for key, value in item.items()}


# --- DynamoDB and logging shell ------------------------------------------------------------

_CLIENT = None


def _client() -> Any:
    """One client per process, created on first use; endpoint from AWS_ENDPOINT_URL if set."""
    global _CLIENT
    if _CLIENT is None:
        _CLIENT = boto3.client("dynamodb")
    return _CLIENT


_SERIALIZER, _DESERIALIZER = TypeSerializer(), TypeDeserializer()


def _to_attributes(item: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _SERIALIZER.serialize(value) for key, value in item.items()}


def _from_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _DESERIALIZER.deserialize(value) for key, value in attributes.items()}


def _log(tag: str, payload: Mapping[str, Any]) -> None:
    # print() is what the lab used; each line lands in CloudWatch as one event.
    print(f"{tag} {json.dumps(payload, sort_keys=True, default=str)}", flush=True)


def write_order(client: Any, table_name: str, job: Job) -> Outcome:
    """One conditional PutItem; on ConditionalCheckFailed the old item comes back in the error."""
    requested = job.item()
    try:
        client.put_item(
            TableName=table_name,
            Item=_to_attributes(requested),
            ConditionExpression=CONDITION,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
        previous = None
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
            raise
        previous = _plain(_from_attributes(error.response.get("Item") or {}))
    decision = {
        "condition": CONDITION,
        "id": job.id,
        "outcome": "Accepted" if previous is None else "ConditionalCheckFailed",
        "previous": previous,
        "requested": requested,
        "stored": requested if previous is None else previous,
    }
    try:
        outcome = decide(job, previous)
    except ConflictingOrder:
        _log("WRITE", {**decision, "decision": "conflict"})
        raise
    _log("WRITE", {**decision, "decision": outcome.decision})
    return outcome


def process_record(record: Mapping[str, Any], client: Any, table_name: str) -> dict[str, Any]:
    """Parse, write, log one SQS record; raises on anything that must not be acknowledged."""
    message_id = record.get("messageId")
    body = record.get("body")
    job = parse_job(body)
    _log("JOB", {**job.item(), "message_id": message_id})
    outcome = write_order(client, table_name, job)
    result = outcome.result
    _log("RESULT", result)
    return result


def handle_event(event: Mapping[str, Any], client: Any, table_name: str) -> dict[str, Any]:
    """Process every record; report the failed ones so only they are retried (partial batch
    response). A failed record is logged and left on the queue, never acknowledged."""
    failures = []
    for record in event.get("Records", []):
        try:
            process_record(record, client, table_name)
        except Exception as error:  # noqa: BLE001 - every failure is reported, none acknowledged
            message_id = record.get("messageId", "")
            _log("ERROR", {
                "error": type(error).__name__,
                "message": str(error).splitlines()[0] if str(error) else type(error).__name__,
                "message_id": message_id,
                "receive_count": record.get("attributes", {}).get("ApproximateReceiveCount"),
            })
            failures.append({"itemIdentifier": message_id})
    return {"batchItemFailures": failures}


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    return handle_event(event, _client(), os.environ[TABLE_NAME_ENV])
