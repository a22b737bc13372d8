"""The handler side of the idempotent consumer: SQS records in, one conditional DynamoDB PutItem
per business key, duplicates acknowledged and conflicts never. Standard library and boto3 only
(the Lambda Python runtime ships both); no CDK.

A team writes one function from a message body to the item it stores (raising `InvalidBody` for
a body it refuses) and names the item's key attribute and the attributes that make two items
the same record:

    from guarded_consumer import InvalidBody, guarded_handler

    def payment(body: str) -> dict: ...

    handler = guarded_handler(payment, key="payment_id", same=("amount_cents", "currency"))

Modules: `write_guard` (the one write and what its answer means, with deadline-aware retries),
`sqs_batch` (the batch, its metrics and lines, partial batch responses, FIFO's stop at the first
failure), `records` (a `Guarded` record from an item), `contract` (the names the lines, the
stack and the operators' tools share), `log_lines`.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .contract import KEY_ATTRIBUTE_ENV, TABLE_NAME_ENV, InvalidBody
from .records import Record

if TYPE_CHECKING:
    from .sqs_batch import Consumer, handle_event
    from .write_guard import Guarded

# The modules that import boto3 load on first use: the construct (a CDK app, which need not have
# boto3) reads this package's contract and location only.
_LAZY = {"Consumer": "sqs_batch", "handle_event": "sqs_batch", "Guarded": "write_guard"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)


__all__ = [
    "Consumer",
    "Guarded",
    "GuardedHandler",
    "InvalidBody",
    "Record",
    "guarded_handler",
    "handle_event",
    "json_object",
    "run",
]

__version__ = "0.1.0"


def run(event: Mapping[str, Any], context: Any, consumer: Consumer) -> dict[str, Any]:
    """A Lambda invocation for `consumer`: its records within the function's time left, as many
    writes in flight as its memory affords, the process's one DynamoDB client."""

    def remaining() -> float:
        return context.get_remaining_time_in_millis() / 1000 if context is not None else math.inf

    from . import sqs_batch, write_guard

    memory = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "")
    in_flight = sqs_batch.writes_in_flight(int(memory) if memory.isdigit() else None)
    return sqs_batch.handle_event(event, write_guard.dynamodb_client(), consumer, remaining, in_flight)


class GuardedHandler:
    """A Lambda handler that guards each record `parse` makes of a message body on
    `key_attribute`. It also tells the operators' tools how this worker judges a body (`ops dlq
    --handler`): they classify dead letters with the same `parse`."""

    def __init__(
        self, parse: Callable[[Any], Guarded], key_attribute: str, table_name: str | None = None
    ) -> None:
        declared = os.environ.get(KEY_ATTRIBUTE_ENV)
        if declared is not None and declared != key_attribute:
            raise ValueError(
                f"the table's key attribute is {declared!r} ({KEY_ATTRIBUTE_ENV}); the handler guards {key_attribute!r}"
            )
        self.parse = parse
        self.key_attribute = key_attribute
        self.table_name = table_name
        # boto3 and the batch loop load here, in the function's init, not in its first invocation.
        importlib.import_module(".sqs_batch", __name__)

    def consumer(self, table_name: str | None = None) -> Consumer:
        """What a batch is written with: `table_name`, else the handler's, else the function's
        TABLE_NAME (set by the construct)."""
        from . import sqs_batch

        return sqs_batch.Consumer(
            table_name or self.table_name or os.environ[TABLE_NAME_ENV], self.parse, self.key_attribute
        )

    def __call__(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        return run(event, context, self.consumer())


def guarded_handler(
    to_item: Callable[[str], Mapping[str, Any]],
    *,
    key: str,
    same: Sequence[str],
    table_name: str | None = None,
) -> GuardedHandler:
    """A Lambda handler that stores `to_item(body)` once per value of `key`: a later copy whose
    `same` attributes match is acknowledged as a duplicate, one that differs is a conflict and is
    never acknowledged. A body that is not a string, or an item without its key, is refused as
    InvalidBody, as is anything `to_item` refuses with InvalidBody."""
    compared = tuple(same)

    def parse(body: Any) -> Guarded:
        if not isinstance(body, str):
            raise InvalidBody(f"body must be a string, got {type(body).__name__}")
        item = to_item(body)
        found = item.get(key) if isinstance(item, Mapping) else None
        try:
            return Record(item, key, compared)
        except ValueError as error:
            raise InvalidBody(str(error), found if isinstance(found, str) and found else None) from None

    return GuardedHandler(parse, key, table_name)


def json_object(body: str) -> dict[str, Any]:
    """The body as a JSON object, or InvalidBody naming why not (for a team's `to_item`)."""
    try:
        data = json.loads(body)
    except ValueError as error:
        raise InvalidBody(f"body is not valid JSON: {str(error).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise InvalidBody(f"body must be a JSON object, got {type(data).__name__}")
    return data
