"""DynamoDB: conditional writes applied atomically, and ItemCount without a scan."""

from __future__ import annotations

import threading
from typing import Any

from embedded_aws.compat.registry import T, declare, install

_DYNAMODB_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


@declare(
    "dynamodb.atomic-writes",
    "a conditional write is checked and stored as one step",
    T("moto.dynamodb.responses:DynamoHandler.put_item", "self"),
    T("moto.dynamodb.responses:DynamoHandler.update_item", "self"),
    T("moto.dynamodb.responses:DynamoHandler.delete_item", "self"),
    T("moto.dynamodb.responses:DynamoHandler.batch_write_item", "self"),
    T("moto.dynamodb.responses:DynamoHandler.transact_write_items", "self"),
    fixes_moto="a conditional write checks and stores in two steps: two threads can both pass the check",
)
def patch_dynamodb_write_atomicity() -> None:
    """DynamoDB applies a conditional write atomically; moto checks the condition and stores the
    item in two Python steps, so two threads of the server could both pass the check. Writes
    are serialized here so a race test measures the worker, not the emulator. The lock covers
    each write action's handler (its reads of the old item, the check and the store), not the
    signature and IAM check before it nor the serialization after it."""
    from moto.dynamodb.responses import DynamoHandler

    lock = threading.RLock()

    def locked(method: Any) -> Any:
        def handler(self: Any) -> Any:
            with lock:
                return method(self)

        handler.__name__ = method.__name__
        return handler

    for action in _DYNAMODB_WRITES:
        name = "".join("_" + c.lower() if c.isupper() else c for c in action).lstrip("_")
        setattr(DynamoHandler, name, locked(getattr(DynamoHandler, name)))


@declare(
    "dynamodb.item-count",
    "DescribeTable's ItemCount without a scan",
    T("moto.dynamodb.models.table:Table.__len__", "self"),
)
def patch_dynamodb_item_count() -> None:
    """DescribeTable's ItemCount sums a 1 per item of a table without a sort key; it is the
    number of items, which the dict already knows."""
    from moto.dynamodb.models.table import Table

    length = Table.__len__

    def item_count(self: Any) -> int:
        return length(self) if self.has_range_key else len(self.items)

    install(Table, "__len__", item_count)
