"""A message moved to a dead-letter queue keeps its first enqueue time, and the DLQ's retention
counts from it (SQS: "for standard queues, the expiration of a message is always based on its
original enqueue timestamp"). The clock is scaled by moving the message's SentTimestamp back,
not by waiting: in-process moto with the embedded AWS's retention check."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws
from moto.sqs.models import sqs_backends

ACCOUNT, REGION = "123456789012", "us-east-1"


@pytest.fixture
def queues():
    from embedded_aws.compat.registry import applied
    from embedded_aws.services.sqs.backend import patch_retention_check

    with applied(patch_retention_check), mock_aws():  # undone after the test
        sqs = boto3.client("sqs", region_name=REGION)
        dlq = sqs.create_queue(QueueName="jobs-dlq", Attributes={"MessageRetentionPeriod": "600"})["QueueUrl"]
        jobs = sqs.create_queue(
            QueueName="jobs",
            Attributes={
                "MessageRetentionPeriod": "1200",
                "RedrivePolicy": f'{{"deadLetterTargetArn": "arn:aws:sqs:{REGION}:{ACCOUNT}:jobs-dlq", "maxReceiveCount": "1"}}',
            },
        )["QueueUrl"]
        yield sqs, jobs, dlq


def age(queue_name: str, seconds: float) -> None:
    """Move every message's first enqueue `seconds` into the past."""
    for message in sqs_backends[ACCOUNT][REGION].queues[queue_name]._messages:
        assert message.sent_timestamp is not None  # set when it was sent
        message.sent_timestamp -= int(seconds * 1000)


def move_to_dlq(sqs, jobs: str) -> None:
    (first,) = sqs.receive_message(QueueUrl=jobs)["Messages"]
    sqs.change_message_visibility(QueueUrl=jobs, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0)
    assert sqs.receive_message(QueueUrl=jobs).get("Messages") is None  # the second receive moved it


def test_a_dead_letter_expires_by_its_first_enqueue_plus_the_dlqs_retention(queues):
    """Enqueued 590 s ago, moved just now into a DLQ keeping messages 600 s: still there; 11 s
    later (by its SentTimestamp) it is gone, 589 s before a clock counting from the move says."""
    sqs, jobs, dlq = queues
    sqs.send_message(QueueUrl=jobs, MessageBody='{"id": "old-order", "quantity": 1}')
    age("jobs", 590)
    move_to_dlq(sqs, jobs)
    (kept,) = sqs.receive_message(QueueUrl=dlq, VisibilityTimeout=0)["Messages"]
    assert kept["Body"] == '{"id": "old-order", "quantity": 1}'
    age("jobs-dlq", 11)
    assert sqs.receive_message(QueueUrl=dlq).get("Messages") is None
