"""SQS's backend: one consumer per received message (moto's receive is not thread-safe), no queue
scans per send, one per DeleteMessageBatch and per GetQueueAttributes, and moto's own SQS ->
Lambda trigger off. Every wrapper of a backend message call is composed in `patch_message_calls`.
(The message move tasks moto lacks: move_tasks.py.)"""

from __future__ import annotations

import threading
from typing import Any, cast

from embedded_aws.compat import new_objects
from embedded_aws.compat.internals import QUEUE_MESSAGES, QUEUE_MESSAGES_LOCK, VALIDATE_MESSAGE
from embedded_aws.compat.registry import T, declare, install, reads, states
from embedded_aws.services.sqs import dead_letters
from embedded_aws.services.sqs.metrics import DELETED, EMPTY_RECEIVES, RECEIVED, SENT


def delete_message_batch(self: Any, queue_name: str, receipts: list[dict[str, Any]]) -> Any:
    """moto deletes a batch one receipt handle at a time, scanning the whole queue twice for
    each (and rebuilding it), so with many messages in flight a batch of ten costs twenty
    scans. Here a batch is one scan, with the same outcome per entry: a handle of a message
    in the queue deletes it, a handle already deleted succeeds again, any other handle fails
    with ReceiptHandleIsInvalid. More than ten entries are refused, as AWS refuses them (moto
    accepted any number)."""
    from moto.sqs.exceptions import TooManyEntriesInBatchRequest

    if len(receipts) > 10:
        raise TooManyEntriesInBatchRequest(len(receipts))
    queue = self.get_queue(queue_name)
    wanted = {receipt["ReceiptHandle"] for receipt in receipts} - queue.deleted_messages
    if wanted:
        kept = []
        for message in queue._messages:
            handles = message.all_receipt_handles
            if wanted.isdisjoint(handles):
                kept.append(message)
            else:
                queue.pending_messages.discard(message)
                queue.deleted_messages.update(handles)
        queue._messages = kept
    success, errors = [], []
    for receipt in receipts:
        if receipt["ReceiptHandle"] in queue.deleted_messages:
            success.append(receipt["Id"])
        else:
            errors.append(
                {
                    "Id": receipt["Id"],
                    "SenderFault": True,
                    "Code": "ReceiptHandleIsInvalid",
                    "Message": f'The input receipt handle "{receipt["ReceiptHandle"]}" is not a valid receipt handle.',
                }
            )
    return success, errors


def release_expired_groups(queue: Any, now_ms: float) -> None:
    """A FIFO message group is locked while any of its messages is in flight; a message whose
    visibility timeout has passed is no longer in flight. moto releases such messages one at a
    time as its receive walks past them, and still counts the group as locked by the others: when
    messages 2, 3 and 4 of a group came back after a partial batch failure, a receive returned
    only 4 (the last one it walked past), and 2 and 3 waited until 4 was gone (AWS returned 2, 3
    and 4 together, in order: LocalStack's recording, docs/local-fidelity.md). Releasing every
    expired message before the receive walks the queue lets the group be received in order."""
    if queue.fifo_queue:
        expired = {message for message in queue.pending_messages if now_ms > message.visible_at}
        queue.pending_messages.difference_update(expired)


# What a send, a receive and a delete count towards (services/sqs/metrics.py), by method.
_COUNTED = {
    "send_message": SENT,
    "receive_message": RECEIVED,
    "delete_message": DELETED,
    "delete_message_batch": DELETED,  # each entry that succeeded
}
_LOCKED = (
    "send_message",
    "send_message_batch",
    "delete_message",
    "delete_message_batch",
    "change_message_visibility",
    "change_message_visibility_batch",
    "purge_queue",
)
# The calls after which a long poll's receive may find what it did not before (sends wake it
# through moto's Queue.add_message).
_RELEASING = (
    "delete_message",
    "delete_message_batch",
    "change_message_visibility",
    "change_message_visibility_batch",
    "purge_queue",
)
# True while a send runs on this thread: `Queue.attributes` then skips its counters.
_sending = threading.local()


