"""Sending dead letters back to the jobs queue, a page at a time.

- A redrive moves each page's safe messages (send, then delete) before it reads on, and keeps
  only the id and receipt handle of each unsafe one it steps past, invisible, extending their
  visibility while it works (`DeadLetterReader`, ten per ChangeMessageVisibilityBatch, batches_of
  side by side). A failure between send and delete leaves a copy in both queues, which the
  worker turns into a duplicate, never a lost order. Its report counts every move and lists the
  first `LISTED` moves and failures.
- A listing reads at most `limit` messages, holds them while it classifies them, then releases
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ops.dlq.classifying import CLASSES, SAFE_CLASSES, Queues, classify, order_lookup, read_lifetime
from ops.dlq.letters import DeadLetter, DlqError
from ops.dlq.reading import HOLD_SECONDS, DeadLetterReader

MAX_HELD = 100_000  # unsafe messages a redrive steps past at most (SQS's in-flight cap is ~120,000)
LISTED = 1000  # moves and failures a redrive report lists; all of them are counted
BATCH_BYTES = 1_048_576  # SendMessageBatch: all the batch's messages together (SQS API reference)


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
        self.counts[letter.classified]["failed"] += 1
        if len(self.failures) < LISTED:
            self.failures.append({"message_id": letter.message_id, "reason": reason})
        else:
            self.failures_not_listed += 1

    def moved_one(self, letter: DeadLetter, new_message_id: str) -> None:
        self.counts[letter.classified]["moved"] += 1
        if len(self.moved) < LISTED:
            self.moved.append(
                {
                    "message_id": letter.message_id,
                    "new_message_id": new_message_id,
                    "class": letter.classified,
                }
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
    lifetime = read_lifetime(clients, queues)
    with reader(sqs, queues.dlq_url, hold_seconds) as source:
        for page in source.pages():
            classify(page, order_lookup(clients, queues), lifetime, queues.judge)
            for letter in page:
                report.counts[letter.classified]["found"] += 1
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
