"""A team's record from the item it stores: the guard's `Guarded` for a handler that maps a
message body to an item and names which attributes make two items the same record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .contract import ID_FIELD, plain_item


@dataclass(frozen=True)
class Record:
    """One item to store under `key_attribute`. A stored item is the same record when every
    attribute in `compared` has the same value and the same type (a stored `true` is not 1);
    attributes left out of `compared` (a computed total, a timestamp) are the result the first
    delivery reached and never turn a copy into a conflict."""

    stored: Mapping[str, Any]
    key_attribute: str
    compared: Sequence[str] = field(default=())

    def __post_init__(self) -> None:
        key = self.stored.get(self.key_attribute)
        if not isinstance(key, str) or not key:
            raise ValueError(f"the item's {self.key_attribute} must be a non-empty string, got {key!r}")
        missing = [name for name in self.compared if name not in self.stored]
        if missing:
            raise ValueError(f"the item has no {', '.join(missing)} to compare")

    @property
    def key(self) -> str:
        return str(self.stored[self.key_attribute])

    def item(self) -> dict[str, Any]:
        return dict(self.stored)

    def same_as(self, stored: Mapping[str, Any]) -> bool:
        plain = plain_item(stored)
        return all(
            name in plain
            and type(plain[name]) is type(self.stored[name])
            and plain[name] == self.stored[name]
            for name in (self.key_attribute, *self.compared)
        )

    def fields(self) -> dict[str, Any]:
        """The record in its lines: its key as `id` (what `ops` finds a record by), then the
        compared attributes."""
        named = {name: self.stored[name] for name in self.compared if name != self.key_attribute}
        return {ID_FIELD: self.key, **named}
