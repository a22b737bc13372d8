"""A FIFO message group comes back whole and in order once its in-flight messages' visibility
timeout has passed (services/sqs/backend.py: release_expired_groups)."""

from __future__ import annotations

import uuid

from local.session import wait_for


def test_a_group_returned_after_its_visibility_timeout_is_received_together_in_order(session):
    """Four messages of one group received at once, the first deleted: after the timeout one
    receive returns the other three, in order, each received a second time (moto returned the
    last one alone, and the other two only once it was gone)."""
    sqs = session.client("sqs")
    url = sqs.create_queue(
        QueueName=f"fifo-groups-{uuid.uuid4().hex[:6]}.fifo", Attributes={"FifoQueue": "true"}
    )["QueueUrl"]
    sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {
                "Id": str(n),
                "MessageBody": f"message-{n}",
                "MessageGroupId": "1",
                "MessageDeduplicationId": f"d{n}",
            }
            for n in range(1, 5)
        ],
    )
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=1)["Messages"]
    assert [m["Body"] for m in first] == ["message-1", "message-2", "message-3", "message-4"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"])
    wait_for(
        lambda: (
            sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])[
                "Attributes"
            ]["ApproximateNumberOfMessages"]
            == "3"
        ),
        timeout=10,
        what="three visible messages",
    )
    again = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["ApproximateReceiveCount"]
    )
    assert [(m["Body"], m["Attributes"]["ApproximateReceiveCount"]) for m in again["Messages"]] == [
        ("message-2", "2"),
        ("message-3", "2"),
        ("message-4", "2"),
    ]
    sqs.delete_queue(QueueUrl=url)
