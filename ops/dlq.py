"""The dead-letter queue, understood: every message classified against the orders table with the
worker's own parser and duplicate rule (stacks/lambda_code.py), and what an operator may do with it.

- `pending`: a valid job whose id is not stored. It failed for a passing reason (throttling, an
  outage, a timeout); sent back, the worker writes it.
- `stored`: a valid job whose order is already stored. Sent back, the worker acknowledges it as
  a duplicate.
- `conflict`: a valid job whose id is stored with other details. Never sent back automatically.
- `malformed`: the worker's parser rejects it. Never sent back.

The queue is read a page (ten messages) at a time, and nothing holds the whole of it:

- A redrive moves each page's safe messages (send, then delete) before it reads on, and keeps
  only the unsafe ones it steps past invisible, extending their visibility while it works
  (`DeadLetterReader`). A failure between send and delete leaves a copy in both queues, which
  the worker turns into a duplicate, never a lost order.
- A listing reads at most `limit` messages, holds them while it classifies them, then releases
  them; its counts are exact when it reached the end of the queue (`complete`), and otherwise
  those of the messages it read, beside the queue's own approximate totals.
- The end of the queue is an empty long poll while SQS counts no visible message, not one empty
  receive: SQS's in-flight cap answers a long poll with nothing (SQS quotas, "Messages per queue
  (in flight)"). Messages another reader holds are invisible to this one; each report says how
  many there were (`in_flight_elsewhere`) instead of calling the queue empty.

Each read adds one to a message's receive count, which moves nothing: the DLQ has no redrive
policy of its own. A discard writes one audit record (who, when, why, the body) to the stack's
audit log group before it deletes the message; a delete that fails is reported and recorded
beside it, so the audit never shows a discard that did not happen.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Self

from ops.observe import log_events
from stacks.config import DLQ_AUDIT_STREAM
from stacks.lambda_code import load_worker

CLASSES = ("pending", "stored", "conflict", "malformed")
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
BATCH_BYTES = 1_048_576  # SendMessageBatch: all the batch's messages together (SQS API reference)
AUDIT_TAG = "DISCARD"
AUDIT_FAILED_TAG = "DISCARD_FAILED"
AUDIT_STREAM = DLQ_AUDIT_STREAM
MAX_REASON = 1000


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


def _batches(items: list, size: int = 10) -> Iterator[list]:
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
    )


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
    ) -> None:
        self.sqs, self.queue_url, self.hold_seconds, self.clock = sqs, queue_url, hold_seconds, clock
        self.held: dict[str, tuple[DeadLetter, float]] = {}  # message id -> (letter, invisible until)
        self.seen: set[str] = set()
        self.reached_end = False
        self.unread_visible = 0  # what SQS still counted as visible when reading stopped

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release(letter for letter, _ in list(self.held.values()))

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
        """Pages of messages not seen before, until the end of the queue. A page's messages are
        held; the caller forgets, releases or keeps holding each."""
        empty = 0
        while True:
            self._extend_due()
            received = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=self.hold_seconds,
                WaitTimeSeconds=END_OF_QUEUE_WAIT_SECONDS,
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            until = self.clock() + self.hold_seconds
            page = []
            for message in received:
                letter = _letter(message)
                if letter.message_id in self.held:  # its hold ran out and it came round again
                    self.held[letter.message_id] = (letter, until)
                elif letter.message_id not in self.seen:
                    self.seen.add(letter.message_id)
                    self.held[letter.message_id] = (letter, until)
                    page.append(letter)
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
        """Extend every hold that would end within half a hold from now."""
        now = self.clock()
        due = [letter for letter, until in self.held.values() if until - now < self.hold_seconds / 2]
        for batch in _batches(due):
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {
                        "Id": str(i),
                        "ReceiptHandle": letter.receipt_handle,
                        "VisibilityTimeout": self.hold_seconds,
                    }
                    for i, letter in enumerate(batch)
                ],
            )
            for letter in batch:
                self.held[letter.message_id] = (letter, now + self.hold_seconds)

    def forget(self, letters: Iterable[DeadLetter]) -> None:
        """These were deleted."""
        for letter in letters:
            self.held.pop(letter.message_id, None)

    def release(self, letters: Iterable[DeadLetter]) -> None:
        """Make these visible again."""
        letters = [
            self.held.pop(letter.message_id)[0] for letter in letters if letter.message_id in self.held
        ]
        for batch in _batches(letters):
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": letter.receipt_handle, "VisibilityTimeout": 0}
                    for i, letter in enumerate(batch)
                ],
            )

    def in_flight_elsewhere(self) -> int:
        """Messages invisible to this reader that it does not hold: another reader's."""
        return max(0, self.counters()[1] - len(self.held))


# --- classification -------------------------------------------------------------------------


