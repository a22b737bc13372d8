"""The dead-letter queue, understood: every message classified against the orders table with the
worker's own parser and duplicate rule (stacks/lambda_code.py), and what an operator may do with it.

- `pending`: a valid job whose id is not stored. It failed for a passing reason (throttling, an
  outage, a timeout); sent back, the worker writes it.
- `stored`: a valid job whose order is already stored, and kept at least as long as a copy of
  this dead letter can still reach the worker. Sent back, the worker acknowledges it as a duplicate.
- `lapsing`: a valid job whose order is stored, but with an `expires_at` (order_retention_days)
  that comes before a copy of it, sent back at the end of its DLQ life, could stop arriving: it
  could then be written again as a new order. Never sent back automatically; its order is stored,
  so discarding it loses nothing. A copy can arrive until its first send, plus its life in the DLQ
  (the DLQ's retention from that send on a standard queue; on a FIFO queue from its move, which
  comes at most a jobs retention after the send: "Setting-up dead-letter queue retention"), plus a
  full jobs retention once sent back (a new message on either queue type). That is the
  stack's order_retention_days floor (stacks/config.py) counted from this letter's send.
- `conflict`: a valid job whose id is stored with other details. Never sent back automatically.
- `malformed`: the worker's parser rejects it. Never sent back.

The queue is read a page (ten messages) at a time, and nothing holds the whole of it, nor a body
longer than its page:

- A redrive moves each page's safe messages (send, then delete) before it reads on, and keeps
  only the id and receipt handle of each unsafe one it steps past, invisible, extending their
  visibility while it works (`DeadLetterReader`, ten per ChangeMessageVisibilityBatch, batches
  side by side). A failure between send and delete leaves a copy in both queues, which the
  worker turns into a duplicate, never a lost order. Its report counts every move and lists the
  first `LISTED` moves and failures.
- A listing reads at most `limit` messages, holds them while it classifies them, then releases
  them; its counts are exact when it reached the end of the queue (`complete`), and otherwise
  those of the messages read, beside the queue's own approximate totals.
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
once the delete is confirmed, or `DISCARD_FAILED` (with the error) when it failed. A process
killed in between leaves "requested, not confirmed", which is true whether or not the delete
reached SQS. Confirmed means: SQS accepted the delete, made with the message's latest receipt
handle, before the hold that handle carries could have ended. DeleteMessage with a receipt
handle that is not the latest "will still succeed, but the message might not be deleted"
(DeleteMessage API reference); a handle is the latest while its message stays invisible,
because nobody else can receive it then. So the discard first extends the hold with that handle
(ChangeMessageVisibility, which fails on a message no longer in flight) and confirms only when
the delete answered within the extended hold, timed from before the extension was asked for.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar

from guarded_consumer import GuardedHandler, InvalidBody, write_guard
from ops.observe import log_events
from stacks.config import DLQ_AUDIT_STREAM
from stacks.lambda_code import LAMBDA_SOURCE, contract, load_handler

Decision, Delivery = contract().Decision, contract().Delivery
EXPIRES_AT = contract().EXPIRES_AT_FIELD
# A conflict and a malformed body keep the words of the worker's outcomes (its contract).
LAPSING = "lapsing"
CLASSES = ("pending", "stored", LAPSING, Delivery.CONFLICT, Delivery.MALFORMED)
SAFE_CLASSES = ("pending", "stored")
# How long a message read stays invisible before it is extended; also how long it stays hidden
# from everyone if the reading command dies.
HOLD_SECONDS = 60
# A long poll asks every SQS server, where a short poll samples a few: only an empty long poll
# means the queue has no visible message left; SQS's counters lag, so they are asked again.
END_OF_QUEUE_WAIT_SECONDS = 1
END_OF_QUEUE_CHECKS = 3
LIST_LIMIT = 1000  # messages a listing reads and holds at most
MAX_HELD = 100_000  # unsafe messages a redrive steps past at most (SQS's in-flight cap is ~120,000)
DISCARD_MAX_HELD = 10_000  # messages a discard reads past, looking for its target, at most
# ChangeMessageVisibility: a message stays invisible at most 12 hours from its receive.
MAX_VISIBILITY_SECONDS = 12 * 3600
VISIBILITY_MARGIN_SECONDS = 600
EXTEND_THREADS = 4  # ChangeMessageVisibilityBatch calls side by side
RECENT_IDS = 10_000  # ids of messages moved or released, remembered to recognise a repeat
LISTED = 1000  # moves and failures a redrive report lists; all of them are counted
BATCH_BYTES = 1_048_576  # SendMessageBatch: all the batch's messages together (SQS API reference)
# BatchGetItem's unprocessed keys: retried with exponential backoff, as its API reference advises.
BATCH_GET_TRIES = 8
BACKOFF_SECONDS, BACKOFF_CAP_SECONDS = 0.05, 2.0
AUDIT_REQUESTED_TAG = "DISCARD_REQUESTED"
AUDIT_CONFIRMED_TAG = "DISCARD_CONFIRMED"
AUDIT_FAILED_TAG = "DISCARD_FAILED"
AUDIT_UNCONFIRMED_TAG = "DISCARD_UNCONFIRMED"
# Written before the delete by versions that did not confirm it: read as requested, not confirmed.
AUDIT_LEGACY_TAG = "DISCARD"
AUDIT_STREAM = DLQ_AUDIT_STREAM
MAX_REASON = 1000
CONFIRMED = "discarded"
NOT_CONFIRMED = "requested, not confirmed"


class DlqError(RuntimeError):
    """The operation cannot be done; the message says why in one line."""


@dataclass
class DeadLetter:
    message_id: str
    body: str
    receive_count: int
    sent_ms: int | None
    message_attributes: dict[str, Any]
    receipt_handle: str = field(repr=False)
    kind: str = ""  # one of CLASSES once classified
    reason: str = ""
    order_id: str | None = None
    requested: dict[str, Any] | None = None
    stored: dict[str, Any] | None = None
    group_id: str | None = None  # its MessageGroupId, from a FIFO queue

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
                name: _attribute_json(value) for name, value in self.message_attributes.items()
            },
        }


def _attribute_json(value: dict[str, Any]) -> dict[str, str]:
    import base64

    if "BinaryValue" in value:
        return {"type": value["DataType"], "base64": base64.b64encode(value["BinaryValue"]).decode()}
    return {"type": value["DataType"], "value": value.get("StringValue", "")}


_Item = TypeVar("_Item")


def _batches(items: list[_Item], size: int = 10) -> Iterator[list[_Item]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- reading a page at a time ----------------------------------------------------------------


def _letter(message: dict[str, Any]) -> DeadLetter:
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
                    page.append(_letter(message))
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
        batches = list(_batches(due))
        if len(batches) > 1 and self.threads > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="dlq-hold")
            self.lapsed += sum(self._pool.map(self._extend, batches))
        else:
            self.lapsed += sum(map(self._extend, batches))
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
        for batch in _batches(handles):
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


# --- classification -------------------------------------------------------------------------


@dataclass(frozen=True)
class Judge:
    """How the deployed worker reads a body and which attribute keys its table: its handler's
    (a guarded_consumer.GuardedHandler), so a dead letter is classified as the worker decides."""

    parse: Callable[[Any], write_guard.Guarded]
    key_attribute: str


def judge_of(handler: Path | None = None) -> Judge:
    """The judge of the handler in `handler/app.py`; the lab's worker (lambda/worker) by default."""
    directory = handler or LAMBDA_SOURCE / "worker"
    if not (directory / "app.py").is_file():
        raise DlqError(f"--handler {directory}: no app.py there (give the directory of the worker's handler)")
    found = getattr(load_handler(directory), "handler", None)
    if not isinstance(found, GuardedHandler):
        raise DlqError(
            f"--handler {directory}: its app.py's `handler` is not a guarded_consumer.GuardedHandler, "
            "so its bodies cannot be judged as the worker judges them"
        )
    return Judge(found.parse, found.key_attribute)


