"""DynamoDB: conditional writes applied atomically, and ItemCount without a scan."""

from __future__ import annotations

import threading
from typing import Any

_DYNAMODB_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


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


def patch_dynamodb_item_count() -> None:
    """DescribeTable's ItemCount sums a 1 per item of a table without a sort key; it is the
    number of items, which the dict already knows."""
    from moto.dynamodb.models.table import Table

    length = Table.__len__

    def item_count(self: Any) -> int:
        return length(self) if self.has_range_key else len(self.items)

    Table.__len__ = item_count
