"""A dead letter as `ops dlq` reads it, and the one-line error every operation raises."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from guarded_consumer.contract import Delivery


class DlqError(RuntimeError):
    """The operation cannot be done; the message says why in one line."""


class LetterClass(StrEnum):
    """A dead letter's class (ops/dlq/classifying.py says what each means); a conflict and a
    malformed body keep the words of the worker's outcomes (its contract)."""

    PENDING = "pending"
    STORED = "stored"
    LAPSING = "lapsing"
    CONFLICT = Delivery.CONFLICT.value
    MALFORMED = Delivery.MALFORMED.value


@dataclass
class DeadLetter:
    message_id: str
    body: str
    receive_count: int
    sent_ms: int | None
    message_attributes: dict[str, Any]
    receipt_handle: str = field(repr=False)
    kind: LetterClass | None = None  # set by classify
    reason: str = ""
    order_id: str | None = None
    requested: dict[str, Any] | None = None
    stored: dict[str, Any] | None = None
    group_id: str | None = None  # its MessageGroupId, from a FIFO queue

    @property
    def classified(self) -> LetterClass:
        """Its class, once `classify` has set it."""
        if self.kind is None:
            raise DlqError(f"message {self.message_id} has not been classified")
        return self.kind

    def as_json(self, now_ms: int) -> dict[str, Any]:
        """What `list --json` and the live view show; never the receipt handle."""
        return {
            "message_id": self.message_id,
            "class": self.kind,
            "body": self.body,
            "reason": self.reason,
            "id": self.order_id,
            "receive_count": self.receive_count,
            "sent_ms": self.sent_ms,
            "age_seconds": round((now_ms - self.sent_ms) / 1000) if self.sent_ms else None,
            "requested": self.requested,
            "stored": self.stored,
            "message_attributes": {
                name: attribute_json(value) for name, value in self.message_attributes.items()
            },
        }


def attribute_json(value: dict[str, Any]) -> dict[str, str]:
    if "BinaryValue" in value:
        return {"type": value["DataType"], "base64": base64.b64encode(value["BinaryValue"]).decode()}
    return {"type": value["DataType"], "value": value.get("StringValue", "")}


_Item = TypeVar("_Item")


def batches_of(items: list[_Item], size: int = 10) -> Iterator[list[_Item]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
