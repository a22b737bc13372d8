"""ApproximateAgeOfOldestMessage as SQS computes it, which GetQueueAttributes does not expose
(only the AWS/SQS metric): in a dead-letter queue a message's age counts from its move there
("Setting-up dead-letter queue retention"), and in a standard queue a message received three or
more times and not deleted is left out ("Available CloudWatch metrics for Amazon SQS"). In-process
moto with the embedded AWS's note of each move (move_tasks.py) and its gauge code (metrics.py);
time is moved by shifting timestamps back, not by waiting."""

from __future__ import annotations

import time

import boto3
import pytest
from moto import mock_aws
from moto.sqs.models import Queue, sqs_backends

from embedded_aws.services.sqs import move_tasks
from embedded_aws.services.sqs.metrics import gauges

ACCOUNT, REGION = "123456789012", "us-east-1"
AGE = "ApproximateAgeOfOldestMessage"
DAY_MS = 86_400_000


@pytest.fixture
def sqs(monkeypatch):
    monkeypatch.setattr(Queue, "add_message", Queue.add_message)  # restored after the test
    move_tasks._patch_redrive_source()
    with mock_aws():
        client = boto3.client("sqs", region_name=REGION)
        client.create_queue(QueueName="jobs-dlq")
        client.create_queue(
            QueueName="jobs",
            Attributes={
                "RedrivePolicy": f'{{"deadLetterTargetArn": "arn:aws:sqs:{REGION}:{ACCOUNT}:jobs-dlq", '
                '"maxReceiveCount": "2"}'
            },
        )
        client.create_queue(QueueName="orders.fifo", Attributes={"FifoQueue": "true"})
        yield client


def url(sqs, name: str) -> str:
    queue_url: str = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    return queue_url


def queue(name: str) -> Queue:
    return sqs_backends[ACCOUNT][REGION].queues[name]


def age_of(name: str) -> float:
    q = queue(name)
    return gauges(list(q._messages), time.time() * 1000, fifo=bool(q.fifo_queue))[AGE]


def shift_sends(name: str, milliseconds: int, body: str | None = None) -> None:
    """Move the first send of the queue's messages (or of the one with `body`) into the past."""
    for message in queue(name)._messages:
        if body is None or message.body == body:
            assert message.sent_timestamp is not None  # set when it was sent
            message.sent_timestamp -= milliseconds


def receive(sqs, name: str, times: int) -> None:
    """Receive the queue's one visible message `times` times, never deleting it."""
    for _ in range(times):
        assert sqs.receive_message(QueueUrl=url(sqs, name))["Messages"]
        for message in queue(name)._messages:
            message.visible_at = 0  # its visibility timeout over, without waiting for it


def move_to_dlq(sqs) -> None:
    """Two receives reach maxReceiveCount; the third receive moves the message."""
    receive(sqs, "jobs", 2)
    assert sqs.receive_message(QueueUrl=url(sqs, "jobs")).get("Messages") is None


def test_a_dead_letters_age_counts_from_its_move_not_its_first_send(sqs):
    """A job sent three days ago and moved now is about 0 s old in the DLQ (its expiry still counts
    from the send: test_dead_letter_expiry.py); one sent straight to the DLQ is aged from its send."""
    sqs.send_message(QueueUrl=url(sqs, "jobs"), MessageBody="old job")
    shift_sends("jobs", 3 * DAY_MS)
    move_to_dlq(sqs)
    assert age_of("jobs-dlq") < 5
    sqs.send_message(QueueUrl=url(sqs, "jobs-dlq"), MessageBody="sent by hand")
    shift_sends("jobs-dlq", 600_000, body="sent by hand")
    assert 600 <= age_of("jobs-dlq") < 605


