"""Two SQS quotas moto does not keep (SQS developer guide, "Amazon SQS standard queue quotas" and
"FIFO queue quotas"; API reference, SendMessageBatch):

- In flight: about 120,000 messages received and not yet deleted per queue. At the cap a short
  poll fails with `OverLimit`; a long poll returns no error and no message (it waits out its
  wait time). A queue tagged `embedded-aws:in-flight-limit` uses that number instead, so a
  test can reach the cap with a thousand messages.
- SendMessageBatch: all the batch's messages together at most 1 MiB (1,048,576 bytes), counted
  as SQS counts a message (the body and each attribute's name, type and value, in UTF-8
  bytes); moto summed the bodies' characters only.
"""

from __future__ import annotations

import time
from typing import Any

IN_FLIGHT_LIMIT = 120_000
IN_FLIGHT_TAG = "embedded-aws:in-flight-limit"
BATCH_BYTES = 1_048_576
_POLL_SECONDS = 0.05  # how often a long poll waiting at the cap looks again


def in_flight(messages: Any, now_ms: float) -> int:
    """Messages received and still invisible (a delayed message is not in flight)."""
    return sum(
        1 for message in messages if message.visible_at >= now_ms and message.approximate_receive_count
    )


def limit_of(queue: Any) -> int:
    value = (getattr(queue, "tags", None) or {}).get(IN_FLIGHT_TAG)
    try:
        return max(0, int(value)) if value is not None else IN_FLIGHT_LIMIT
    except ValueError:
        return IN_FLIGHT_LIMIT


def entry_bytes(entry: dict[str, Any]) -> int:
    size = len(str(entry.get("MessageBody", "")).encode())
    for name, value in (entry.get("MessageAttributes") or {}).items():
        data = (
            value.get("BinaryValue")
            or value.get("binary_value")
            or value.get("StringValue")
            or value.get("string_value")
            or ""
        )
        data = data if isinstance(data, bytes) else str(data).encode()
        kind = value.get("DataType") or value.get("data_type") or ""
        size += len(name.encode()) + len(str(kind).encode()) + len(data)
    return size


def limited(receive: Any, send_batch: Any) -> tuple[Any, Any]:
    """`receive_message` and `send_message_batch` of SQSBackend with the two quotas kept."""
    from moto.core.utils import unix_time_millis
    from moto.sqs.exceptions import SQSException

    class OverLimit(SQSException):
        def __init__(self, limit: int) -> None:
            super().__init__("OverLimit", f"The maximum number of in flight messages ({limit}) is reached.")

    class BatchRequestTooLong(SQSException):
        def __init__(self, length: int) -> None:
            super().__init__(
                "BatchRequestTooLong",
                f"Batch requests cannot be longer than {BATCH_BYTES} bytes. You have sent {length} bytes.",
            )

    def receive_message(
        self: Any,
        queue_name: str,
        count: int,
        wait_seconds_timeout: int,
        visibility_timeout: int,
        message_attribute_names: list[str] | None = None,
    ) -> Any:
        queue = self.get_queue(queue_name)
        limit = limit_of(queue)
        deadline = time.monotonic() + (wait_seconds_timeout or 0)
        while True:
            room = limit - in_flight(queue._messages, unix_time_millis())
            if room > 0:
                wait = max(0, round(deadline - time.monotonic()))
                return receive(
                    self, queue_name, min(count, room), wait, visibility_timeout, message_attribute_names
                )
            if not wait_seconds_timeout:
                raise OverLimit(limit)
            if time.monotonic() >= deadline:
                return []
            time.sleep(_POLL_SECONDS)  # the server's long poll, waiting for a delete

    def send_message_batch(self: Any, queue_name: str, entries: dict[str, dict[str, Any]]) -> Any:
        length = sum(entry_bytes(entry) for entry in entries.values())
        if length > BATCH_BYTES:
            raise BatchRequestTooLong(length)
        return send_batch(self, queue_name, entries)

    return receive_message, send_message_batch
