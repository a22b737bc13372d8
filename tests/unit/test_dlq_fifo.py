"""`ops dlq redrive` between FIFO queues (moto in-process): dead letters go back with their
message group, in their group's order, never past a letter of their group that stays."""

from __future__ import annotations

import json
import time

import pytest

from ops import dlq
from tests.unit.conftest import MotoClients, create_table, mocked_aws

ORDERS = "orders"


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setattr(dlq.reading, "END_OF_QUEUE_WAIT_SECONDS", 0)
    with mocked_aws():
        clients = MotoClients()
        sqs = clients.client("sqs")
        fifo = {"FifoQueue": "true"}
        queues = dlq.Queues(
            dlq_url=sqs.create_queue(QueueName="jobs-dlq.fifo", Attributes=fifo)["QueueUrl"],
            jobs_url=sqs.create_queue(QueueName="jobs.fifo", Attributes=fifo)["QueueUrl"],
            orders_table=ORDERS,
            audit_log_group="dlq-audit",
        )
        create_table(clients.client("dynamodb"), ORDERS)
        yield clients, queues


def letter(kind: str, group: str | None, order_id: str = "o") -> dlq.DeadLetter:
    return dlq.DeadLetter(order_id, "{}", 1, None, {}, "handle", kind=dlq.LetterClass(kind), group_id=group)


def test_in_group_order_keeps_every_letter_after_one_of_its_group_that_stays():
    """A conflict in group a keeps a's later letters; group b and standard letters are unaffected."""
    page = [
        letter("pending", "a", "a-1"),
        letter("conflict", "a", "a-2"),
        letter("pending", "b", "b-1"),
        letter("pending", "a", "a-3"),
        letter("stored", "b", "b-2"),
        letter("malformed", None, "s-1"),
        letter("pending", None, "s-2"),
    ]
    chosen = dlq.in_group_order(page, dlq.SAFE_CLASSES)
    assert [c.message_id for c in chosen] == ["a-1", "b-1", "b-2", "s-2"]
    assert [c.message_id for c in dlq.in_group_order(page, ("pending",))] == ["a-1", "b-1", "s-2"]


def test_redrive_sends_fifo_letters_back_with_their_group_in_order(aws):
    """Group a: a-1 pending, a-2 conflicting, a-3 pending; group b: b-1, b-2 pending. The redrive
    moves a-1, b-1, b-2, each with its group and its dead letter's id as deduplication id, in order;
    a-2 and a-3 stay in the DLQ."""
    clients, queues = aws
    sqs = clients.client("sqs")
    clients.client("dynamodb").put_item(
        TableName=ORDERS, Item={"id": {"S": "a-2"}, "quantity": {"N": "9"}, "total_cents": {"N": "2350"}}
    )
    sent = {}
    for group, order_id, quantity in (
        ("a", "a-1", 1),
        ("a", "a-2", 2),
        ("b", "b-1", 1),
        ("a", "a-3", 3),
        ("b", "b-2", 2),
    ):
        sent[order_id] = sqs.send_message(
            QueueUrl=queues.dlq_url,
            MessageBody=json.dumps({"id": order_id, "quantity": quantity}),
            MessageGroupId=group,
            MessageDeduplicationId=f"producer-{order_id}",
        )["MessageId"]
    report = dlq.redrive(clients, queues)
    assert (report["counts"]["pending"]["moved"], report["counts"]["conflict"]["found"]) == (3, 1)
    received = sqs.receive_message(
        QueueUrl=queues.jobs_url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    )["Messages"]
    moved = [
        (
            json.loads(m["Body"])["id"],
            m["Attributes"]["MessageGroupId"],
            m["Attributes"]["MessageDeduplicationId"],
        )
        for m in received
    ]
    assert moved == [("a-1", "a", sent["a-1"]), ("b-1", "b", sent["b-1"]), ("b-2", "b", sent["b-2"])]
    left = sqs.receive_message(QueueUrl=queues.dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=60)[
        "Messages"
    ]
    assert [json.loads(m["Body"])["id"] for m in left] == ["a-2", "a-3"]