def stored_orders(dynamodb: Any, table: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The stored items of these order ids (strongly consistent), by id."""
    worker = load_worker()
    found: dict[str, dict[str, Any]] = {}
    for batch in _batches(sorted(set(ids)), 100):
        request = {table: {"Keys": [{"id": {"S": order_id}} for order_id in batch], "ConsistentRead": True}}
        while request:
            response = dynamodb.batch_get_item(RequestItems=request)
            for attributes in response.get("Responses", {}).get(table, []):
                item = worker.item_from_attributes(attributes)
                found[str(item["id"])] = item
            request = response.get("UnprocessedKeys") or {}
    return found


def classify(letters: list[DeadLetter], lookup: Callable[[Iterable[str]], dict[str, dict[str, Any]]]) -> None:
    """Set each letter's class and reason, as the worker would decide it now."""
    worker = load_worker()
    jobs = {}
    for letter in letters:
        try:
            jobs[letter.message_id] = worker.parse_job(letter.body)
        except worker.JobError as error:
            letter.kind, letter.reason = "malformed", str(error)
    stored = lookup(job.id for job in jobs.values())
    for letter in letters:
        job = jobs.get(letter.message_id)
        if job is None:
            continue
        letter.order_id, letter.requested, letter.stored = job.id, job.item(), stored.get(job.id)
        try:
            outcome = worker.decide(job, letter.stored)
        except worker.ConflictingOrder as conflict:
            letter.kind, letter.reason = "conflict", str(conflict)
            continue
        if outcome.decision == "written":
            letter.kind, letter.reason = "pending", "not stored yet: a redrive writes it"
        else:
            letter.kind, letter.reason = "stored", "already stored: a redrive is acknowledged as a duplicate"


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


def _lookup(clients: Any, queues: Queues) -> Callable[[Iterable[str]], dict[str, dict[str, Any]]]:
    return lambda ids: stored_orders(clients.client("dynamodb"), queues.orders_table, ids)


def listing(
    clients: Any, queues: Queues, limit: int = LIST_LIMIT, hold_seconds: int = HOLD_SECONDS
) -> dict[str, Any]:
    """At most `limit` DLQ messages, classified: {"messages", "counts", "complete", "reading"}.
    `counts` are exact for the whole queue when `complete`; otherwise they are those of the
    messages read, and `reading` has SQS's approximate count of the rest."""
    if limit < 1:
        raise DlqError(f"--limit must be at least 1, got {limit}")
    letters: list[DeadLetter] = []
    with DeadLetterReader(clients.client("sqs"), queues.dlq_url, hold_seconds) as reader:
        for page in reader.pages():
            letters += page
            if len(letters) >= limit:
                break
        classify(letters, _lookup(clients, queues))
        visible, not_visible = reader.counters()
        elsewhere = max(0, not_visible - len(reader.held))
        complete = (reader.reached_end or visible == 0) and elsewhere == 0
    now_ms = int(time.time() * 1000)
    letters.sort(key=lambda letter: (letter.sent_ms or 0, letter.message_id))
    return {
        "messages": [letter.as_json(now_ms) for letter in letters],
        "counts": counts(letters),
        "complete": complete,
        "reading": {"read": len(letters), "visible_after": visible, "in_flight_elsewhere": elsewhere},
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
    """`pending,stored` (the default) or one of them; conflicts and malformed bodies never."""
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
    classes: tuple[str, ...]
    dry_run: bool
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {kind: {"found": 0, "moved": 0, "failed": 0} for kind in CLASSES}
    )
    moved: list[dict[str, str]] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def progress(self, held: int) -> dict[str, Any]:
        seen = sum(c["found"] for c in self.counts.values())
        moved = sum(c["moved"] for c in self.counts.values())
        elapsed = max(time.monotonic() - self.started, 1e-6)
        return {"seen": seen, "moved": moved, "held": held, "per_second": round(seen / elapsed, 1)}

    def failed(self, letter: DeadLetter, reason: str) -> None:
        self.counts[letter.kind]["failed"] += 1
        self.failures.append({"message_id": letter.message_id, "reason": reason})


def _move(
    sqs: Any, queues: Queues, reader: DeadLetterReader, letters: list[DeadLetter], report: RedriveReport
) -> None:
    """Send these to the jobs queue, then delete them from the DLQ; a failed send is released."""
    for batch in send_batches(letters):
        entries = []
        for i, letter in enumerate(batch):
            entry: dict[str, Any] = {"Id": str(i), "MessageBody": letter.body}
            if letter.message_attributes:
                entry["MessageAttributes"] = _send_attributes(letter.message_attributes)
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
        removed = sqs.delete_message_batch(
            QueueUrl=queues.dlq_url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": letter.receipt_handle} for i, letter in enumerate(copied)
            ],
        )
        gone = [copied[int(ok["Id"])] for ok in removed.get("Successful", [])]
        reader.forget(gone)
        for letter in gone:
            report.counts[letter.kind]["moved"] += 1
            report.moved.append(
                {
                    "message_id": letter.message_id,
                    "new_message_id": copies[letter.message_id],
                    "class": letter.kind,
                }
            )
        for failure in removed.get("Failed", []):
            report.failed(
                copied[int(failure["Id"])],
                "sent, but not deleted from the DLQ (the copy will be a "
                f"duplicate): {failure.get('Message', failure['Code'])}",
            )


