"""The dead-letter queue, understood: every message classified against the orders table with the
worker's own parser and duplicate rule (stacks/lambda_code.py), and what an operator may do with it.

- `pending`: a valid job whose id is not stored. It failed for a passing reason (throttling, an
  outage, a timeout); sent back, the worker writes it.
- `stored`: a valid job whose order is already stored. Sent back, the worker acknowledges it as
  a duplicate.
- `conflict`: a valid job whose id is stored with other details. Never sent back automatically.
- `malformed`: the worker's parser rejects it. Never sent back.

Listing reads every message, however many: each is received and kept invisible until the listing
ends (so the next receive returns new ones), then released in batches. Each listing adds one to
the receive count of every message, which moves nothing: the DLQ has no redrive policy of its own.

A redrive sends a message's body and message attributes to the jobs queue, then deletes it from
the DLQ: a failure between the two leaves a copy in both queues, which the worker turns into a
duplicate, never a lost order. A discard writes an audit record (who, when, why, the body) to the
stack's audit log group before it deletes the message.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Self

from ops.observe import log_events
from stacks.lambda_code import load_worker

CLASSES = ("pending", "stored", "conflict", "malformed")
SAFE_CLASSES = ("pending", "stored")
HOLD_SECONDS = 300  # a listing keeps the messages it has seen invisible this long at most
# A long poll asks every SQS server, where a short poll samples a few: only an empty long poll
# means the queue has no visible message left.
END_OF_QUEUE_WAIT_SECONDS = 1
AUDIT_TAG = "DISCARD"
AUDIT_STREAM = "discards"
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


# --- holding every message ------------------------------------------------------------------


class HeldDeadLetters:
    """Every message in the DLQ, received and kept invisible while the caller works on them;
    whatever was not deleted is released (made visible again) on exit, ten at a time."""

    def __init__(self, sqs: Any, queue_url: str, hold_seconds: int = HOLD_SECONDS) -> None:
        self.sqs, self.queue_url, self.hold_seconds = sqs, queue_url, hold_seconds
        self.letters: list[DeadLetter] = []
        self._deleted: set[str] = set()

    def __enter__(self) -> Self:
        seen: dict[str, DeadLetter] = {}
        while True:
            received = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=self.hold_seconds,
                WaitTimeSeconds=END_OF_QUEUE_WAIT_SECONDS,
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not received:
                break
            for message in received:
                attributes = message.get("Attributes", {})
                seen[message["MessageId"]] = DeadLetter(
                    message_id=message["MessageId"],
                    body=message.get("Body", ""),
                    receive_count=int(attributes.get("ApproximateReceiveCount", 0)),
                    sent_ms=int(attributes["SentTimestamp"]) if "SentTimestamp" in attributes else None,
                    message_attributes=message.get("MessageAttributes", {}),
                    receipt_handle=message["ReceiptHandle"],
                )
        self.letters = sorted(seen.values(), key=lambda letter: (letter.sent_ms or 0, letter.message_id))
        return self

    def deleted(self, letters: Iterable[DeadLetter]) -> None:
        self._deleted.update(letter.message_id for letter in letters)

    def __exit__(self, *exc: object) -> None:
        kept = [letter for letter in self.letters if letter.message_id not in self._deleted]
        for batch in _batches(kept):
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": letter.receipt_handle, "VisibilityTimeout": 0}
                    for i, letter in enumerate(batch)
                ],
            )


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


def listing(clients: Any, queues: Queues) -> dict[str, Any]:
    """Every DLQ message, classified: {"messages": [...], "counts": {class: n}}."""
    with HeldDeadLetters(clients.client("sqs"), queues.dlq_url) as held:
        classify(
            held.letters, lambda ids: stored_orders(clients.client("dynamodb"), queues.orders_table, ids)
        )
    now_ms = int(time.time() * 1000)
    return {"messages": [letter.as_json(now_ms) for letter in held.letters], "counts": counts(held.letters)}


def _send_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """Received message attributes carry empty list fields SendMessage rejects; keep the value."""
    kept = {}
    for name, value in attributes.items():
        key = "BinaryValue" if "BinaryValue" in value else "StringValue"
        kept[name] = {"DataType": value["DataType"], key: value.get(key, "")}
    return kept


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


def redrive(
    clients: Any, queues: Queues, classes: Iterable[str] = SAFE_CLASSES, dry_run: bool = False
) -> dict[str, Any]:
    """Send the messages of `classes` back to the jobs queue (send, then delete); leave the rest.
    Returns per class: found, moved, failed, and the failures with their reasons."""
    classes = parse_classes(",".join(classes))
    sqs = clients.client("sqs")
    report = {kind: {"found": 0, "moved": 0, "failed": 0} for kind in CLASSES}
    failures: list[dict[str, str]] = []
    with HeldDeadLetters(sqs, queues.dlq_url) as held:
        classify(
            held.letters, lambda ids: stored_orders(clients.client("dynamodb"), queues.orders_table, ids)
        )
        for letter in held.letters:
            report[letter.kind]["found"] += 1
        chosen = [letter for letter in held.letters if letter.kind in classes]
        for batch in [] if dry_run else _batches(chosen):
            entries = []
            for i, letter in enumerate(batch):
                entry = {"Id": str(i), "MessageBody": letter.body}
                if letter.message_attributes:
                    entry["MessageAttributes"] = _send_attributes(letter.message_attributes)
                entries.append(entry)
            sent = sqs.send_message_batch(QueueUrl=queues.jobs_url, Entries=entries)
            for failure in sent.get("Failed", []):
                letter = batch[int(failure["Id"])]
                report[letter.kind]["failed"] += 1
                failures.append(
                    {
                        "message_id": letter.message_id,
                        "reason": f"send: {failure.get('Message', failure['Code'])}",
                    }
                )
            copied = [batch[int(ok["Id"])] for ok in sent.get("Successful", [])]
            if not copied:
                continue
            removed = sqs.delete_message_batch(
                QueueUrl=queues.dlq_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": letter.receipt_handle} for i, letter in enumerate(copied)
                ],
            )
            gone = [copied[int(ok["Id"])] for ok in removed.get("Successful", [])]
            held.deleted(gone)
            for letter in gone:
                report[letter.kind]["moved"] += 1
            for failure in removed.get("Failed", []):
                letter = copied[int(failure["Id"])]
                report[letter.kind]["failed"] += 1
                failures.append(
                    {
                        "message_id": letter.message_id,
                        "reason": f"sent, but not deleted from the DLQ (the copy will be a duplicate): "
                        f"{failure.get('Message', failure['Code'])}",
                    }
                )
    return {"classes": list(classes), "dry_run": dry_run, "counts": report, "failures": failures}


def discard(clients: Any, queues: Queues, message_id: str, reason: str) -> dict[str, Any]:
    """Remove one conflict or malformed message after a human decided, with an audit record
    written first (who, when, why, the body and its class)."""
    reason = " ".join((reason or "").split())
    if not reason:
        raise DlqError("a discard needs --reason: why this message may go")
    if len(reason) > MAX_REASON:
        raise DlqError(f"the reason is {len(reason)} characters; keep it under {MAX_REASON}")
    sqs = clients.client("sqs")
    with HeldDeadLetters(sqs, queues.dlq_url) as held:
        letter = next((letter for letter in held.letters if letter.message_id == message_id), None)
        if letter is None:
            raise DlqError(
                f"message {message_id} is not in the dead-letter queue (or another reader holds it)"
            )
        classify([letter], lambda ids: stored_orders(clients.client("dynamodb"), queues.orders_table, ids))
        if letter.kind in SAFE_CLASSES:
            raise DlqError(
                f"message {message_id} is {letter.kind} ({letter.reason}): redrive it with "
                "`ops dlq redrive`; only conflict and malformed messages are discarded"
            )
        record = {
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
        write_audit(clients.client("logs"), queues.audit_log_group, record)
        sqs.delete_message(QueueUrl=queues.dlq_url, ReceiptHandle=letter.receipt_handle)
        held.deleted([letter])
    return record


def write_audit(logs: Any, log_group: str, record: dict[str, Any]) -> None:
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
                "message": f"{AUDIT_TAG} {json.dumps(record, sort_keys=True, default=str)}",
            }
        ],
    )


def audit(clients: Any, queues: Queues) -> list[dict[str, Any]]:
    """Every discard recorded in the audit log group, oldest first."""
    records = []
    for event in log_events(clients.client("logs"), queues.audit_log_group):
        tag, _, rest = event["message"].partition(" ")
        if tag == AUDIT_TAG:
            try:
                records.append(json.loads(rest))
            except ValueError:
                continue
    return records
