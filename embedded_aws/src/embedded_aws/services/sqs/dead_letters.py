"""What a dead letter carries about its move: the queue it came from and when it arrived, noted
when moto's redrive moves a message into a dead-letter queue (move_tasks.py patches
Queue.add_message for it). The source is read by a move task without a destination (each message
goes back to its source) and by ReceiveMessage, whose answer names it as DeadLetterQueueSourceArn
(answers.py); the arrival and the receive count at the move by the DLQ's
ApproximateAgeOfOldestMessage (metrics.py), which SQS counts from the move, not the first send
("Setting-up dead-letter queue retention")."""

from __future__ import annotations

import weakref
from typing import Any

SOURCE_ATTRIBUTE = "dead_letter_source_arn"
MOVED_AT_ATTRIBUTE = "dead_letter_moved_at_ms"
RECEIVES_BEFORE_ATTRIBUTE = "dead_letter_receives_before_move"

# By message id, weakly: a deleted message is forgotten with it.
_by_id: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def note(message: Any, source_arn: str, moved_at_ms: float) -> None:
    setattr(message, SOURCE_ATTRIBUTE, source_arn)
    setattr(message, MOVED_AT_ATTRIBUTE, moved_at_ms)
    setattr(message, RECEIVES_BEFORE_ATTRIBUTE, getattr(message, "approximate_receive_count", 0))
    _by_id[message.id] = message


def source_of(message: Any) -> str | None:
    return getattr(message, SOURCE_ATTRIBUTE, None)


def source_by_id(message_id: str) -> str | None:
    message = _by_id.get(message_id)
    return source_of(message) if message is not None else None


def arrived_at_ms(message: Any) -> float | None:
    """When the message came into the queue it is in: its move for a dead letter, else its send."""
    moved: float | None = getattr(message, MOVED_AT_ATTRIBUTE, None)
    if moved is not None:
        return moved
    sent: float = message.sent_timestamp
    return sent


def receives_here(message: Any) -> int:
    """Receives since the message came into the queue it is in (AWS does not document whether
    receives in the source queue count towards the DLQ's three-receive rule; these do not)."""
    total = getattr(message, "approximate_receive_count", 0) or 0
    return total - getattr(message, RECEIVES_BEFORE_ATTRIBUTE, 0)
