"""FIFO rules moto does not keep, as LocalStack recorded AWS answering them
(embedded_aws/tests/test_conformance/recordings_sqs.py cites each):

- Deduplication: a deduplication id (explicit, or the body's SHA-256 with ContentBasedDeduplication)
  accepted once is not delivered again for five minutes, even after the first copy was deleted
  (moto compared only with the messages still in the queue). With DeduplicationScope
  `messageGroup` the id counts within its group only; an id sent under `queue` scope still
  deduplicates every group after the scope changes, one sent under `messageGroup` does not
  deduplicate other groups after a change back to `queue`.
- An expired receipt handle (its visibility timeout passed, or the message was received again)
  no longer deletes a FIFO message: InvalidParameterValue `The receipt handle has expired.`
  (a standard queue's still deletes, as moto does).
- A group is held back from its first message in flight on: messages before it in the group are
  delivered (moto held back the whole group while any of its messages was in flight, so one
  message whose visibility was extended blocked those ahead of it).
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

WINDOW_MS = 5 * 60 * 1000
_QUEUE_SCOPE = ""  # the group part of a key recorded under DeduplicationScope queue
_ATTRIBUTE = "_embedded_deduplication"  # on moto's Queue: key -> when it was accepted (ms)
_hidden = threading.local()


def dedup_id_of(queue: Any, body: str, explicit: str | None) -> str | None:
    if explicit:
        return explicit
    if str(queue.content_based_deduplication).lower() == "true":
        return hashlib.sha256(body.encode("utf-8")).hexdigest()
    return None


def seen(queue: Any) -> OrderedDict[tuple[str, str], float]:
    table = getattr(queue, _ATTRIBUTE, None)
    if table is None:
        table = OrderedDict()
        setattr(queue, _ATTRIBUTE, table)
    return table


def accept(queue: Any, group: str | None, dedup_id: str, now_ms: float) -> bool:
    """Whether a send with this id in this group is delivered (recording it if so)."""
    table = seen(queue)
    while table and next(iter(table.values())) <= now_ms - WINDOW_MS:
        table.popitem(last=False)
    by_group = str(queue.deduplication_scope) == "messageGroup"
    keys = [(_QUEUE_SCOPE, dedup_id)] + ([(group or "", dedup_id)] if by_group else [])
    if any(key in table for key in keys):
        return False
    table[keys[-1]] = now_ms
    return True


def deduplicated(send: Any) -> Any:
    """SQSBackend.send_message keeping the five-minute window by id (and group, by scope).

    A delivered message reaches moto with a one-off id, so moto's own comparison with the
    messages still queued (by id, whatever the group) drops nothing; its real id is set back
    after. A duplicate is answered as moto answers a send but not queued."""
    from moto.core.utils import unix_time_millis

    lock = threading.Lock()

    def send_message(
        self: Any,
        queue_name: str,
        message_body: str,
        message_attributes: Any = None,
        delay_seconds: Any = None,
        deduplication_id: str | None = None,
        group_id: str | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        queue = self.get_queue(queue_name)
        dedup_id = dedup_id_of(queue, message_body or "", deduplication_id) if queue.fifo_queue else None
        if dedup_id is None or not group_id:
            return send(
                self,
                queue_name,
                message_body,
                message_attributes,
                delay_seconds,
                deduplication_id,
                group_id,
                *args,
                **kwargs,
            )
        with lock:
            fresh = accept(queue, group_id, dedup_id, unix_time_millis())
        if fresh:
            message = send(
                self,
                queue_name,
                message_body,
                message_attributes,
                delay_seconds,
                uuid.uuid4().hex,
                group_id,
                *args,
                **kwargs,
            )
        else:
            message = duplicate(self, queue, message_body, message_attributes, delay_seconds, group_id)
        message.deduplication_id = dedup_id
        return message

    return send_message


def duplicate(backend: Any, queue: Any, body: str, attributes: Any, delay_seconds: Any, group_id: str) -> Any:
    """What moto's send answers for a message, without queueing it."""
    import random
    import string

    from moto.sqs.models import Message

    backend._validate_message(queue, body, int(delay_seconds or 0), "duplicate", group_id)
    message = Message(str(uuid.uuid4()), body)
    message.group_id = group_id
    message.sequence_number = "".join(random.choice(string.digits) for _ in range(20))  # noqa: S311  a sequence number shaped as moto's, not a secret
    if attributes:
        message.message_attributes = attributes
    message.mark_sent(delay_seconds=0)
    return message


def expiring(delete: Any) -> Any:
    """SQSBackend.delete_message refusing a FIFO message's expired receipt handle."""
    from moto.core.utils import unix_time_millis
    from moto.sqs.exceptions import InvalidParameterValue

    def delete_message(self: Any, queue_name: str, receipt_handle: str) -> Any:
        queue = self.get_queue(queue_name)
        if queue.fifo_queue:
            now = unix_time_millis()
            for message in queue._messages:
                if message.had_receipt_handle(receipt_handle):
                    if message.receipt_handle != receipt_handle or now > message.visible_at:
                        raise InvalidParameterValue(
                            f"Value {receipt_handle} for parameter ReceiptHandle is invalid. "
                            "Reason: The receipt handle has expired."
                        )
                    break
        return delete(self, queue_name, receipt_handle)

    return delete_message


def hidden() -> set[Any]:
    """Messages a FIFO receive on this thread must not see (held back behind one in flight)."""
    return getattr(_hidden, "messages", None) or set()


@contextmanager
def groups_in_order(queue: Any, now_ms: float) -> Iterator[None]:
    """While a FIFO receive walks the queue: each group's messages from its first one in flight on
    are hidden, and its in-flight messages are not counted as pending, so moto delivers those
    ahead; both restored after. (Call with the queue's messages locked.)"""
    if not queue.fifo_queue:
        yield
        return
    blocked: set[str] = set()
    held: set[Any] = set()
    for message in queue._messages:
        group = message.group_id
        if group is None:
            continue
        if group in blocked:
            held.add(message)
        elif now_ms <= message.visible_at and message in queue.pending_messages:
            blocked.add(group)
            held.add(message)
    released = {message for message in queue.pending_messages if message.group_id in blocked}
    queue.pending_messages.difference_update(released)
    _hidden.messages = held
    try:
        yield
    finally:
        _hidden.messages = None
        queue.pending_messages.update(message for message in released if message in queue._messages)