def test_a_message_received_three_times_is_left_out_of_a_standard_queues_age(sqs):
    """Received twice, the oldest message still sets the age; received a third time and not
    deleted, the age is the next one's; with none left, 0."""
    jobs_dlq = url(sqs, "jobs-dlq")
    sqs.send_message(QueueUrl=jobs_dlq, MessageBody="read often")
    receive(sqs, "jobs-dlq", 2)
    sqs.send_message(QueueUrl=jobs_dlq, DelaySeconds=900, MessageBody="younger")  # not receivable
    shift_sends("jobs-dlq", 100_000, body="read often")
    shift_sends("jobs-dlq", 50_000, body="younger")
    assert 100 <= age_of("jobs-dlq") < 105
    receive(sqs, "jobs-dlq", 1)
    assert 50 <= age_of("jobs-dlq") < 55
    for message in list(queue("jobs-dlq")._messages):
        if message.body == "younger":
            queue("jobs-dlq")._messages.remove(message)
    assert age_of("jobs-dlq") == 0


def test_receives_before_the_move_do_not_count_towards_the_dlqs_three(sqs):
    """A dead letter arrives with the source queue's receives behind it and is in the DLQ's age
    until it has been received three times in the DLQ (AWS does not say whether the source's
    receives count; counting them would only hide it sooner)."""
    sqs.send_message(QueueUrl=url(sqs, "jobs"), MessageBody="failing job")
    move_to_dlq(sqs)
    for message in queue("jobs-dlq")._messages:
        message.dead_letter_moved_at_ms -= 3_600_000  # type: ignore[attr-defined]  # our patch sets it
    assert 3600 <= age_of("jobs-dlq") < 3605
    receive(sqs, "jobs-dlq", 2)
    assert 3600 <= age_of("jobs-dlq") < 3605
    receive(sqs, "jobs-dlq", 1)
    assert age_of("jobs-dlq") == 0


def test_a_fifo_queue_keeps_a_message_received_three_times_in_its_age(sqs):
    """The three-receive rule is a standard queue's: a FIFO queue's oldest message sets the age
    however often it was received."""
    fifo = url(sqs, "orders.fifo")
    sqs.send_message(QueueUrl=fifo, MessageBody="first", MessageGroupId="g", MessageDeduplicationId="1")
    receive(sqs, "orders.fifo", 3)
    shift_sends("orders.fifo", 100_000)
    assert 100 <= age_of("orders.fifo") < 105


def test_a_fifo_dead_letters_age_counts_from_its_move(sqs):
    """A FIFO job sent three days ago and moved now is about 0 s old in the FIFO DLQ, as its
    retention there counts from the move too (test_dead_letter_expiry.py); read three more times
    there, it stays in the age (the FIFO rule above)."""
    sqs.create_queue(QueueName="jobs-dlq.fifo", Attributes={"FifoQueue": "true"})
    sqs.create_queue(
        QueueName="jobs.fifo",
        Attributes={
            "FifoQueue": "true",
            "RedrivePolicy": f'{{"deadLetterTargetArn": "arn:aws:sqs:{REGION}:{ACCOUNT}:jobs-dlq.fifo", '
            '"maxReceiveCount": "2"}',
        },
    )
    sqs.send_message(
        QueueUrl=url(sqs, "jobs.fifo"), MessageBody="old job", MessageGroupId="g", MessageDeduplicationId="1"
    )
    shift_sends("jobs.fifo", 3 * DAY_MS)
    receive(sqs, "jobs.fifo", 2)
    assert sqs.receive_message(QueueUrl=url(sqs, "jobs.fifo")).get("Messages") is None
    assert [m.body for m in queue("jobs-dlq.fifo")._messages] == ["old job"]
    assert age_of("jobs-dlq.fifo") < 5
    for message in queue("jobs-dlq.fifo")._messages:
        message.dead_letter_moved_at_ms -= 3_600_000  # type: ignore[attr-defined]  # our patch sets it
    receive(sqs, "jobs-dlq.fifo", 3)
    assert 3600 <= age_of("jobs-dlq.fifo") < 3605