def counted_amount(name: str, result: Any) -> int:
    """How many messages a call of backend method `name` that answered `result` counts: the
    messages received, the entries of a batch delete that succeeded, else one."""
    if name == "receive_message":
        return len(result)
    if name == "delete_message_batch":
        return len(result[0])
    return 1


def counted(name: str, method: Any, metrics: Any) -> Any:
    """`method`, counting towards its AWS/SQS metric (`_COUNTED`) what `counted_amount` says."""
    metric = _COUNTED[name]

    def call(self: Any, queue_name: str, *args: Any, **kwargs: Any) -> Any:
        result = method(self, queue_name, *args, **kwargs)
        metrics.count(self, queue_name, metric, counted_amount(name, result))
        return result

    return call


def locked(method: Any, lock: Any) -> Any:
    """`method`, run under `lock`."""

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lock:
            return method(self, *args, **kwargs)

    return call


def sending(method: Any) -> Any:
    """`method`, marked as a send on this thread while it runs (`patch_send_attributes`)."""

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        before, _sending.active = getattr(_sending, "active", False), True
        try:
            return method(self, *args, **kwargs)
        finally:
            _sending.active = before

    return call


def long_polling(receive: Any, lock: Any, metrics: Any) -> Any:
    """A ReceiveMessage that takes the queue's messages under `lock`, one short receive at a
    time (`receive`, a FIFO queue's expired groups released first), and long-polls outside it;
    a call that returns nothing counts one empty receive.

    Between receives it waits for the queue to change (`notifying`: a send, a delete, a
    visibility change or a purge) or for a second to pass (a visibility timeout or a delay
    ending), never for "a message is visible": a FIFO queue whose visible messages all wait behind
    their group's message in flight has visible messages no receive returns, and a wait for those
    returned at once, a core spinning for the whole long poll."""
    from moto.core.utils import unix_time, unix_time_millis

    from embedded_aws.services.sqs import fifo

    def receive_message(
        self: Any,
        queue_name: str,
        count: int,
        wait_seconds_timeout: int,
        visibility_timeout: int,
        message_attribute_names: list[str] | None = None,
    ) -> Any:
        deadline = unix_time() + (wait_seconds_timeout or 0)
        while True:
            with lock:
                queue, now = self.get_queue(queue_name), unix_time_millis()
                release_expired_groups(queue, now)
                with fifo.groups_in_order(queue, now):
                    result = receive(self, queue_name, count, 0, visibility_timeout, message_attribute_names)
                remaining = deadline - unix_time()
                waiting = not result and remaining > 0
                if waiting:  # taken before `lock` is let go: no change can slip in unnoticed
                    queue._messages_lock.acquire()
            if not waiting:
                if not result:  # one per ReceiveMessage call, however long it waited
                    metrics.count(self, queue_name, EMPTY_RECEIVES, 1)
                return result
            try:
                queue._messages_lock.wait(min(remaining, 1))
            finally:
                queue._messages_lock.release()

    return receive_message


def notifying(method: Any) -> Any:
    """`method`, waking the queue's long polls when it succeeds (moto's `Queue.add_message` wakes
    them on a send; a delete, a visibility change or a purge can release a FIFO group or make
    a message visible, and only a send did)."""

    def call(self: Any, queue_name: str, *args: Any, **kwargs: Any) -> Any:
        result = method(self, queue_name, *args, **kwargs)
        changed = self.get_queue(queue_name)._messages_lock
        with changed:
            changed.notify_all()
        return result

    return call


