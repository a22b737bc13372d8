"""SQS and its message move tasks against AWS's recorded answers (recordings.py): refusals of
sends and batches, FIFO rules, purge, an empty receive, what a dead letter carries, and the
move tasks' refusals and results."""

from __future__ import annotations

import json
import uuid

import pytest
from botocore.exceptions import ClientError

from local.session import wait_for
from test_conformance.recorded import answer
from test_conformance.recordings import check
from tests.e2e.conftest import ACCOUNT, REGION

pytestmark = [pytest.mark.e2e]


def refused(call) -> dict:
    with pytest.raises(ClientError) as error:
        call()
    return answer(error.value.response)


def new_queue(session, stem: str, **attributes: str) -> tuple[str, str]:
    name = f"{stem}-{uuid.uuid4().hex[:6]}" + (".fifo" if attributes.get("FifoQueue") else "")
    url = session.client("sqs").create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    return url, f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"


def test_a_deleted_queue(emulator):
    """Requests naming a deleted queue, by URL and by name: AWS's NonExistentQueue."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-gone")
    sqs.delete_queue(QueueUrl=url)
    check("sqs.deleted-queue", refused(lambda: sqs.get_queue_attributes(QueueUrl=url)))
    check("sqs.deleted-queue-url", refused(lambda: sqs.get_queue_url(QueueName=url.rsplit("/", 1)[1])))


def test_sends_and_batches_that_are_refused(emulator):
    """An empty receive, then sends, batches and a second purge that AWS refuses, in its words."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-send")
    check(
        "sqs.receive-empty",
        [
            answer(sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)),
            answer(sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, WaitTimeSeconds=1)),
        ],
    )
    check("sqs.empty-body", refused(lambda: sqs.send_message(QueueUrl=url, MessageBody="")))
    check(
        "sqs.oversized-body",
        refused(lambda: sqs.send_message(QueueUrl=url, MessageBody="a" * (1024 * 1024 + 1))),
    )
    entries = [{"Id": f"m-{n}", "MessageBody": "body"} for n in range(20)]
    check("sqs.batch-too-many", refused(lambda: sqs.send_message_batch(QueueUrl=url, Entries=entries)))
    check(
        "sqs.delete-batch-too-many",
        refused(
            lambda: sqs.delete_message_batch(
                QueueUrl=url, Entries=[{"Id": f"m-{n}", "ReceiptHandle": f"handle-{n}"} for n in range(20)]
            )
        ),
    )
    check(
        "sqs.invalid-batch-id",
        refused(
            lambda: sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "message:1", "MessageBody": "body"}])
        ),
    )
    check(
        "sqs.empty-string-attribute",
        refused(
            lambda: sqs.send_message(
                QueueUrl=url,
                MessageBody="test",
                MessageAttributes={"ErrorDetails": {"StringValue": "", "DataType": "String"}},
            )
        ),
    )
    sqs.purge_queue(QueueUrl=url)
    check("sqs.purge-twice", refused(lambda: sqs.purge_queue(QueueUrl=url)))