def stored_orders(
    dynamodb: Any,
    table: str,
    ids: Iterable[str],
    sleep: Callable[[float], None] = time.sleep,
    key_attribute: str = contract().ID_FIELD,
) -> dict[str, dict[str, Any]]:
    """The stored items of these keys (strongly consistent), by key. Keys DynamoDB leaves
    unprocessed are asked for again after an exponentially growing, jittered pause (BatchGetItem
    API reference: "we strongly recommend that you use an exponential backoff algorithm")."""
    found: dict[str, dict[str, Any]] = {}
    for batch in _batches(sorted(set(ids)), 100):
        request: dict[str, Any] = {
            table: {"Keys": [{key_attribute: {"S": key}} for key in batch], "ConsistentRead": True}
        }
        for attempt in range(BATCH_GET_TRIES):
            if attempt:
                sleep(random.uniform(0.5, 1.0) * min(BACKOFF_CAP_SECONDS, BACKOFF_SECONDS * 2**attempt))  # noqa: S311  backoff jitter, not a secret
            response = dynamodb.batch_get_item(RequestItems=request)
            for attributes in response.get("Responses", {}).get(table, []):
                item = write_guard.item_from_attributes(attributes)
                found[str(item[key_attribute])] = item
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
        else:
            left = len(request.get(table, {}).get("Keys", []))
            raise DlqError(
                f"DynamoDB left {left} order id(s) of {table} unprocessed after {BATCH_GET_TRIES} tries "
                "(its read capacity is exhausted): run again later"
            )
    return found


