"""The lab's business rules: what a valid order body is, the item stored for it, and what makes a
stored item the same order. Standard library only. The write guard and the batch loop
(guarded_consumer) know an order only as guarded_consumer.Guarded: its key, its item, whether a
stored item is the same order, and the fields its lines name."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from guarded_consumer.contract import ID_FIELD, InvalidBody

UNIT_PRICE_CENTS = 250
HANDLING_CENTS = 100
MIN_QUANTITY, MAX_QUANTITY = 1, 10
_FIELDS = ("id", "quantity")


class JobError(InvalidBody):
    """The message body is not a valid job; the message names the problem in one line, and
    `order_id` is the body's id when that much of it is valid (the ERROR line carries it)."""

    def __init__(self, message: str, order_id: str | None = None) -> None:
        super().__init__(message, order_id)

    @property
    def order_id(self) -> str | None:
        return self.key


@dataclass(frozen=True)
class Job:
    id: str
    quantity: int

    @property
    def total_cents(self) -> int:
        return self.quantity * UNIT_PRICE_CENTS + HANDLING_CENTS

    def item(self) -> dict[str, Any]:
        return {"id": self.id, "quantity": self.quantity, "total_cents": self.total_cents}

    # What the write guard and the batch loop read of an order (write_guard.Guarded).
    @property
    def key(self) -> str:
        return self.id

    def same_as(self, stored: Mapping[str, Any]) -> bool:
        return same_order(self, stored)

    def fields(self) -> dict[str, Any]:
        """What the RESULT and ERROR lines say of the order: its id and quantity."""
        return {ID_FIELD: self.id, "quantity": self.quantity}


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