def test_fifo_sends_that_are_refused(emulator):
    """A FIFO send without deduplication id, without group id, with a delay."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-fifo-send", FifoQueue="true")
    check(
        "sqs.fifo-without-deduplication",
        refused(lambda: sqs.send_message(QueueUrl=url, MessageBody="body", MessageGroupId="1")),
    )
    check(
        "sqs.fifo-without-group",
        refused(lambda: sqs.send_message(QueueUrl=url, MessageBody="body", MessageDeduplicationId="d")),
    )
    check(
        "sqs.fifo-delay",
        refused(
            lambda: sqs.send_message(
                QueueUrl=url,
                MessageBody="body",
                MessageGroupId="1",
                MessageDeduplicationId="d",
                DelaySeconds=2,
            )
        ),
    )


def test_a_dead_letter_keeps_its_id_attributes_and_trace_and_names_its_source(emulator):
    """A redriven message keeps id, digests, attributes and trace header, and names its source queue."""
    sqs = emulator.client("sqs")
    dlq_url, dlq_arn = new_queue(emulator, "rec-dl-dlq")
    url, _ = new_queue(
        emulator, "rec-dl", RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
    )
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody="message-1",
        MessageAttributes={"MyAttribute": {"StringValue": "foobar", "DataType": "String"}},
        MessageSystemAttributes={
            "AWSTraceHeader": {
                "StringValue": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
                "DataType": "String",
            }
        },
    )
    sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)
    wait_for(
        lambda: (
            not sqs.receive_message(QueueUrl=url, VisibilityTimeout=0).get("Messages")
            and sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["ApproximateNumberOfMessages"])[
                "Attributes"
            ]["ApproximateNumberOfMessages"]
            == "1"
        ),
        timeout=10,
        what="the move to the DLQ",
    )
    (dead,) = sqs.receive_message(QueueUrl=dlq_url, AttributeNames=["All"], MessageAttributeNames=["All"])[
        "Messages"
    ]
    dead = {
        **dead,
        "MessageId": "same as the source message's"
        if dead["MessageId"] == sent["MessageId"]
        else dead["MessageId"],
    }
    check("sqs.dead-letter", dead)


def dlq_with_source(session, stem: str, messages: int) -> tuple[str, str, str]:
    """A DLQ (URL, ARN) holding `messages` dead letters of a source queue (URL)."""
    sqs = session.client("sqs")
    dlq_url, dlq_arn = new_queue(session, f"{stem}-dlq")
    url, _ = new_queue(
        session, stem, RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
    )
    for n in range(messages):
        sqs.send_message(QueueUrl=url, MessageBody=f"message-{n}")
    for _ in range(messages):
        sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)
    wait_for(
        lambda: not sqs.receive_message(QueueUrl=url, VisibilityTimeout=0).get("Messages"),
        timeout=10,
        what="the moves to the DLQ",
    )
    return dlq_url, dlq_arn, url


def completed(sqs, source_arn: str) -> dict:
    def done() -> dict | None:
        listed = answer(sqs.list_message_move_tasks(SourceArn=source_arn))
        return listed if listed["Results"][0]["Status"] == "COMPLETED" else None

    task = wait_for(done, timeout=10, what="the task to complete")
    assert task is not None  # wait_for returns only a truthy value
    return task


def test_move_task_refusals(emulator):
    """StartMessageMoveTask and CancelMessageMoveTask refusals, as recorded."""
    sqs = emulator.client("sqs")
    _, plain_arn = new_queue(emulator, "rec-move-plain")
    check("move.source-not-a-dlq", refused(lambda: sqs.start_message_move_task(SourceArn=plain_arn)))
    check("move.invalid-handle", refused(lambda: sqs.cancel_message_move_task(TaskHandle="invalid")))
    _, dlq_arn, _ = dlq_with_source(emulator, "rec-move-refuse", 3)
    check(
        "move.missing-destination",
        refused(
            lambda: sqs.start_message_move_task(
                SourceArn=dlq_arn,
                DestinationArn=f"arn:aws:sqs:{REGION}:{ACCOUNT}:no-such-{uuid.uuid4().hex[:6]}",
            )
        ),
    )
    sqs.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=1)
    check("move.one-task-per-queue", refused(lambda: sqs.start_message_move_task(SourceArn=dlq_arn)))


def test_move_task_results(emulator):
    """A completed task as ListMessageMoveTasks shows it, with and without a destination."""
    sqs = emulator.client("sqs")
    _, dlq_arn, _ = dlq_with_source(emulator, "rec-move-dest", 2)
    _, destination_arn = new_queue(emulator, "rec-move-target")
    sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=destination_arn)
    check("move.completed-with-destination", completed(sqs, dlq_arn))
    _, dlq_arn, _ = dlq_with_source(emulator, "rec-move-back", 2)
    sqs.start_message_move_task(SourceArn=dlq_arn)
    check("move.completed-to-sources", completed(sqs, dlq_arn))
