"""The one write the operator tools make: move a single message from the dead-letter queue back to
the jobs queue, on an explicit request.

SQS's own redrive (StartMessageMoveTask) moves every message and moto 5.2.5 does not implement
it, so this moves one message by hand, the same way on the embedded AWS and on a real account:
receive it from the DLQ, send its body and message attributes to the jobs queue, then delete it
from the DLQ. Sending before deleting means a failure in between leaves a copy in both queues,
never in neither; the worker's conditional write turns the extra copy into a duplicate.

Permissions: sqs:ReceiveMessage, sqs:ChangeMessageVisibility and sqs:DeleteMessage on the DLQ,
sqs:SendMessage on the jobs queue.
"""

from __future__ import annotations

from typing import Any

# Long enough to send and delete; messages that are not the one asked for are released at once.
HOLD_SECONDS = 30
MAX_RECEIVES = 10


class RedriveError(RuntimeError):
    """The message could not be moved; the message says why in one line."""


def _send_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """Received message attributes carry empty list fields SendMessage rejects; keep the value."""
    kept = {}
    for name, value in attributes.items():
        field = "BinaryValue" if "BinaryValue" in value else "StringValue"
        kept[name] = {"DataType": value["DataType"], field: value.get(field, "")}
    return kept


def redrive_message(sqs: Any, dlq_url: str, queue_url: str, message_id: str) -> dict[str, str]:
    """Move the DLQ message with `message_id` to the jobs queue; returns both message ids."""
    for _ in range(MAX_RECEIVES):
        received = sqs.receive_message(
            QueueUrl=dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=HOLD_SECONDS, WaitTimeSeconds=0,
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not received:
            break
        wanted = next((message for message in received if message["MessageId"] == message_id), None)
        for other in received:
            if other is not wanted:
                sqs.change_message_visibility(QueueUrl=dlq_url, ReceiptHandle=other["ReceiptHandle"],
                                              VisibilityTimeout=0)
        if wanted is None:
            continue
        request: dict[str, Any] = {"QueueUrl": queue_url, "MessageBody": wanted["Body"]}
        if wanted.get("MessageAttributes"):
            request["MessageAttributes"] = _send_attributes(wanted["MessageAttributes"])
        sent = sqs.send_message(**request)
        sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=wanted["ReceiptHandle"])
        return {"moved": message_id, "new_message_id": sent["MessageId"]}
    raise RedriveError(f"message {message_id} is not (or no longer) visible in the dead-letter queue")