def composed_message_calls(original: dict[str, Any], metrics: Any, lock: Any) -> dict[str, Any]:
    """The backend's message calls, each wrapped in the order `patch_message_calls` lists."""
    from embedded_aws.services.sqs import batches, fifo
    from embedded_aws.services.sqs.limits import limited

    calls = {
        name: counted(name, method, metrics) if name in _COUNTED else method
        for name, method in original.items()
    }
    receive = calls.pop("receive_message")
    for name in _RELEASING:
        calls[name] = notifying(calls[name])
    calls = {name: locked(method, lock) for name, method in calls.items()}
    for name in ("send_message", "send_message_batch"):
        calls[name] = sending(calls[name])
    calls["receive_message"], calls["send_message_batch"] = limited(
        long_polling(receive, lock, metrics), batches.per_entry(calls["send_message_batch"])
    )
    calls["send_message"] = batches.sized(fifo.deduplicated(calls["send_message"]))
    calls["delete_message"] = fifo.expiring(calls["delete_message"])
    for name in ("delete_message_batch", "change_message_visibility_batch"):
        calls[name] = batches.checked_ids(calls[name])
    return calls


@declare(
    "sqs.message-calls",
    (
        "one consumer per received message, AWS/SQS counters, one scan per DeleteMessageBatch: every "
        "wrapper of the backend's message calls, composed in one place"
    ),
    T(
        "moto.sqs.models:SQSBackend.send_message",
        "self",
        "queue_name",
        "message_body",
        "message_attributes",
        "delay_seconds",
        "deduplication_id",
        "group_id",
        "system_attributes",
        "validate_group_id",
    ),
    T("moto.sqs.models:SQSBackend.send_message_batch", "self", "queue_name", "entries"),
    T(
        "moto.sqs.models:SQSBackend.receive_message",
        "self",
        "queue_name",
        "count",
        "wait_seconds_timeout",
        "visibility_timeout",
        "message_attribute_names",
    ),
    T("moto.sqs.models:SQSBackend.delete_message", "self", "queue_name", "receipt_handle"),
    T("moto.sqs.models:SQSBackend.delete_message_batch", "self", "queue_name", "receipts"),
    T(
        "moto.sqs.models:SQSBackend.change_message_visibility",
        "self",
        "queue_name",
        "receipt_handle",
        "visibility_timeout",
    ),
    T("moto.sqs.models:SQSBackend.change_message_visibility_batch", "self", "queue_name", "entries"),
    T("moto.sqs.models:SQSBackend.purge_queue", "self", "queue_name"),
    QUEUE_MESSAGES,
    QUEUE_MESSAGES_LOCK,
    # fifo.py: a deduplicated send's message and its FIFO fields
    *states(
        "moto.sqs.models:Message",
        new_objects.message,
        *("group_id", "sequence_number", "deduplication_id", "message_attributes"),
    ),
    # fifo.py's duplicate check validates as a send would (sqs.answers wraps it)
    reads(*VALIDATE_MESSAGE),
    fixes_moto=(
        "ReceiveMessage is not thread-safe: concurrent receivers get the same message or 500s; no "
        "in-flight cap; a batch's size is its bodies' characters, not the bytes of bodies and attributes;"
        " MaximumMessageSize counts the body's characters, not body and attributes in bytes; "
        "SendMessageBatch refuses the whole batch for one entry over MaximumMessageSize (AWS fails that "
        "entry alone) and answers MissingParameter for a FIFO entry without MessageGroupId (AWS: "
        "InvalidParameterValue); ChangeMessageVisibilityBatch accepts more than ten entries and invalid "
        "or repeated entry ids, DeleteMessageBatch invalid or repeated ids; FIFO deduplication compares "
        "only with messages still queued (a duplicate sent after the first copy was deleted is delivered)"
        " and ignores DeduplicationScope messageGroup; DeleteMessage with a FIFO message's expired "
        "receipt handle deletes it (AWS: InvalidParameterValue, the receipt handle has expired); a FIFO "
        "group with any message in flight holds back every message of the group, also those ahead of it "
        "(a message whose visibility was extended)"
    ),
    uses=("cloudwatch.sqs",),
)
def patch_message_calls(metrics: Any) -> None:
    """Every wrapper of moto's SQSBackend message calls, composed here in one place, innermost
    first:

    1. counted: sends, receives and deletes count towards AWS/SQS (`metrics.count`).
    2. one scan per DeleteMessageBatch (`delete_message_batch` above replaces moto's).
    3. locked: SQS hands a received message to one consumer until its visibility timeout
       ends. moto's receive walks the queue and marks messages in separate steps without a
       lock, so concurrent pollers could receive the same message twice or fail with 500s;
       every call that changes a queue's messages runs under one lock, and a long poll waits
       outside it.
    4. sending: while a send runs, `Queue.attributes` holds only what the send path reads
       (`patch_send_attributes`).
    5. a FIFO receive first releases the message groups whose in-flight messages are visible
       again (`release_expired_groups`).
    6. limited: the in-flight cap and SendMessageBatch's size in bytes (limits.py).
    7. AWS's rules moto lacks, outermost: a message's size in bytes against MaximumMessageSize, an
       oversized batch entry failing alone (inside 6, so a batch over 1 MiB is refused whole
       first), batch ids and counts (batches.py); FIFO
       deduplication for five minutes by scope, expired receipt handles, a group held back from
       its first message in flight on (fifo.py; that one inside the lock, with step 5)."""
    from moto.sqs.models import SQSBackend

    original = {name: getattr(SQSBackend, name) for name in (*_LOCKED, "receive_message")}
    original["delete_message_batch"] = delete_message_batch
    for name, method in composed_message_calls(original, metrics, threading.RLock()).items():
        setattr(SQSBackend, name, method)


