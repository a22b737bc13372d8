"""SQS batch and size rules moto does not keep, as LocalStack recorded AWS answering them
(embedded_aws/tests/test_conformance/recordings_sqs.py cites each):

- A message's size is its body and each attribute's name, type and value in bytes, held to the
  queue's MaximumMessageSize; moto counted the body's characters only.
- In SendMessageBatch an entry over that size fails alone (`Failed`, InvalidParameterValue), the
  others are sent; moto refused the whole batch.
- A FIFO batch with an entry lacking MessageGroupId is refused as InvalidParameterValue (SendMessage
  answers MissingParameter).
- DeleteMessageBatch and ChangeMessageVisibilityBatch refuse more than ten entries and entry ids
  that are not 1 to 80 letters, digits, hyphens or underscores, or not distinct; moto checked
  neither for ChangeMessageVisibilityBatch and only the count (ours) for DeleteMessageBatch.
"""

from __future__ import annotations

import re
from typing import Any

from embedded_aws.compat.registry import T, declare, install
from embedded_aws.services.sqs.limits import entry_bytes

_ENTRY_ID = re.compile(r"[\w-]{1,80}")
MAX_ENTRIES = 10


def message_size(body: str, attributes: dict[str, Any] | None) -> int:
    return entry_bytes({"MessageBody": body, "MessageAttributes": attributes or {}})


def too_long(queue: Any, body: str, attributes: dict[str, Any] | None) -> str | None:
    """Why a message is over its queue's MaximumMessageSize (None: it fits)."""
    limit = int(queue.maximum_message_size)
    if message_size(body, attributes) > limit:
        return f"Message must be shorter than {limit} bytes."
    return None


def check_entries(ids: list[str]) -> None:
    """A batch's entry ids and count as SQS checks them before any entry is looked at."""
    from moto.sqs.exceptions import (
        BatchEntryIdsNotDistinct,
        InvalidBatchEntryId,
        TooManyEntriesInBatchRequest,
    )

    if any(not _ENTRY_ID.fullmatch(entry_id or "") for entry_id in ids):
        raise InvalidBatchEntryId()
    seen: set[str] = set()
    for entry_id in ids:
        if entry_id in seen:
            raise BatchEntryIdsNotDistinct(entry_id)
        seen.add(entry_id)
    if len(ids) > MAX_ENTRIES:
        raise TooManyEntriesInBatchRequest(len(ids))


def sized(send: Any) -> Any:
    """SQSBackend.send_message with the size counted in bytes, attributes included."""
    from moto.sqs.exceptions import InvalidParameterValue

    def send_message(
        self: Any,
        queue_name: str,
        message_body: str,
        message_attributes: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        reason = too_long(self.get_queue(queue_name), message_body or "", message_attributes)
        if reason:
            raise InvalidParameterValue(f"One or more parameters are invalid. Reason: {reason}")
        return send(self, queue_name, message_body, message_attributes, *args, **kwargs)

    return send_message


def per_entry(send_batch: Any) -> Any:
    """SQSBackend.send_message_batch failing an oversized entry alone."""
    from moto.sqs.exceptions import InvalidParameterValue

    def send_message_batch(self: Any, queue_name: str, entries: dict[str, dict[str, Any]]) -> Any:
        queue = self.get_queue(queue_name)
        check_entries([entry.get("Id", "") for entry in entries.values()])
        if queue.fifo_queue and any(not entry.get("MessageGroupId") for entry in entries.values()):
            raise InvalidParameterValue("The request must contain the parameter MessageGroupId.")
        failed, kept = [], {}
        for key, entry in entries.items():
            reason = too_long(queue, entry.get("MessageBody") or "", entry.get("MessageAttributes"))
            if reason:
                failed.append(
                    {
                        "Id": entry["Id"],
                        "SenderFault": True,
                        "Code": "InvalidParameterValue",
                        "Message": f"One or more parameters cannot be validated. Reason: {reason}",
                    }
                )
            else:
                kept[key] = entry
        sent, others = send_batch(self, queue_name, kept) if kept else ([], [])
        return sent, failed + others

    return send_message_batch


def checked_ids(batch_call: Any) -> Any:
    """DeleteMessageBatch or ChangeMessageVisibilityBatch (entries as a list) with ids and count checked."""

    def call(self: Any, queue_name: str, entries: list[dict[str, Any]]) -> Any:
        check_entries([entry.get("Id", "") for entry in entries])
        return batch_call(self, queue_name, entries)

    return call


@declare(
    "sqs.batch-answers",
    "SendMessageBatch with every entry sent has no Failed member, as LocalStack recorded AWS",
    T("moto.sqs.responses:SQSResponse.send_message_batch", "self"),
    fixes_moto="SendMessageBatch answers an empty Failed list in the JSON protocol where AWS leaves it out",
)
def patch_batch_answers() -> None:
    """SendMessageBatch with every entry sent answers no `Failed` member (moto sent an empty list)."""
    from moto.sqs.responses import SQSResponse

    send_batch = SQSResponse.send_message_batch

    def send_message_batch(self: Any) -> Any:
        answer = send_batch(self)
        result: Any = answer.result  # the answer's fields, a dict (moto types it object)
        if not result.get("Failed"):
            result.pop("Failed", None)
        return answer

    install(SQSResponse, "send_message_batch", send_message_batch)