def test_a_group_held_back_behind_a_letter_left_in_the_dlq_is_named_not_called_lagging(aws):
    """Twelve letters of one group, the second a conflict: the first is moved, nothing after the
    conflict is, and the report says the rest wait behind a letter the redrive leaves (SQS holds
    a FIFO group back behind its message in flight), not that SQS's counters lag."""
    clients, queues = aws
    sqs = clients.client("sqs")
    clients.client("dynamodb").put_item(
        TableName=ORDERS, Item={"id": {"S": "a-1"}, "quantity": {"N": "9"}, "total_cents": {"N": "2350"}}
    )
    for n in range(12):
        sqs.send_message(
            QueueUrl=queues.dlq_url,
            MessageBody=json.dumps({"id": f"a-{n}", "quantity": 1}),
            MessageGroupId="a",
            MessageDeduplicationId=f"a-{n}",
        )
    report = dlq.redrive(clients, queues)
    assert report["counts"]["pending"]["moved"] == 1 and not report["complete"]
    assert "wait in their FIFO group behind a message this redrive leaves in the DLQ" in report["stopped"]


DAY = 86_400


def retentions(sqs, queues: dlq.Queues, job_days: int = 7, dead_days: int = 14) -> None:
    """The stack's defaults: jobs 7 days, DLQ 14."""
    for url, days in ((queues.jobs_url, job_days), (queues.dlq_url, dead_days)):
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"MessageRetentionPeriod": str(days * DAY)})


def stored_dead_letter(clients, queues: dlq.Queues, order_id: str, expires_in_days: float) -> None:
    """Order `order_id` stored with an expiry `expires_in_days` from now, and a copy just sent to the DLQ."""
    clients.client("dynamodb").put_item(
        TableName=ORDERS,
        Item={
            "id": {"S": order_id},
            "quantity": {"N": "1"},
            "total_cents": {"N": "350"},
            "expires_at": {"N": str(int(time.time() + expires_in_days * DAY))},
        },
    )
    fifo = (
        {"MessageGroupId": order_id, "MessageDeduplicationId": order_id}
        if queues.dlq_url.endswith(".fifo")
        else {}
    )
    clients.client("sqs").send_message(
        QueueUrl=queues.dlq_url, MessageBody=json.dumps({"id": order_id, "quantity": 1}), **fifo
    )


def test_lifetime_of_a_copy_follows_the_queue_type():
    """A copy of a dead letter can arrive until its send plus the DLQ retention plus a jobs
    retention (standard); on FIFO the DLQ retention counts from the move, up to a jobs retention
    after the send, so one more jobs retention: 21 and 28 days with the stack's defaults."""
    standard = dlq.Lifetime(False, 7 * DAY, 14 * DAY)
    fifo = dlq.Lifetime(True, 7 * DAY, 14 * DAY)
    assert standard.arrives_until_ms(1_000) == 1_000 + 21 * DAY * 1000
    assert fifo.arrives_until_ms(1_000) == 1_000 + 28 * DAY * 1000


def test_on_fifo_a_stored_order_must_outlive_a_whole_jobs_retention_more(aws):
    """FIFO queues, jobs 7 days, DLQ 14: an order stored until 27 days from now is `lapsing` (a copy
    of its dead letter can still arrive 28 days from now, after DynamoDB may have deleted it), one
    stored until 29 days `stored`; the redrive sends back only the stored one, and the lapsing one
    may be discarded."""
    clients, queues = aws
    sqs = clients.client("sqs")
    retentions(sqs, queues)
    stored_dead_letter(clients, queues, "short", 27)
    stored_dead_letter(clients, queues, "long", 29)
    listed = {m["id"]: m for m in dlq.listing(clients, queues)["messages"]}
    assert (listed["short"]["class"], listed["long"]["class"]) == ("lapsing", "stored")
    assert "written again as a new order" in listed["short"]["reason"]
    report = dlq.redrive(clients, queues)
    assert report["counts"]["stored"]["moved"] == 1
    assert (report["counts"]["lapsing"]["found"], report["counts"]["lapsing"]["moved"]) == (1, 0)
    (moved,) = sqs.receive_message(QueueUrl=queues.jobs_url, MaxNumberOfMessages=10)["Messages"]
    assert json.loads(moved["Body"])["id"] == "long"