def enqueued_at_ms(message: Any, fifo: bool) -> float:
    """What a message's retention counts from: its first enqueue, also after a move to a standard
    DLQ; the move into a FIFO DLQ, where "the enqueue timestamp resets" ("Setting-up dead-letter
    queue retention")."""
    if fifo:
        arrived = dead_letters.arrived_at_ms(message)
        if arrived is not None:
            return arrived
    sent: float = message.sent_timestamp
    return sent


@declare(
    "sqs.retention-check",
    "a receive checks each message's retention without building every attribute, from the move "
    "into a FIFO dead-letter queue",
    T(
        "moto.sqs.models:SQSBackend.is_message_valid_based_on_retention_period",
        "self",
        "queue_name",
        "message",
    ),
)
def patch_retention_check() -> None:
    """moto computes every queue attribute (a scan of the queue) for each message it hands out,
    which makes a receive quadratic in queue depth; only the retention is needed. moto counts it
    from SentTimestamp in every queue; a FIFO dead letter's counts from its move."""
    from moto.core.utils import unix_time
    from moto.sqs.models import SQSBackend

    def is_message_valid_based_on_retention_period(self: Any, queue_name: str, message: Any) -> bool:
        queue = self.get_queue(queue_name)
        retention = int(queue.message_retention_period)
        return bool(retention + enqueued_at_ms(message, bool(queue.fifo_queue)) / 1000 > unix_time())

    install(
        SQSBackend, "is_message_valid_based_on_retention_period", is_message_valid_based_on_retention_period
    )


@declare(
    "sqs.send-attributes",
    "a send reads only the attributes it needs (no three scans per message)",
    T("moto.sqs.models:Queue.attributes", "self"),
)
def patch_send_attributes() -> None:
    """moto's SendMessage reads `queue.attributes` for ContentBasedDeduplication, and building
    that dict counts visible, delayed and in-flight messages (three scans of the queue) and
    renames every attribute, per message sent. While a send runs (`patch_message_calls` marks
    it), `attributes` holds just what that path reads; GetQueueAttributes and everything else
    still get the full dict."""
    from moto.sqs.models import Queue

    attributes: Any = cast(property, Queue.__dict__["attributes"]).fget

    def queue_attributes(self: Any) -> dict[str, Any]:
        if getattr(_sending, "active", False):
            # All the send path reads (send_message, _validate_message, add_message); moto
            # lists FIFO attributes for FIFO queues only and lower-cases booleans.
            if not self.fifo_queue:
                return {}
            value = self.content_based_deduplication
            return {"ContentBasedDeduplication": str(value).lower() if isinstance(value, bool) else value}
        full: dict[str, Any] = attributes(self)
        return full

    Queue.attributes = property(queue_attributes)  # type: ignore[assignment]  # moto's is a property too