@dataclass(frozen=True)
class Lifetime:
    """How long a copy of a dead letter can still reach the worker, from the queues' retentions."""

    fifo: bool
    job_retention_seconds: int
    dead_letter_retention_seconds: int

    def arrives_until_ms(self, sent_ms: int) -> int:
        """The latest a copy of a dead letter first sent at `sent_ms` can reach the worker: its
        DLQ life ends at its send plus the DLQ's retention (standard), or at its move plus that
        (FIFO; the move comes at most a jobs retention after the send); sent back then, a new
        message waits up to the jobs retention."""
        dlq_life = self.dead_letter_retention_seconds + (self.job_retention_seconds if self.fifo else 0)
        return sent_ms + (dlq_life + self.job_retention_seconds) * 1000


def lifetime_of(sqs: Any, queues: Queues) -> Lifetime:
    def retention(url: str) -> int:
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["MessageRetentionPeriod"])
        return int(attributes["Attributes"]["MessageRetentionPeriod"])

    return Lifetime(queues.dlq_url.endswith(".fifo"), retention(queues.jobs_url), retention(queues.dlq_url))


def _when(epoch_ms: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch_ms / 1000))


def classify(
    letters: list[DeadLetter],
    lookup: Callable[[Iterable[str]], dict[str, dict[str, Any]]],
    lifetime: Callable[[], Lifetime] | None = None,
    judge: Judge | None = None,
) -> None:
    """Set each letter's class and reason, as the worker would decide it now; a duplicate whose
    stored order expires before a copy of the letter could stop arriving is `lapsing`
    (`lifetime` is asked only then). `judge`: the worker's parser (the lab's by default)."""
    parse = (judge or judge_of()).parse
    jobs = {}
    for letter in letters:
        try:
            jobs[letter.message_id] = parse(letter.body)
        except InvalidBody as error:
            letter.kind, letter.reason = Delivery.MALFORMED, str(error)
    stored = lookup(job.key for job in jobs.values())
    for letter in letters:
        job = jobs.get(letter.message_id)
        if job is None:
            continue
        letter.order_id, letter.requested, letter.stored = job.key, job.item(), stored.get(job.key)
        try:
            outcome = write_guard.decide(job, letter.stored)
        except write_guard.ConflictingOrder as conflict:
            letter.kind, letter.reason = Delivery.CONFLICT, str(conflict)
            continue
        if outcome.decision == Decision.WRITTEN:
            letter.kind, letter.reason = "pending", "not stored yet: a redrive writes it"
            continue
        letter.kind, letter.reason = "stored", "already stored: a redrive is acknowledged as a duplicate"
        expires_at = (letter.stored or {}).get(EXPIRES_AT)
        if expires_at is None or lifetime is None:
            continue
        until = lifetime().arrives_until_ms(letter.sent_ms or int(time.time() * 1000))
        if int(expires_at) * 1000 <= until:
            letter.kind = LAPSING
            letter.reason = (
                f"stored until {_when(int(expires_at) * 1000)}, but a copy sent back can still arrive until "
                f"{_when(until)} and be written again as a new order: discard it (its order is stored)"
            )


