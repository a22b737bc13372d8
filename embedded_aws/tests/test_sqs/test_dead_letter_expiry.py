"""A message moved to a standard dead-letter queue keeps its first enqueue time, and the DLQ's
retention counts from it (SQS: "for standard queues, the expiration of a message is always based on
its original enqueue timestamp"); moved to a FIFO one, "the enqueue timestamp resets" and the DLQ's
whole retention counts from the move ("Setting-up dead-letter queue retention"). The clock is
scaled by moving the message's SentTimestamp (and the noted move) back, not by waiting:
in-process moto with the embedded AWS's retention check and its note of each move."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.sqs.models import Queue, sqs_backends

from embedded_aws.services.sqs import dead_letters

ACCOUNT, REGION = "123456789012", "us-east-1"


def make_queues(monkeypatch, suffix: str) -> Iterator[tuple[Any, str, str, str]]:
    """jobs and jobs-dlq (FIFO with suffix `.fifo`), one receive before a move."""
    from embedded_aws.compat.registry import applied
    from embedded_aws.services.sqs import move_tasks
    from embedded_aws.services.sqs.backend import patch_retention_check

    monkeypatch.setattr(Queue, "add_message", Queue.add_message)  # restored after the test
    move_tasks._patch_redrive_source()  # notes each move into a DLQ, as the embedded AWS does
    fifo: dict[Any, str] = {"FifoQueue": "true"} if suffix else {}  # boto3 types the keys as literals
    with applied(patch_retention_check), mock_aws():  # undone after the test
        sqs = boto3.client("sqs", region_name=REGION)
        dlq = sqs.create_queue(
            QueueName=f"jobs-dlq{suffix}", Attributes={"MessageRetentionPeriod": "600", **fifo}
        )["QueueUrl"]
        jobs = sqs.create_queue(
            QueueName=f"jobs{suffix}",
            Attributes={
                "MessageRetentionPeriod": "1200",
                "RedrivePolicy": f'{{"deadLetterTargetArn": "arn:aws:sqs:{REGION}:{ACCOUNT}:jobs-dlq{suffix}", "maxReceiveCount": "1"}}',
                **fifo,
            },
        )["QueueUrl"]
        yield sqs, jobs, dlq, suffix


@pytest.fixture
def queues(monkeypatch):
    yield from make_queues(monkeypatch, "")


@pytest.fixture
def fifo_queues(monkeypatch):
    yield from make_queues(monkeypatch, ".fifo")


def age(queue_name: str, seconds: float) -> None:
    """Move every message's first enqueue, and its move into this queue if it was moved, `seconds`
    into the past."""
    for message in sqs_backends[ACCOUNT][REGION].queues[queue_name]._messages:
        assert message.sent_timestamp is not None  # set when it was sent
        message.sent_timestamp -= int(seconds * 1000)
        if hasattr(message, dead_letters.MOVED_AT_ATTRIBUTE):
            setattr(
                message,
                dead_letters.MOVED_AT_ATTRIBUTE,
                getattr(message, dead_letters.MOVED_AT_ATTRIBUTE) - int(seconds * 1000),
            )


def send(sqs, jobs: str, suffix: str, body: str) -> None:
    fifo = {"MessageGroupId": "g", "MessageDeduplicationId": "d"} if suffix else {}
    sqs.send_message(QueueUrl=jobs, MessageBody=body, **fifo)


def move_to_dlq(sqs, jobs: str) -> None:
    (first,) = sqs.receive_message(QueueUrl=jobs)["Messages"]
    sqs.change_message_visibility(QueueUrl=jobs, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0)
    assert sqs.receive_message(QueueUrl=jobs).get("Messages") is None  # the second receive moved it


def test_a_dead_letter_expires_by_its_first_enqueue_plus_the_dlqs_retention(queues):
    """Standard: enqueued 590 s ago, moved just now into a DLQ keeping messages 600 s: still there;
    11 s later it is gone, 589 s before a clock counting from the move says."""
    sqs, jobs, dlq, suffix = queues
    send(sqs, jobs, suffix, '{"id": "old-order", "quantity": 1}')
    age("jobs", 590)
    move_to_dlq(sqs, jobs)
    (kept,) = sqs.receive_message(QueueUrl=dlq, VisibilityTimeout=0)["Messages"]
    assert kept["Body"] == '{"id": "old-order", "quantity": 1}'
    age("jobs-dlq", 11)
    assert sqs.receive_message(QueueUrl=dlq).get("Messages") is None


def test_a_fifo_dead_letter_has_the_dlqs_whole_retention_from_its_move(fifo_queues):
    """FIFO: enqueued 590 s ago and moved just now, the same dead letter is still there 589 s after
    the move (the standard one was gone 11 s after it), and gone once 600 s have passed since."""
    sqs, jobs, dlq, suffix = fifo_queues
    send(sqs, jobs, suffix, '{"id": "old-order", "quantity": 1}')
    age(f"jobs{suffix}", 590)
    move_to_dlq(sqs, jobs)
    age(f"jobs-dlq{suffix}", 589)
    (kept,) = sqs.receive_message(QueueUrl=dlq, VisibilityTimeout=0)["Messages"]
    assert kept["Body"] == '{"id": "old-order", "quantity": 1}'
    age(f"jobs-dlq{suffix}", 12)
    assert sqs.receive_message(QueueUrl=dlq).get("Messages") is None
