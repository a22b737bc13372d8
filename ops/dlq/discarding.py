"""Removing one dead letter after a human decided, audited.

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

import uuid
from typing import Any

from ops.dlq.audit import (
    AUDIT_CONFIRMED_TAG,
    AUDIT_FAILED_TAG,
    AUDIT_REQUESTED_TAG,
    AUDIT_UNCONFIRMED_TAG,
    CONFIRMED,
    NOT_CONFIRMED,
    now,
    write_audit,
)
from ops.dlq.classifying import SAFE_CLASSES, Queues, classify, order_lookup, read_lifetime
from ops.dlq.letters import DeadLetter, DlqError, attribute_json
from ops.dlq.reading import HOLD_SECONDS, DeadLetterReader

DISCARD_MAX_HELD = 10_000  # messages a discard reads past, looking for its target, at most
MAX_REASON = 1000


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
        classify([letter], order_lookup(clients, queues), read_lifetime(clients, queues), queues.judge)
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
                {"audit_id": record["audit_id"], "message_id": message_id, "time": now(), **facts},
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

    return {
        "audit_id": str(uuid.uuid4()),
        "time": now(),
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
            name: attribute_json(value) for name, value in letter.message_attributes.items()
        },
        "receive_count": letter.receive_count,
        "sent_ms": letter.sent_ms,
    }