def counts(letters: Iterable[DeadLetter]) -> dict[str, int]:
    found = Counter(letter.kind for letter in letters)
    return {kind: found.get(kind, 0) for kind in CLASSES}


# --- the operations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Queues:
    """Where the DLQ's messages come from and go back to, and what judges them."""

    dlq_url: str
    jobs_url: str
    orders_table: str
    audit_log_group: str
    judge: Judge = field(default_factory=judge_of)  # the lab's worker's by default


def _lookup(clients: Any, queues: Queues) -> Callable[[Iterable[str]], dict[str, dict[str, Any]]]:
    key = queues.judge.key_attribute
    return lambda ids: stored_orders(clients.client("dynamodb"), queues.orders_table, ids, key_attribute=key)


def _lifetime(clients: Any, queues: Queues) -> Callable[[], Lifetime]:
    """The queues' retentions, read once, when a stored order with an expiry is first met."""
    found: list[Lifetime] = []

    def read() -> Lifetime:
        if not found:
            found.append(lifetime_of(clients.client("sqs"), queues))
        return found[0]

    return read


def listing(
    clients: Any,
    queues: Queues,
    limit: int = LIST_LIMIT,
    hold_seconds: int = HOLD_SECONDS,
    reader: Callable[..., DeadLetterReader] = DeadLetterReader,
) -> dict[str, Any]:
    """At most `limit` DLQ messages, classified: {"messages", "counts", "complete", "reading"}.
    `counts` are exact for the whole queue when `complete`; otherwise they are those of the
    messages read, and `reading` has SQS's approximate count of the rest."""
    if limit < 1:
        raise DlqError(f"--limit must be at least 1, got {limit}")
    letters: list[DeadLetter] = []
    with reader(clients.client("sqs"), queues.dlq_url, hold_seconds) as source:
        for page in source.pages():
            letters += page
            if len(letters) >= limit:
                break
        classify(letters, _lookup(clients, queues), _lifetime(clients, queues), queues.judge)
        visible, elsewhere = source.visible_and_elsewhere()
        complete = (source.reached_end or visible == 0) and elsewhere == 0 and not source.stopped
    now_ms = int(time.time() * 1000)
    letters.sort(key=lambda letter: (letter.sent_ms or 0, letter.message_id))
    return {
        "messages": [letter.as_json(now_ms) for letter in letters],
        "counts": counts(letters),
        "complete": complete,
        "reading": {
            "read": len(letters),
            "visible_after": visible,
            "in_flight_elsewhere": elsewhere,
            "stopped": source.stopped,
        },
    }


def _send_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """Received message attributes carry empty list fields SendMessage rejects; keep the value."""
    kept = {}
    for name, value in attributes.items():
        key = "BinaryValue" if "BinaryValue" in value else "StringValue"
        kept[name] = {"DataType": value["DataType"], key: value.get(key, "")}
    return kept


def message_bytes(letter: DeadLetter) -> int:
    """A message's size as SQS counts it: the body and each attribute's name, type and value."""
    size = len(letter.body.encode())
    for name, value in letter.message_attributes.items():
        data = (
            value.get("BinaryValue", b"") if "BinaryValue" in value else value.get("StringValue", "").encode()
        )
        size += len(name.encode()) + len(value["DataType"].encode()) + len(data)
    return size


def send_batches(letters: list[DeadLetter], limit_bytes: int = BATCH_BYTES) -> Iterator[list[DeadLetter]]:
    """Batches of at most ten messages and `limit_bytes` together, in order."""
    batch: list[DeadLetter] = []
    size = 0
    for letter in letters:
        length = message_bytes(letter)
        if batch and (len(batch) == 10 or size + length > limit_bytes):
            yield batch
            batch, size = [], 0
        batch.append(letter)
        size += length
    if batch:
        yield batch


