"""The usage metrics `ops cost` prices that moto does not publish or undercounts: AWS/Logs
IncomingBytes and IncomingLogEvents of every PutLogEvents (services/logs/emf.py); AWS/SQS
NumberOfEmptyReceives, one per ReceiveMessage that returned nothing, and NumberOfMessagesDeleted of
DeleteMessageBatch (services/sqs/backend.py). "CloudWatch Logs metrics" and "Available CloudWatch
metrics for Amazon SQS" define them."""

from __future__ import annotations

import time

import pytest

from local.session import wait_for
from test_cloudwatch.metric_sums import recent_sum

pytestmark = [pytest.mark.e2e, pytest.mark.long_wait(10)]  # waits for the metric samples


def total(session, namespace: str, metric: str, dimension: tuple[str, str]) -> float:
    return recent_sum(session.client("cloudwatch"), namespace, metric, dict([dimension]))


def test_put_log_events_counts_its_events_and_their_utf8_bytes_for_its_group(session):
    """Two calls of 2 and 1 events (one with a two-byte character) count 3 events and the
    messages' UTF-8 bytes in the group's sums; another group's do not mix in."""
    logs, group = session.client("logs"), "/usage/ingested"
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s")
    now = int(time.time() * 1000)
    logs.put_log_events(
        logGroupName=group,
        logStreamName="s",
        logEvents=[{"timestamp": now, "message": "RESULT {}"}, {"timestamp": now, "message": "caf\u00e9"}],
    )
    logs.put_log_events(
        logGroupName=group, logStreamName="s", logEvents=[{"timestamp": now, "message": "x" * 100}]
    )
    dimension = ("LogGroupName", group)
    assert total(session, "AWS/Logs", "IncomingLogEvents", dimension) == 3
    assert total(session, "AWS/Logs", "IncomingBytes", dimension) == len("RESULT {}") + 5 + 100
    assert total(session, "AWS/Logs", "IncomingBytes", ("LogGroupName", "/usage/other")) == 0


def test_a_receive_that_returns_nothing_counts_once_in_empty_receives(session):
    """Two receives of an empty queue (one a 1 s long poll) count 2 empty receives; a receive
    that returns a message counts none: the queue's sum reaches 2 and stays there."""
    sqs = session.client("sqs")
    name = "usage-empty-receives"
    queue = sqs.create_queue(QueueName=name)["QueueUrl"]
    assert "Messages" not in sqs.receive_message(QueueUrl=queue)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1)
    sqs.send_message(QueueUrl=queue, MessageBody="one")
    assert len(sqs.receive_message(QueueUrl=queue)["Messages"]) == 1
    dimension = ("QueueName", name)
    wait_for(
        lambda: total(session, "AWS/SQS", "NumberOfMessagesReceived", dimension) == 1,
        timeout=30,
        interval=0.5,
        what="the queue's next metric sample",
    )
    assert total(session, "AWS/SQS", "NumberOfEmptyReceives", dimension) == 2


def test_each_entry_a_delete_batch_deletes_counts_in_messages_deleted(session):
    """A DeleteMessageBatch of two valid handles and one invalid one counts 2 deleted, as a
    DeleteMessage counts 1: SQS counts every successful delete with a valid receipt handle
    ("Available CloudWatch metrics for Amazon SQS"), and the Lambda host deletes in batches."""
    sqs = session.client("sqs")
    name = "usage-batch-deletes"
    queue = sqs.create_queue(QueueName=name)["QueueUrl"]
    sqs.send_message_batch(QueueUrl=queue, Entries=[{"Id": str(i), "MessageBody": str(i)} for i in range(3)])
    handles = [
        m["ReceiptHandle"] for m in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=3)["Messages"]
    ]
    assert len(handles) == 3
    deleted = sqs.delete_message_batch(
        QueueUrl=queue,
        Entries=[{"Id": "a", "ReceiptHandle": handles[0]}, {"Id": "b", "ReceiptHandle": handles[1]}]
        + [{"Id": "bad", "ReceiptHandle": "not-a-handle"}],
    )
    assert len(deleted["Successful"]) == 2 and len(deleted["Failed"]) == 1
    sqs.delete_message(QueueUrl=queue, ReceiptHandle=handles[2])
    wait_for(
        lambda: total(session, "AWS/SQS", "NumberOfMessagesDeleted", ("QueueName", name)) == 3,
        timeout=30,
        interval=0.5,
        what="3 deletes in the queue's NumberOfMessagesDeleted",
    )
