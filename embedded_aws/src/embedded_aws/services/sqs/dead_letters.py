"""Which queue each dead letter came from: noted when moto's redrive moves a message into a
dead-letter queue (move_tasks.py patches Queue.add_message for it), read by a move task without
a destination (each message goes back to its source) and by ReceiveMessage, whose answer names
it as DeadLetterQueueSourceArn (answers.py)."""

from __future__ import annotations

import weakref
from typing import Any

SOURCE_ATTRIBUTE = "dead_letter_source_arn"

# By message id, weakly: a deleted message is forgotten with it.
_by_id: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def note(message: Any, source_arn: str) -> None:
    setattr(message, SOURCE_ATTRIBUTE, source_arn)
    _by_id[message.id] = message


def source_of(message: Any) -> str | None:
    return getattr(message, SOURCE_ATTRIBUTE, None)


def source_by_id(message_id: str) -> str | None:
    message = _by_id.get(message_id)
    return source_of(message) if message is not None else None