def parse_classes(text: str | None) -> tuple[str, ...]:
    """`pending,stored` (the default) or one of them; lapsing, conflicts and malformed bodies never."""
    chosen = tuple(part.strip() for part in (text or ",".join(SAFE_CLASSES)).split(",") if part.strip())
    wrong = [kind for kind in chosen if kind not in SAFE_CLASSES]
    if wrong or not chosen:
        raise DlqError(
            f"cannot redrive class {', '.join(wrong) or '(none)'}: only {' and '.join(SAFE_CLASSES)} "
            "messages are sent back; decide on the others with `ops dlq discard`"
        )
    return chosen


@dataclass
class RedriveReport:
    """Counts of everything; the first LISTED moves and failures, and how many more there were."""

    classes: tuple[str, ...]
    dry_run: bool
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {kind: {"found": 0, "moved": 0, "failed": 0} for kind in CLASSES}
    )
    moved: list[dict[str, str]] = field(default_factory=list)
    moved_not_listed: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)
    failures_not_listed: int = 0
    started: float = field(default_factory=time.monotonic)

    def progress(self, held: int) -> dict[str, Any]:
        seen = sum(c["found"] for c in self.counts.values())
        moved = sum(c["moved"] for c in self.counts.values())
        elapsed = max(time.monotonic() - self.started, 1e-6)
        return {"seen": seen, "moved": moved, "held": held, "per_second": round(seen / elapsed, 1)}

    def failed(self, letter: DeadLetter, reason: str) -> None:
        self.counts[letter.kind]["failed"] += 1
        if len(self.failures) < LISTED:
            self.failures.append({"message_id": letter.message_id, "reason": reason})
        else:
            self.failures_not_listed += 1

    def moved_one(self, letter: DeadLetter, new_message_id: str) -> None:
        self.counts[letter.kind]["moved"] += 1
        if len(self.moved) < LISTED:
            self.moved.append(
                {"message_id": letter.message_id, "new_message_id": new_message_id, "class": letter.kind}
            )
        else:
            self.moved_not_listed += 1


def _move(
    sqs: Any, queues: Queues, reader: DeadLetterReader, letters: list[DeadLetter], report: RedriveReport
) -> None:
    """Send these to the jobs queue, then delete them from the DLQ; a failed send is released.
    A delete counts as a move only when it was asked for within the message's hold (the handle
    still the latest)."""
    for batch in send_batches(letters):
        entries = []
        for i, letter in enumerate(batch):
            entry: dict[str, Any] = {"Id": str(i), "MessageBody": letter.body}
            if letter.message_attributes:
                entry["MessageAttributes"] = _send_attributes(letter.message_attributes)
            if queues.jobs_url.endswith(".fifo"):
                # Its own group again, in the batch's order (SQS keeps a FIFO batch's order).
                # The dead letter's id as deduplication id: a redrive run again after a send
                # whose delete failed sends no second copy within SQS's five minutes, and it is
                # never the producer's id, which SQS would still drop within its window.
                entry["MessageGroupId"] = letter.group_id or letter.message_id
                entry["MessageDeduplicationId"] = letter.message_id
            entries.append(entry)
        sent = sqs.send_message_batch(QueueUrl=queues.jobs_url, Entries=entries)
        unsent = [batch[int(failure["Id"])] for failure in sent.get("Failed", [])]
        for failure, letter in zip(sent.get("Failed", []), unsent):
            report.failed(letter, f"send: {failure.get('Message', failure['Code'])}")
        reader.release(unsent)
        copies = {batch[int(ok["Id"])].message_id: ok["MessageId"] for ok in sent.get("Successful", [])}
        copied = [letter for letter in batch if letter.message_id in copies]
        if not copied:
            continue
        asked = reader.clock()
        holds = [reader.held[letter.message_id] for letter in copied]
        removed = sqs.delete_message_batch(
            QueueUrl=queues.dlq_url,
            Entries=[{"Id": str(i), "ReceiptHandle": hold.receipt_handle} for i, hold in enumerate(holds)],
        )
        for ok in removed.get("Successful", []):
            letter, hold = copied[int(ok["Id"])], holds[int(ok["Id"])]
            reader.forget([letter])
            if hold.lapsed or asked >= hold.until:
                report.failed(
                    letter,
                    "sent, and deleted with a receipt handle whose hold had ended, so the delete is not "
                    "confirmed: it may still be in the DLQ (a second copy would be a duplicate)",
                )
            else:
                report.moved_one(letter, copies[letter.message_id])
        for failure in removed.get("Failed", []):
            report.failed(
                copied[int(failure["Id"])],
                "sent, but not deleted from the DLQ (the copy will be a "
                f"duplicate): {failure.get('Message', failure['Code'])}",
            )


