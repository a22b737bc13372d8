"""AWS/DynamoDB ConsumedWriteCapacityUnits and ConsumedReadCapacityUnits (dimension TableName) for
item writes and GetItem, published per request from the items' sizes as moto stores them.

DynamoDB's rules ("DynamoDB metrics and dimensions"; "Capacity unit consumption for write
operations"): a write costs one unit per started 1 KB of the larger of the item before and after
it, at least one; a conditional write that fails still consumes units, sized by the existing item
(at least one); a read costs one unit per started 4 KB, half for an eventually consistent read, at
least half a unit even for an item that is not there. PutItem, UpdateItem and DeleteItem count,
and BatchWriteItem's and TransactWriteItems' puts, updates and deletes, which moto runs through
the same backend calls: a transaction's at a plain write's units (DynamoDB counts two per unit)
and its failed conditions not at all. Query, Scan, BatchGetItem and TransactGetItems publish
nothing.
"""

from __future__ import annotations

import math
import time
from typing import Any

from embedded_aws.compat.registry import T, declare, install
from embedded_aws.services.cloudwatch.metrics import datum, publish

NAMESPACE = "AWS/DynamoDB"
WRITE_UNIT_BYTES = 1024
READ_UNIT_BYTES = 4096


def write_units(before_bytes: int | None, after_bytes: int | None) -> int:
    """Units of one item write, accepted or a failed conditional write (then `after` is None)."""
    return max(1, math.ceil(max(before_bytes or 0, after_bytes or 0) / WRITE_UNIT_BYTES))


def read_units(item_bytes: int | None, consistent: bool) -> float:
    """Units of one GetItem: per started 4 KB, halved unless strongly consistent."""
    units = max(1, math.ceil((item_bytes or 0) / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


def _size(item: Any) -> int | None:
    return item.size() if item is not None else None


def _stored(backend: Any, table_name: str, key: dict[str, Any]) -> int | None:
    """Size of the item stored under `key` now (None when absent or the table is not there)."""
    try:
        table = backend.get_table(table_name)
        hash_key, range_key = backend.get_keys_value(table, key)
        return _size(table.get_item(hash_key, range_key))
    except Exception:  # noqa: BLE001 - the call itself reports a missing table or a bad key
        return None


def _key_of(backend: Any, table_name: str, item_attrs: dict[str, Any]) -> dict[str, Any]:
    try:
        table = backend.get_table(table_name)
    except Exception:  # noqa: BLE001 - as above
        return {}
    names = [name for name in (table.hash_key_attr, table.range_key_attr) if name]
    return {name: item_attrs[name] for name in names if name in item_attrs}


def _publish(backend: Any, table_name: str, metric: str, units: float) -> None:
    publish(
        backend.account_id,
        backend.region_name,
        NAMESPACE,
        [datum(metric, units, "Count", {"TableName": table_name}, time.time())],
    )


@declare(
    "dynamodb.consumed-capacity",
    (
        "AWS/DynamoDB ConsumedWriteCapacityUnits and ConsumedReadCapacityUnits per table, for item writes"
        " (a failed conditional write too) and GetItem, from the items' sizes"
    ),
    T(
        "moto.dynamodb.models:DynamoDBBackend.put_item",
        "self",
        "table_name",
        "item_attrs",
        "expected",
        "condition_expression",
        "expression_attribute_names",
        "expression_attribute_values",
        "overwrite",
        "return_values_on_condition_check_failure",
    ),
    T(
        "moto.dynamodb.models:DynamoDBBackend.update_item",
        "self",
        "table_name",
        "key",
        "update_expression",
        "expression_attribute_names",
        "expression_attribute_values",
        "attribute_updates",
        "expected",
        "condition_expression",
        "return_values_on_condition_check_failure",
    ),
    T(
        "moto.dynamodb.models:DynamoDBBackend.delete_item",
        "self",
        "table_name",
        "key",
        "expression_attribute_names",
        "expression_attribute_values",
        "condition_expression",
        "return_values_on_condition_check_failure",
    ),
    T("moto.dynamodb.responses:DynamoHandler.get_item", "self"),
    fixes_moto=(
        "no AWS/DynamoDB metrics are published: ConsumedWriteCapacityUnits and ConsumedReadCapacityUnits,"
        " which DynamoDB publishes for every table, are missing"
    ),
)
def patch_dynamodb_consumed_capacity() -> None:
    """Count the units of each item write in the backend (where a failed condition raises) and of
    each GetItem in its handler."""
    from moto.dynamodb.exceptions import ConditionalCheckFailed
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.responses import DynamoHandler

    def counted(method: Any, key_of: Any) -> Any:
        def write(self: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
            key = key_of(self, table_name, args, kwargs)
            before = _stored(self, table_name, key)
            try:
                result = method(self, table_name, *args, **kwargs)
            except ConditionalCheckFailed:
                _publish(self, table_name, "ConsumedWriteCapacityUnits", write_units(before, None))
                raise
            after = _stored(self, table_name, key)
            _publish(self, table_name, "ConsumedWriteCapacityUnits", write_units(before, after))
            return result

        write.__name__ = method.__name__
        return write

    def item_key(
        backend: Any, table_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        return _key_of(backend, table_name, args[0] if args else kwargs["item_attrs"])

    def given_key(
        backend: Any, table_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        key: dict[str, Any] = args[0] if args else kwargs["key"]
        return key

    install(DynamoDBBackend, "put_item", counted(DynamoDBBackend.put_item, item_key))
    install(DynamoDBBackend, "update_item", counted(DynamoDBBackend.update_item, given_key))
    install(DynamoDBBackend, "delete_item", counted(DynamoDBBackend.delete_item, given_key))

    get_item = DynamoHandler.get_item

    def counted_get_item(self: Any) -> Any:
        result = get_item(self)
        params = getattr(self, "params", None) or {}
        name, key = params.get("TableName"), params.get("Key")
        if isinstance(name, str) and isinstance(key, dict):
            backend = self.dynamodb_backend
            units = read_units(_stored(backend, name, key), bool(params.get("ConsistentRead")))
            _publish(backend, name, "ConsumedReadCapacityUnits", units)
        return result

    install(DynamoHandler, "get_item", counted_get_item)