_QUEUE_COUNTERS = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


def queue_counters(messages: Any, now_ms: float) -> dict[str, int]:
    """The three approximate counters of a queue in one pass, by moto's own rules: visible is
    past its visibility timeout and not delayed; not visible and delayed are counted apart."""
    visible = not_visible = delayed = 0
    for message in messages:
        is_delayed = now_ms < message.delayed_until
        if now_ms > message.visible_at:
            visible += not is_delayed
        else:
            not_visible += 1
        delayed += is_delayed
    return {
        "ApproximateNumberOfMessages": visible,
        "ApproximateNumberOfMessagesNotVisible": not_visible,
        "ApproximateNumberOfMessagesDelayed": delayed,
    }


@declare(
    "sqs.queue-attributes",
    "GetQueueAttributes counts once per call, not twice per name",
    T("moto.sqs.models:SQSBackend.get_queue_attributes", "self", "queue_name", "attribute_names"),
    QUEUE_MESSAGES,
)
def patch_queue_attributes() -> None:
    """GetQueueAttributes for named attributes: moto built the whole attribute dict (three scans
    of the queue) twice per name asked for, so a poll of three counters scanned a deep queue
    eighteen times. Here the counters asked for take one pass; other names are read directly.
    `All`, and names moto rejects, still go through moto."""
    from moto.core.utils import camelcase_to_underscores, unix_time_millis
    from moto.sqs.models import SQSBackend

    original = SQSBackend.get_queue_attributes

    def get_queue_attributes(self: Any, queue_name: str, attribute_names: list[str]) -> dict[str, Any]:
        queue = self.get_queue(queue_name)
        known = set(queue.BASE_ATTRIBUTES) | (set(queue.FIFO_ATTRIBUTES) if queue.fifo_queue else set())
        if not attribute_names or "All" in attribute_names or not set(attribute_names) <= known:
            return original(self, queue_name, attribute_names)
        result: dict[str, Any] = {}
        if any(name in _QUEUE_COUNTERS for name in attribute_names):
            counters = queue_counters(queue._messages, unix_time_millis())
            result.update({name: counters[name] for name in attribute_names if name in counters})
        for name in attribute_names:
            if name not in _QUEUE_COUNTERS:
                value = getattr(queue, camelcase_to_underscores(name))
                if value is not None:
                    result[name] = value
        return result

    install(SQSBackend, "get_queue_attributes", get_queue_attributes)


@declare(
    "sqs.lambda-trigger-off",
    "the local Lambda host polls mappings; moto would receive inside SendMessage",
    T("moto.sqs.models:Queue.lambda_event_source_mappings", adds=True),
    fixes_moto=(
        "with a mapping, SendMessage receives on the function's behalf and, without Docker, bumps receive"
        " counts until messages are redriven unprocessed"
    ),
)
def patch_lambda_trigger() -> None:
    """moto's own SQS -> Lambda wiring receives up to a batch inside the producer's SendMessage
    and tries to run the function through Docker: without Docker every send bumps the oldest
    message's receive count until the redrive policy moves it unprocessed. The local Lambda host
    polls mappings instead, as the Lambda service does."""
    from moto.sqs.models import Queue

    # A data descriptor on the class wins over the attribute moto sets per queue: every read
    # sees no mapping, so SendMessage never receives on the mapping's behalf.
    Queue.lambda_event_source_mappings = property(  # type: ignore[assignment]  # a dict attribute in moto
        lambda self: {}, lambda self, value: None
    )