def redrive(
    clients: Any,
    queues: Queues,
    classes: Iterable[str] = SAFE_CLASSES,
    dry_run: bool = False,
    hold_seconds: int = HOLD_SECONDS,
    max_held: int = MAX_HELD,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Send the messages of `classes` back to the jobs queue, a page at a time (send, then
    delete), stepping past the rest; a dry run moves nothing and holds what it read. Returns per
    class found, moved and failed; each move's old and new message id; the failures; whether
    the whole queue was seen, and how many messages another reader held."""
    report = RedriveReport(parse_classes(",".join(classes)), dry_run)
    sqs = clients.client("sqs")
    stopped = ""
    with DeadLetterReader(sqs, queues.dlq_url, hold_seconds) as reader:
        for page in reader.pages():
            classify(page, _lookup(clients, queues))
            for letter in page:
                report.counts[letter.kind]["found"] += 1
            chosen = [letter for letter in page if letter.kind in report.classes]
            if chosen and not dry_run:
                _move(sqs, queues, reader, chosen, report)
            if progress is not None:
                progress(report.progress(len(reader.held)))
            if len(reader.held) >= max_held:
                stopped = (
                    f"stopped after stepping past {len(reader.held)} messages it may not move "
                    f"(at most {max_held} are held at once): discard or decide on them, then run again"
                )
                break
        elsewhere = reader.in_flight_elsewhere()
        complete = reader.reached_end and not stopped and elsewhere == 0
        if not stopped and not reader.reached_end:
            stopped = (
                f"SQS returned no messages although it counts {reader.unread_visible} visible (its "
                "in-flight cap, or its counters lagging): run again"
            )
    return {
        "classes": list(report.classes),
        "dry_run": dry_run,
        "counts": report.counts,
        "moved": report.moved,
        "failures": report.failures,
        "complete": complete,
        "in_flight_elsewhere": elsewhere,
        "stopped": stopped,
    }


def discard(
    clients: Any, queues: Queues, message_id: str, reason: str, hold_seconds: int = HOLD_SECONDS
) -> dict[str, Any]:
    """Remove one conflict or malformed message after a human decided, with one audit record
    written first (who, when, why, the body and its class). A delete that fails is recorded
    beside it (`DISCARD_FAILED`, same `audit_id`) and raised."""
    import uuid

    reason = " ".join((reason or "").split())
    if not reason:
        raise DlqError("a discard needs --reason: why this message may go")
    if len(reason) > MAX_REASON:
        raise DlqError(f"the reason is {len(reason)} characters; keep it under {MAX_REASON}")
    sqs = clients.client("sqs")
    with DeadLetterReader(sqs, queues.dlq_url, hold_seconds) as reader:
        letter = next(
            (letter for page in reader.pages() for letter in page if letter.message_id == message_id), None
        )
        if letter is None:
            elsewhere = reader.in_flight_elsewhere()
            held = (
                f"; {elsewhere} message(s) are held by another reader, run again later" if elsewhere else ""
            )
            raise DlqError(f"message {message_id} is not in the dead-letter queue{held}")
        classify([letter], _lookup(clients, queues))
        if letter.kind in SAFE_CLASSES:
            raise DlqError(
                f"message {message_id} is {letter.kind} ({letter.reason}): redrive it with "
                "`ops dlq redrive`; only conflict and malformed messages are discarded"
            )
        record = {
            "audit_id": str(uuid.uuid4()),
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
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
        logs = clients.client("logs")
        write_audit(logs, queues.audit_log_group, record)
        try:
            sqs.delete_message(QueueUrl=queues.dlq_url, ReceiptHandle=letter.receipt_handle)
        except Exception as error:  # noqa: BLE001 - any failed delete is recorded and reported
            from ops.aws import error_line

            write_audit(
                logs,
                queues.audit_log_group,
                {
                    "audit_id": record["audit_id"],
                    "message_id": message_id,
                    "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "error": error_line(error),
                },
                tag=AUDIT_FAILED_TAG,
            )
            raise DlqError(
                f"message {message_id} was not discarded: the delete failed ({error_line(error)}); "
                "the audit records the attempt as failed"
            ) from None
        reader.forget([letter])
    return {**record, "outcome": "discarded"}


def write_audit(logs: Any, log_group: str, record: dict[str, Any], tag: str = AUDIT_TAG) -> None:
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
    `discarded`, or `delete failed: ...` when a failure record matches it."""
    records, failures = [], {}
    for event in log_events(clients.client("logs"), queues.audit_log_group):
        tag, _, rest = event["message"].partition(" ")
        if tag not in (AUDIT_TAG, AUDIT_FAILED_TAG):
            continue
        try:
            record = json.loads(rest)
        except ValueError:
            continue
        if tag == AUDIT_FAILED_TAG:
            failures[record.get("audit_id")] = record.get("error", "")
        else:
            records.append(record)
    for record in records:
        failed = failures.get(record.get("audit_id")) if record.get("audit_id") else None
        record["outcome"] = f"delete failed: {failed}" if failed is not None else "discarded"
    return records
