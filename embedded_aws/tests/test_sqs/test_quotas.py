"""The in-flight cap and SendMessageBatch's size limit, as SQS documents them (services/sqs/limits.py),
against the shared emulator: at the cap a short poll fails with OverLimit and a long poll returns
nothing until a delete makes room; a batch is measured in bytes over bodies and attributes."""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError

from embedded_aws.services.sqs.limits import BATCH_BYTES, IN_FLIGHT_TAG


@pytest.fixture
def queue(emulator):
    sqs = emulator.client("sqs")
    url = sqs.create_queue(QueueName=f"quota-{uuid.uuid4().hex[:8]}", tags={IN_FLIGHT_TAG: "12"})["QueueUrl"]
    yield sqs, url
    sqs.delete_queue(QueueUrl=url)


def receive(sqs, url: str, wait: int = 0) -> list[dict]:
    messages: list[dict] = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60, WaitTimeSeconds=wait
    ).get("Messages", [])
    return messages


def test_at_the_in_flight_cap_a_short_poll_fails_and_a_long_poll_returns_nothing(queue):
    sqs, url = queue
    for start in (0, 10):
        sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": str(n), "MessageBody": f"m{start + n}"} for n in range(10)]
        )
    held = receive(sqs, url) + receive(sqs, url)
    assert len(held) == 12  # the second receive got only the two the cap left room for
    with pytest.raises(ClientError) as refused:
        receive(sqs, url)
    assert refused.value.response["Error"]["Code"] == "OverLimit"
    assert receive(sqs, url, wait=1) == []
    counters = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert counters == {"ApproximateNumberOfMessages": "8", "ApproximateNumberOfMessagesNotVisible": "12"}
    sqs.delete_message(QueueUrl=url, ReceiptHandle=held[0]["ReceiptHandle"])
    assert len(receive(sqs, url)) == 1


def test_a_batch_counts_bodies_and_attributes_in_bytes(queue):
    sqs, url = queue
    # 10 bodies of 2-byte characters: 1,048,580 bytes though only 524,290 characters
    too_long = [{"Id": str(n), "MessageBody": "é" * 52_429} for n in range(10)]
    too_long[0]["MessageBody"] += "éé"
    with pytest.raises(ClientError) as refused:
        sqs.send_message_batch(QueueUrl=url, Entries=too_long)
    assert (
        refused.value.response["Error"]["Code"] == "AWS.SimpleQueueService.BatchRequestTooLong"
    )  # its query code
    body = "x" * (BATCH_BYTES // 2 - 20)
    attribute = {"origin": {"DataType": "String", "StringValue": "y" * 30}}
    with pytest.raises(ClientError):
        sqs.send_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": "a", "MessageBody": body, "MessageAttributes": attribute},
                {"Id": "b", "MessageBody": body},
            ],
        )
    sent = sqs.send_message_batch(
        QueueUrl=url, Entries=[{"Id": "a", "MessageBody": body}, {"Id": "b", "MessageBody": body}]
    )
    assert len(sent["Successful"]) == 2
