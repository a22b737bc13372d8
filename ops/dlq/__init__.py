"""The dead-letter queue, understood: every message classified against the orders table with the
worker's own parser and duplicate rule, and what an operator may do with it. One module per role:

- letters.py: a dead letter, its class (`LetterClass`) and the one-line `DlqError`;
- reading.py: the queue a page at a time, holding what is read (`DeadLetterReader`);
- classifying.py: the classes, and `listing`;
- redriving.py: `redrive`, the safe classes sent back to the jobs queue;
- discarding.py: `discard`, one message removed after a human decided;
- audit.py: the discards' two facts each, and `audit` reading them back.
"""

from ops.dlq.audit import (
    AUDIT_CONFIRMED_TAG,
    AUDIT_FAILED_TAG,
    AUDIT_LEGACY_TAG,
    AUDIT_REQUESTED_TAG,
    AUDIT_STREAM,
    AUDIT_UNCONFIRMED_TAG,
    CONFIRMED,
    NOT_CONFIRMED,
    audit,
    write_audit,
)
from ops.dlq.classifying import (
    BACKOFF_CAP_SECONDS,
    BACKOFF_SECONDS,
    BATCH_GET_TRIES,
    CLASSES,
    LIST_LIMIT,
    SAFE_CLASSES,
    Judge,
    Lifetime,
    Queues,
    classify,
    counts,
    judge_of,
    lifetime_of,
    listing,
    stored_orders,
)
from ops.dlq.discarding import DISCARD_MAX_HELD, MAX_REASON, discard
from ops.dlq.letters import DeadLetter, DlqError, LetterClass
from ops.dlq.reading import HOLD_SECONDS, DeadLetterReader, Hold
from ops.dlq.redriving import (
    BATCH_BYTES,
    LISTED,
    MAX_HELD,
    in_group_order,
    message_bytes,
    parse_classes,
    redrive,
    send_batches,
)

LAPSING = LetterClass.LAPSING

__all__ = [
    "AUDIT_CONFIRMED_TAG",
    "AUDIT_FAILED_TAG",
    "AUDIT_LEGACY_TAG",
    "AUDIT_REQUESTED_TAG",
    "AUDIT_STREAM",
    "AUDIT_UNCONFIRMED_TAG",
    "BACKOFF_CAP_SECONDS",
    "BACKOFF_SECONDS",
    "BATCH_BYTES",
    "BATCH_GET_TRIES",
    "CLASSES",
    "CONFIRMED",
    "DISCARD_MAX_HELD",
    "HOLD_SECONDS",
    "LAPSING",
    "LISTED",
    "LIST_LIMIT",
    "MAX_HELD",
    "MAX_REASON",
    "NOT_CONFIRMED",
    "SAFE_CLASSES",
    "DeadLetter",
    "DeadLetterReader",
    "DlqError",
    "Hold",
    "Judge",
    "LetterClass",
    "Lifetime",
    "Queues",
    "audit",
    "classify",
    "counts",
    "discard",
    "in_group_order",
    "judge_of",
    "lifetime_of",
    "listing",
    "message_bytes",
    "parse_classes",
    "redrive",
    "send_batches",
    "stored_orders",
    "write_audit",
]