def in_group_order(page: list[DeadLetter], classes: tuple[str, ...]) -> list[DeadLetter]:
    """The letters of `classes` to send back, in the page's order; from a FIFO queue, none after
    a letter of its group that stays (a later order must not overtake an earlier one). A FIFO
    queue holds back the rest of such a group while the letter is held, so later pages keep it too."""
    stays: set[str] = set()
    chosen = []
    for letter in page:
        group = letter.group_id
        if group is not None and group in stays:
            continue
        if letter.kind in classes:
            chosen.append(letter)
        elif group is not None:
            stays.add(group)
    return chosen


def redrive(
    clients: Any,
    queues: Queues,
    classes: Iterable[str] = SAFE_CLASSES,
    dry_run: bool = False,
    hold_seconds: int = HOLD_SECONDS,
    max_held: int = MAX_HELD,
    progress: Callable[[dict[str, Any]], None] | None = None,
    reader: Callable[..., DeadLetterReader] = DeadLetterReader,
) -> dict[str, Any]:
    """Send the messages of `classes` back to the jobs queue, a page at a time (send, then
    delete), stepping past the rest; a dry run moves nothing and holds what it read. Returns per
    class found, moved and failed; the first LISTED moves (old and new message id) and failures,
    with how many more there were (`moved_not_listed`, `failures_not_listed`); whether the whole
    queue was seen, how many messages another reader held, how many holds were extended and how
    many lapsed, and how many messages came round again (held, not counted twice)."""
    report = RedriveReport(parse_classes(",".join(classes)), dry_run)
    sqs = clients.client("sqs")
    stopped = ""
    lifetime = _lifetime(clients, queues)
    with reader(sqs, queues.dlq_url, hold_seconds) as source:
        for page in source.pages():
            classify(page, _lookup(clients, queues), lifetime, queues.judge)
            for letter in page:
                report.counts[letter.kind]["found"] += 1
            chosen = in_group_order(page, report.classes)
            if chosen and not dry_run:
                _move(sqs, queues, source, chosen, report)
            del page, chosen  # bodies go with their page: only ids and handles stay held
            if progress is not None:
                progress(report.progress(len(source.held)))
            if len(source.held) >= max_held:
                stopped = (
                    f"stopped after stepping past {len(source.held)} messages it may not move "
                    f"(at most {max_held} are held at once): discard or decide on them, then run again"
                )
                break
        elsewhere = source.in_flight_elsewhere()
        stopped = stopped or source.stopped
        complete = source.reached_end and not stopped and elsewhere == 0
        if not stopped and not source.reached_end and queues.dlq_url.endswith(".fifo") and source.held:
            # SQS holds back a FIFO group behind its message in flight: here, one left in the DLQ.
            stopped = (
                f"{source.unread_visible} message(s) wait in their FIFO group behind a message this "
                "redrive leaves in the DLQ (a group's later messages never pass it): decide on that "
                "one (`ops dlq discard`), then run again"
            )
        if not stopped and not source.reached_end:
            stopped = (
                f"SQS returned no messages although it counts {source.unread_visible} visible (its "
                "in-flight cap, or its counters lagging): run again"
            )
        lapsed, repeats, extended = source.lapsed, source.repeats, source.extended
    return {
        "classes": list(report.classes),
        "dry_run": dry_run,
        "counts": report.counts,
        "moved": report.moved,
        "moved_not_listed": report.moved_not_listed,
        "failures": report.failures,
        "failures_not_listed": report.failures_not_listed,
        "complete": complete,
        "in_flight_elsewhere": elsewhere,
        "extended_holds": extended,
        "lapsed_holds": lapsed,
        "seen_again": repeats,
        "stopped": stopped,
    }


