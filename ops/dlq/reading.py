"""Reading the dead-letter queue a page at a time.

The queue is read a page (ten messages) at a time, and nothing holds the whole of it, nor a body
longer than its page:
- The end of the queue is an empty long poll while SQS counts no visible message, not one empty
  receive: SQS's in-flight cap answers a long poll with nothing (SQS quotas, "Messages per queue
  (in flight)"). Messages another reader holds are invisible to this one; each report says how
  many there were (`in_flight_elsewhere`) instead of calling the queue empty.
- A hold that could not be extended (a `Failed` entry) has lapsed: the message may be received
  again, by this reader or another. This reader recognises it by its id and holds it again
  without counting it twice; each report says how many holds lapsed. SQS keeps a message
  invisible for at most 12 hours from its receive (ChangeMessageVisibility API reference), so a
  reader stops `VISIBILITY_MARGIN_SECONDS` before that and releases what it holds.

Each read adds one to a message's receive count, which moves nothing: the DLQ has no redrive
policy of its own.

A discard records intent and outcome as two facts in the stack's audit log group, one `audit_id`:
`DISCARD_REQUESTED` (who, when, why, the body) before the delete, then `DISCARD_CONFIRMED` only
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Self

from ops.dlq.letters import DeadLetter, batches_of

# How long a message read stays invisible before it is extended; also how long it stays hidden
# from everyone if the reading command dies.
HOLD_SECONDS = 60
# A long poll asks every SQS server, where a short poll samples a few: only an empty long poll
# means the queue has no visible message left; SQS's counters lag, so they are asked again.
END_OF_QUEUE_WAIT_SECONDS = 1
END_OF_QUEUE_CHECKS = 3
# ChangeMessageVisibility: a message stays invisible at most 12 hours from its receive.
MAX_VISIBILITY_SECONDS = 12 * 3600
VISIBILITY_MARGIN_SECONDS = 600
EXTEND_THREADS = 4  # ChangeMessageVisibilityBatch calls side by side
RECENT_IDS = 10_000  # ids of messages moved or released, remembered to recognise a repeat


def letter_of(message: dict[str, Any]) -> DeadLetter:
    attributes = message.get("Attributes", {})
    return DeadLetter(
        message_id=message["MessageId"],
        body=message.get("Body", ""),
        receive_count=int(attributes.get("ApproximateReceiveCount", 0)),
        sent_ms=int(attributes["SentTimestamp"]) if "SentTimestamp" in attributes else None,
        message_attributes=message.get("MessageAttributes", {}),
        receipt_handle=message["ReceiptHandle"],
        group_id=attributes.get("MessageGroupId"),
    )


@dataclass(slots=True)
class Hold:
    """What a reader keeps of a message it holds: never the body. Times are the reader's clock,
    taken before the request that set them, so a hold ends no earlier than `until` says."""

    receipt_handle: str
    until: float  # invisible at least until then
    received: float  # the receive that gave this handle (SQS's 12 hours count from it)
    lapsed: bool = False  # an extension failed: the message may be visible, or another's


class DeadLetterReader:
    """Pages of the DLQ, each message once. What the caller holds stays invisible (its visibility
    extended before it runs out) until it is forgotten (deleted) or released; on exit everything
    still held is released, ten at a time."""

    def __init__(
        self,
        sqs: Any,
        queue_url: str,
        hold_seconds: int = HOLD_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        max_visibility_seconds: float = MAX_VISIBILITY_SECONDS,
        threads: int = EXTEND_THREADS,
    ) -> None:
        self.sqs, self.queue_url, self.hold_seconds, self.clock = sqs, queue_url, hold_seconds, clock
        self.stop_at_age = max_visibility_seconds - VISIBILITY_MARGIN_SECONDS
        self.max_visibility_seconds = max_visibility_seconds
        # message id -> its hold, oldest receive first (a message received again moves to the end)
        self.held: dict[str, Hold] = {}
        self.recent: OrderedDict[str, None] = OrderedDict()  # moved or released, the last RECENT_IDS
        self.reached_end = False
        self.unread_visible = 0  # what SQS still counted as visible when reading stopped
        self.stopped = ""  # why reading stopped before the end, when it did
        self.lapsed = 0  # holds that could not be extended
        self.extended = 0  # holds extended (ChangeMessageVisibilityBatch entries SQS took)
        self.repeats = 0  # messages received again after their hold lapsed or they were let go
        self.threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._next_due = float("inf")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.release(list(self.held))
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=False)

    def counters(self) -> tuple[int, int]:
        """(visible, not visible), as SQS approximates them."""
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=self.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]), int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )

    def pages(self) -> Iterator[list[DeadLetter]]:
        """Pages of messages not seen before, until the end of the queue (or `stopped`). A page's
        messages are held; the caller forgets, releases or keeps holding each."""
        empty = 0
        while True:
            self._extend_due()
            if self.stopped:
                return
            asked = self.clock()
            received = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=self.hold_seconds,
                WaitTimeSeconds=END_OF_QUEUE_WAIT_SECONDS,
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            page = []
            for message in received:
                message_id = message["MessageId"]
                again = message_id in self.held or message_id in self.recent
                self.held.pop(message_id, None)
                self.held[message_id] = Hold(message["ReceiptHandle"], asked + self.hold_seconds, asked)
                self._next_due = min(self._next_due, asked + self.hold_seconds / 2)
                if again:  # its hold lapsed or it was let go: held again, not counted again
                    self.repeats += 1
                else:
                    page.append(letter_of(message))
            if page:
                empty = 0
                yield page
                continue
            if received:
                continue
            visible, _ = self.counters()
            empty += 1
            if visible == 0 or empty > END_OF_QUEUE_CHECKS:
                self.reached_end, self.unread_visible = visible == 0, visible
                return

    def _extend_due(self) -> None:
        """Extend every hold that would end within half a hold from now, batches side by side;
        stop reading before a hold meets SQS's 12-hour limit or extensions fall behind."""
        now = self.clock()
        oldest = next(iter(self.held.values()), None)
        if oldest is not None and now - oldest.received >= self.stop_at_age:
            self.stopped = (
                f"stopped after holding messages for {(now - oldest.received) / 3600:.1f} hours: SQS keeps "
                f"a message invisible at most {self.max_visibility_seconds / 3600:g} hours from its "
                "receive (ChangeMessageVisibility); what was held is released, run again"
            )
            return
        if now < self._next_due:
            return
        due = [
            (message_id, hold)
            for message_id, hold in self.held.items()
            if not hold.lapsed and hold.until - now < self.hold_seconds / 2
        ]
        due_batches = list(batches_of(due))
        if len(due_batches) > 1 and self.threads > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="dlq-hold")
            self.lapsed += sum(self._pool.map(self._extend, due_batches))
        else:
            self.lapsed += sum(map(self._extend, due_batches))
        live = [hold.until for hold in self.held.values() if not hold.lapsed]
        self._next_due = min(live) - self.hold_seconds / 2 if live else float("inf")
        took = self.clock() - now
        if took > self.hold_seconds / 4:
            self.stopped = (
                f"stopped: extending {len(due)} holds took {took:.1f} s, more than a quarter of the "
                f"{self.hold_seconds} s hold; run again with a longer --hold-seconds"
            )

    def _extend(self, batch: list[tuple[str, Hold]]) -> int:
        """One ChangeMessageVisibilityBatch; how many of its entries failed (lapsed)."""
        asked = self.clock()
        seconds = [
            max(0, int(min(self.hold_seconds, self.max_visibility_seconds - (asked - hold.received))))
            for _, hold in batch
        ]
        answer = self.sqs.change_message_visibility_batch(
            QueueUrl=self.queue_url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": hold.receipt_handle, "VisibilityTimeout": seconds[i]}
                for i, (_, hold) in enumerate(batch)
            ],
        )
        failed = {int(failure["Id"]) for failure in answer.get("Failed", [])}
        failed |= {i for i, left in enumerate(seconds) if left == 0}  # at SQS's limit: visible now
        for i, (_, hold) in enumerate(batch):
            if i in failed:
                hold.lapsed = True
            else:
                hold.until = asked + seconds[i]
        self.extended += len(batch) - len(failed)
        return len(failed)

    def extend_one(self, message_id: str) -> Hold:
        """Extend one hold now with its latest handle; raises if SQS refuses (the message is no
        longer in flight under that handle)."""
        hold = self.held[message_id]
        asked = self.clock()
        self.sqs.change_message_visibility(
            QueueUrl=self.queue_url, ReceiptHandle=hold.receipt_handle, VisibilityTimeout=self.hold_seconds
        )
        hold.until = asked + self.hold_seconds
        return hold

    def _remember(self, message_id: str) -> None:
        self.recent[message_id] = None
        self.recent.move_to_end(message_id)
        while len(self.recent) > RECENT_IDS:
            self.recent.popitem(last=False)

    def forget(self, letters: Iterable[DeadLetter | str]) -> None:
        """These were deleted."""
        for letter in letters:
            message_id = letter if isinstance(letter, str) else letter.message_id
            self.held.pop(message_id, None)
            self._remember(message_id)

    def release(self, letters: Iterable[DeadLetter | str]) -> None:
        """Make these visible again (a lapsed hold has nothing to release)."""
        handles = []
        for letter in letters:
            message_id = letter if isinstance(letter, str) else letter.message_id
            hold = self.held.pop(message_id, None)
            if hold is not None:
                self._remember(message_id)
                if not hold.lapsed:
                    handles.append(hold.receipt_handle)
        for batch in batches_of(handles):
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                    for i, handle in enumerate(batch)
                ],
            )

    def visible_and_elsewhere(self) -> tuple[int, int]:
        """(visible, in flight elsewhere): SQS's counts, less what this reader holds itself."""
        visible, not_visible = self.counters()
        return visible, max(0, not_visible - len(self.held))

    def in_flight_elsewhere(self) -> int:
        """Messages invisible to this reader that it does not hold: another reader's."""
        return self.visible_and_elsewhere()[1]
