"""The discards' audit: two facts per discard in the stack's audit log group, one `audit_id`
(ops/dlq/discarding.py), and their reading back with each discard's outcome."""

from __future__ import annotations

import json
import time
from typing import Any

from ops.dlq.classifying import Queues
from ops.observe import log_events
from stacks.config import DLQ_AUDIT_STREAM

AUDIT_REQUESTED_TAG = "DISCARD_REQUESTED"
AUDIT_CONFIRMED_TAG = "DISCARD_CONFIRMED"
AUDIT_FAILED_TAG = "DISCARD_FAILED"
AUDIT_UNCONFIRMED_TAG = "DISCARD_UNCONFIRMED"
# Written before the delete by versions that did not confirm it: read as requested, not confirmed.
AUDIT_LEGACY_TAG = "DISCARD"
AUDIT_STREAM = DLQ_AUDIT_STREAM
CONFIRMED = "discarded"
NOT_CONFIRMED = "requested, not confirmed"


def now() -> str:
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