def _not_found(message_id: str, reader: DeadLetterReader, read: int, cap: int | None) -> str:
    """Why the target was not found, claiming "not in the queue" only when the end was reached
    and nobody else held a message."""
    if cap is not None:
        return (
            f"message {message_id} is not among the first {read} messages read (a discard holds at most "
            f"{cap} while it looks); discard or redrive others first, or run again later"
        )
    if reader.stopped:
        return f"message {message_id} is not among the {read} messages read: {reader.stopped}"
    if not reader.reached_end:
        return (
            f"message {message_id} is not among the {read} messages read, and the end of the queue was not "
            f"reached: SQS returned no messages although it counts {reader.unread_visible} visible (its "
            "in-flight cap, or its counters lagging); run again"
        )
    elsewhere = reader.in_flight_elsewhere()
    if elsewhere:
        return (
            f"message {message_id} is not among the {read} messages read; {elsewhere} message(s) are held "
            "by another reader, run again later"
        )
    return f"message {message_id} is not in the dead-letter queue ({read} messages read, the end reached)"


def discard(
    clients: Any,
    queues: Queues,
    message_id: str,
    reason: str,
    hold_seconds: int = HOLD_SECONDS,
    max_held: int = DISCARD_MAX_HELD,
) -> dict[str, Any]:
    """Remove one conflict, malformed or lapsing message after a human decided. Audited as two facts, one
    `audit_id`: `DISCARD_REQUESTED` (who, when, why, the body and its class) before the delete;
    then `DISCARD_CONFIRMED` once the delete is confirmed (module docstring: SQS accepted it
    within the hold its latest receipt handle carries, just extended), `DISCARD_FAILED` when the
    extension or the delete failed, or `DISCARD_UNCONFIRMED` when the delete answered after the
    hold could have ended. Anything but confirmed is raised; a process that dies in between
    leaves "requested, not confirmed". Reads past at most `max_held` messages to find it."""

    from ops.aws import error_line

    reason = _checked_reason(reason)
    sqs = clients.client("sqs")
    with DeadLetterReader(sqs, queues.dlq_url, hold_seconds) as reader:
        letter, read, cap = None, 0, None
        for page in reader.pages():
            read += len(page)
            letter = next((found for found in page if found.message_id == message_id), None)
            if letter is not None:
                break
            if len(reader.held) >= max_held:
                cap = max_held
                break
        if letter is None:
            raise DlqError(_not_found(message_id, reader, read, cap))
        reader.release([held for held in list(reader.held) if held != message_id])
        classify([letter], _lookup(clients, queues), _lifetime(clients, queues), queues.judge)
        if letter.kind in SAFE_CLASSES:
            raise DlqError(
                f"message {message_id} is {letter.kind} ({letter.reason}): redrive it with "
                "`ops dlq redrive`; only conflict, malformed and lapsing messages are discarded"
            )
        record = _discard_request(clients, letter, reason)
        logs = clients.client("logs")
        write_audit(logs, queues.audit_log_group, record, tag=AUDIT_REQUESTED_TAG)

        def outcome(tag: str, **facts: Any) -> None:
            write_audit(
                logs,
                queues.audit_log_group,
                {"audit_id": record["audit_id"], "message_id": message_id, "time": _now(), **facts},
                tag=tag,
            )

        try:
            hold = reader.extend_one(message_id)
            sqs.delete_message(QueueUrl=queues.dlq_url, ReceiptHandle=hold.receipt_handle)
        except Exception as error:  # noqa: BLE001 - any failed delete is recorded and reported
            outcome(AUDIT_FAILED_TAG, error=error_line(error))
            raise DlqError(
                f"message {message_id} was not discarded: the delete failed ({error_line(error)}); "
                "the audit records the attempt as failed"
            ) from None
        answered = reader.clock()
        reader.forget([message_id])
        if answered >= hold.until:
            why = (
                f"the delete answered {answered - hold.until + hold_seconds:.1f} s after the hold was "
                f"extended, past the {hold_seconds} s hold: another reader may have received it first"
            )
            outcome(AUDIT_UNCONFIRMED_TAG, why=why)
            raise DlqError(
                f"message {message_id}: the delete is not confirmed ({why}); the audit shows it as "
                f"{NOT_CONFIRMED}, see `ops dlq list`"
            )
        try:
            outcome(AUDIT_CONFIRMED_TAG)
        except Exception as error:  # noqa: BLE001 - the audit must not say more than it knows
            raise DlqError(
                f"message {message_id} was deleted, but the confirmation could not be recorded "
                f"({error_line(error)}): the audit shows it as {NOT_CONFIRMED}"
            ) from None
    return {**record, "outcome": CONFIRMED}


