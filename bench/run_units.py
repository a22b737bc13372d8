"""The billed units of one run of orders, counted apart from CloudWatch's metrics (the ops cost
check's reference, bench/ops_cost_check.py): arithmetic over what the run left behind, no AWS calls.

- SQS: the requests the emulator served (LOCAL_PROFILE's counters, embedded_aws/profiling.py):
  the local host's receives that returned messages and every DeleteMessage(Batch); each request
  one per started 64 KB of its payload (ops/cost_model.py `sqs_billed_requests`).
- Lambda: one invocation per REPORT line in the function's log group, GB-seconds from each line's
  Billed Duration and Memory Size.
- DynamoDB: each stored order's write units from its size by DynamoDB's rules ("DynamoDB item
  sizes and formats", DynamoDB developer guide), and every other PutItem the table served a
  rejected conditional write, which still consumes units sized by the item already stored
  ("DynamoDB metrics and dimensions": ConsumedWriteCapacityUnits includes them).
- Logs: the UTF-8 bytes of every event's message in the function's log group.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from bench.stats import write_units
from ops.cost_model import Usage, sqs_billed_requests
from ops.observe import report_fields

# LOCAL_PROFILE counter names (embedded_aws/profiling.py; the poller's in lambda_host).
RECEIVES_WITH_MESSAGES = "poller receive with messages"
RECEIVES = "http sqs:ReceiveMessage"
DELETES = ("http sqs:DeleteMessageBatch", "http sqs:DeleteMessage")
PUT_ITEMS = "http dynamodb:PutItem"
SQS_BATCH = 10  # the most messages one ReceiveMessage returns


def billed_of_report(message: str) -> tuple[int, int] | None:
    """(Billed Duration ms, Memory Size MB) of a Lambda REPORT line; None for any other line."""
    fields = report_fields(message)
    if fields is None or "Billed Duration" not in fields or "Memory Size" not in fields:
        return None
    return int(fields["Billed Duration"]), int(fields["Memory Size"])


def lambda_units(messages: Iterable[str]) -> tuple[int, float]:
    """(invocations, billed GB-seconds) from the REPORT lines among a log group's messages."""
    invocations, gb_seconds = 0, 0.0
    for message in messages:
        billed = billed_of_report(message)
        if billed is not None:
            invocations += 1
            gb_seconds += billed[0] * billed[1] / 1024 / 1000
    return invocations, gb_seconds


def log_bytes(messages: Iterable[str]) -> int:
    """Bytes ingested for these events: each message's UTF-8 bytes (no timestamp, no per-event
    overhead; CloudWatch's IncomingBytes is "the volume of log events in uncompressed bytes")."""
    return sum(len(message.encode()) for message in messages)


def _number_bytes(text: str) -> int:
    digits = format(abs(Decimal(text)), "f").replace(".", "").strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def value_bytes(value: Mapping[str, Any]) -> int:
    """The size of one typed attribute value (DynamoDB JSON), without its name."""
    (kind, data), *_ = value.items()
    if kind == "S":
        return len(str(data).encode())
    if kind == "N":
        return _number_bytes(str(data))
    if kind == "B":
        return len(data)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(item).encode()) for item in data)
    if kind == "NS":
        return sum(_number_bytes(str(item)) for item in data)
    if kind == "BS":
        return sum(len(item) for item in data)
    if kind == "L":
        return 3 + sum(value_bytes(item) + 1 for item in data)
    if kind == "M":
        return 3 + sum(len(name.encode()) + value_bytes(item) + 1 for name, item in data.items())
    raise ValueError(f"unknown DynamoDB attribute type {kind!r}")


def item_bytes(item: Mapping[str, Mapping[str, Any]]) -> int:
    """An item's size by DynamoDB's rules: each attribute's name in UTF-8 plus its value (a
    number one byte per two significant digits plus one; a list or map 3 bytes plus one per
    element)."""
    return sum(len(name.encode()) + value_bytes(value) for name, value in item.items())


@dataclass(frozen=True)
class RunCounts:
    """What the run left behind, as counted (not yet priced)."""

    receives_with_messages: int
    deletes: int
    receives: int  # every ReceiveMessage served, empty ones included (reported, not priced)
    largest_body_bytes: int
    report_messages: tuple[str, ...]
    log_messages: tuple[str, ...]
    stored_item_bytes: tuple[int, ...]
    put_items: int

    @classmethod
    def from_counters(
        cls,
        counters: Mapping[str, Mapping[str, Any]],
        *,
        bodies: Iterable[str],
        log_messages: Iterable[str],
        stored_items: Iterable[Mapping[str, Mapping[str, Any]]],
    ) -> RunCounts:
        """From LOCAL_PROFILE's counters (`{name: {"count": n, ...}}`), the run's message
        bodies, its log group's messages and its stored orders."""

        def counted(name: str) -> int:
            return int(counters.get(name, {}).get("count", 0))

        messages = tuple(log_messages)
        return cls(
            receives_with_messages=counted(RECEIVES_WITH_MESSAGES),
            receives=counted(RECEIVES),
            deletes=sum(counted(name) for name in DELETES),
            largest_body_bytes=max((len(body.encode()) for body in bodies), default=0),
            report_messages=tuple(m for m in messages if billed_of_report(m) is not None),
            log_messages=messages,
            stored_item_bytes=tuple(item_bytes(item) for item in stored_items),
            put_items=counted(PUT_ITEMS),
        )

    @property
    def rejected_writes(self) -> int:
        return max(self.put_items - len(self.stored_item_bytes), 0)

    def sqs_requests(self) -> int:
        """Billed requests: a receive carries at most SQS_BATCH of the run's bodies, so it is
        billed for at most that many of the largest; a delete carries receipt handles only."""
        per_receive = sqs_billed_requests(SQS_BATCH * self.largest_body_bytes)
        return self.receives_with_messages * per_receive + self.deletes * sqs_billed_requests(0)

    def dynamodb_write_units(self) -> int:
        """A stored order's first write by its size; a rejected one sized by the largest stored
        item (the one it hit is at most that big)."""
        largest = max(self.stored_item_bytes, default=0)
        accepted = sum(write_units(None, size) for size in self.stored_item_bytes)
        return accepted + self.rejected_writes * write_units(largest, None)

    def usage(self, architecture: str) -> Usage:
        invocations, gb_seconds = lambda_units(self.report_messages)
        return Usage(
            sqs_requests=self.sqs_requests(),
            invocations=invocations,
            gb_seconds=gb_seconds,
            architecture=architecture,
            write_units=self.dynamodb_write_units(),
            read_units=0,
            log_bytes=log_bytes(self.log_messages),
        )

    def as_json(self) -> dict[str, Any]:
        reports = [report_fields(message) or {} for message in self.report_messages]
        return {
            "sqs_receives": self.receives,
            "sqs_receives_with_messages": self.receives_with_messages,
            "sqs_deletes": self.deletes,
            "largest_body_bytes": self.largest_body_bytes,
            "invocations": len(self.report_messages),
            "billed_ms": sum(int(fields["Billed Duration"]) for fields in reports),
            "duration_ms": math.fsum(fields.get("Duration", 0.0) for fields in reports),
            "cold_starts": sum(1 for fields in reports if "Init Duration" in fields),
            "init_ms": math.fsum(fields.get("Init Duration", 0.0) for fields in reports),
            "log_events": len(self.log_messages),
            "stored_orders": len(self.stored_item_bytes),
            "largest_item_bytes": max(self.stored_item_bytes, default=0),
            "put_items": self.put_items,
            "rejected_writes": self.rejected_writes,
        }
