"""The lab's orders as a team would write them with the handler library's item API
(guarded_consumer.guarded_handler): a body to the item, the key and the compared attributes; the
library makes the record. The lab's worker (lambda/worker) gives the library its own record type
(order_rules.Job); the benchmark compares the two paths."""

from __future__ import annotations

from typing import Any

from guarded_consumer import InvalidBody, guarded_handler, json_object


def order(body: str) -> dict[str, Any]:
    data = json_object(body)
    order_id, quantity = data.get("id"), data.get("quantity")
    if not isinstance(order_id, str) or not order_id.strip():
        raise InvalidBody(f"id must be a non-empty string, got {order_id!r}")
    if isinstance(quantity, bool) or not isinstance(quantity, int) or not 1 <= quantity <= 10:
        raise InvalidBody(f"quantity must be 1..10, got {quantity!r}", order_id)
    return {"id": order_id, "quantity": quantity, "total_cents": quantity * 250 + 100}


handler = guarded_handler(order, key="id", same=("quantity",))