def _checked_reason(reason: str | None) -> str:
    """The operator's reason on one line, refused when empty or too long."""
    reason = " ".join((reason or "").split())
    if not reason:
        raise DlqError("a discard needs --reason: why this message may go")
    if len(reason) > MAX_REASON:
        raise DlqError(f"the reason is {len(reason)} characters; keep it under {MAX_REASON}")
    return reason


def _discard_request(clients: Any, letter: DeadLetter, reason: str) -> dict[str, Any]:
    """The DISCARD_REQUESTED record: who, when, why, and the letter as classified."""
    import uuid

    return {
        "audit_id": str(uuid.uuid4()),
        "time": _now(),
        "who": clients.client("sts").get_caller_identity()["Arn"],
        "reason": reason,
        "message_id": letter.message_id,
        "class": letter.kind,
        "why_not_redriven": letter.reason,
        "body": letter.body,
        "order_id": letter.order_id,
        "requested": letter.requested,
        "stored": letter.stored,
        "message_attributes": {
            name: _attribute_json(value) for name, value in letter.message_attributes.items()
        },
        "receive_count": letter.receive_count,
        "sent_ms": letter.sent_ms,
    }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_audit(logs: Any, log_group: str, record: dict[str, Any], tag: str = AUDIT_REQUESTED_TAG) -> None:
    try:
        logs.create_log_stream(logGroupName=log_group, logStreamName=AUDIT_STREAM)
    except logs.exceptions.ResourceAlreadyExistsException:
        pass
    logs.put_log_events(
        logGroupName=log_group,
        logStreamName=AUDIT_STREAM,
        logEvents=[
            {
                "timestamp": int(time.time() * 1000),
                "message": f"{tag} {json.dumps(record, sort_keys=True, default=str)}",
            }
        ],
    )


def audit(clients: Any, queues: Queues) -> list[dict[str, Any]]:
    """Every discard recorded in the audit log group, oldest first, each with its `outcome`:
    `discarded` only when a `DISCARD_CONFIRMED` record matches its `audit_id`; `delete failed:
    ...` when a `DISCARD_FAILED` one does; otherwise `requested, not confirmed` (with the reason
    when a `DISCARD_UNCONFIRMED` record gives one). Records of earlier versions (`DISCARD`,
    written before a delete they never confirmed) read as requested, not confirmed, unless a
    `DISCARD_FAILED` record says the delete failed."""
    records, outcomes = [], {}
    for event in log_events(clients.client("logs"), queues.audit_log_group):
        tag, _, rest = event["message"].partition(" ")
        if tag not in (
            AUDIT_REQUESTED_TAG,
            AUDIT_LEGACY_TAG,
            AUDIT_CONFIRMED_TAG,
            AUDIT_FAILED_TAG,
            AUDIT_UNCONFIRMED_TAG,
        ):
            continue
        try:
            record = json.loads(rest)
        except ValueError:
            continue
        if tag in (AUDIT_REQUESTED_TAG, AUDIT_LEGACY_TAG):
            records.append((tag, record))
            continue
        audit_id = record.get("audit_id")
        if tag == AUDIT_CONFIRMED_TAG:
            outcomes[audit_id] = CONFIRMED
        elif tag == AUDIT_FAILED_TAG:
            outcomes[audit_id] = f"delete failed: {record.get('error', '')}"
        else:
            outcomes.setdefault(audit_id, f"{NOT_CONFIRMED}: {record.get('why', '')}")
    found = []
    for tag, record in records:
        known = outcomes.get(record.get("audit_id")) if record.get("audit_id") else None
        if tag == AUDIT_LEGACY_TAG and known == CONFIRMED:
            known = None  # an older version's record cannot have been confirmed
        if known is None and tag == AUDIT_LEGACY_TAG:
            known = f"{NOT_CONFIRMED} (recorded by an earlier version, which did not confirm deletes)"
        record["outcome"] = known or NOT_CONFIRMED
        found.append(record)
    return found
