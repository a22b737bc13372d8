"""The dead-letter queue tools (ops/dlq.py) against moto in-process: every message classified with
the worker's own rules, listed however many there are, the safe ones redriven and nothing else,
a discard only with a reason and an audit record. The real stack's version: tests/e2e/test_dlq_recovery.py."""

from __future__ import annotations

import json

import boto3
import pytest

from ops import dlq
from ops.dlq_cli import format_listing, format_redrive
from tests.unit.conftest import create_table, mocked_aws

ORDERS = "orders"
AUDIT = "dlq-audit"


class Clients:
    def client(self, service):
        return boto3.client(service)


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setattr(dlq, "END_OF_QUEUE_WAIT_SECONDS", 0)  # moto's short poll sees every message
    with mocked_aws():
        clients = Clients()
        sqs = clients.client("sqs")
        queues = dlq.Queues(
            dlq_url=sqs.create_queue(QueueName="jobs-dlq")["QueueUrl"],
            jobs_url=sqs.create_queue(QueueName="jobs")["QueueUrl"],
            orders_table=ORDERS,
            audit_log_group=AUDIT,
        )
        create_table(clients.client("dynamodb"), ORDERS)
        clients.client("logs").create_log_group(logGroupName=AUDIT)
        yield clients, queues


def store(clients, order_id: str, quantity: int) -> None:
    clients.client("dynamodb").put_item(
        TableName=ORDERS,
        Item={
            "id": {"S": order_id},
            "quantity": {"N": str(quantity)},
            "total_cents": {"N": str(quantity * 250 + 100)},
        },
    )


def dead_letter(clients, queues, body: str, **attributes) -> str:
    extra = (
        {"MessageAttributes": {k: {"DataType": "String", "StringValue": v} for k, v in attributes.items()}}
        if attributes
        else {}
    )
    return clients.client("sqs").send_message(QueueUrl=queues.dlq_url, MessageBody=body, **extra)["MessageId"]


def visible(clients, url: str) -> int:
    attributes = clients.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def bodies(clients, url: str) -> list[str]:
    sqs, found = clients.client("sqs"), []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60).get(
        "Messages"
    ):
        found += [m["Body"] for m in messages]
    return sorted(found)


def mixed_dlq(clients, queues) -> dict[str, str]:
    """12 pending, 1 stored, 1 conflict, 1 malformed: the message id of each non-pending one."""
    store(clients, "stored-1", 2)
    store(clients, "conflict-1", 3)
    for n in range(12):
        dead_letter(clients, queues, json.dumps({"id": f"pending-{n}", "quantity": 1}), origin="test")
    return {
        "stored": dead_letter(clients, queues, json.dumps({"id": "stored-1", "quantity": 2})),
        "conflict": dead_letter(clients, queues, json.dumps({"id": "conflict-1", "quantity": 4})),
        "malformed": dead_letter(clients, queues, '{"id": "x", "quantity": "many"}'),
    }


def test_every_message_is_classified_with_the_workers_rules(aws):
    clients, queues = aws
    ids = mixed_dlq(clients, queues)
    result = dlq.listing(clients, queues)
    assert result["counts"] == {"pending": 12, "stored": 1, "conflict": 1, "malformed": 1}
    by_id = {m["message_id"]: m for m in result["messages"]}
    conflict = by_id[ids["conflict"]]
    assert conflict["stored"] == {"id": "conflict-1", "quantity": 3, "total_cents": 850}
    assert conflict["requested"] == {"id": "conflict-1", "quantity": 4, "total_cents": 1100}
    assert "already stored with different details" in conflict["reason"]
    assert by_id[ids["malformed"]]["reason"] == "quantity must be an integer, got str 'many'"
    assert by_id[ids["stored"]]["class"] == "stored"
    assert all(set(m) >= {"message_id", "class", "body", "reason"} for m in result["messages"])
    assert "receipt" not in json.dumps(result).lower()
    assert visible(clients, queues.dlq_url) == 15  # listing released everything


def test_a_listing_sees_every_message_past_the_first_ten(aws):
    """25 messages: all listed, each once, and all visible again afterwards."""
    clients, queues = aws
    sent = {dead_letter(clients, queues, json.dumps({"id": f"o-{n}", "quantity": 1})) for n in range(25)}
    result = dlq.listing(clients, queues)
    assert {m["message_id"] for m in result["messages"]} == sent
    assert all(m["receive_count"] == 1 for m in result["messages"])
    assert visible(clients, queues.dlq_url) == 25


def test_redrive_moves_the_safe_messages_and_nothing_else_and_is_safe_to_repeat(aws):
    clients, queues = aws
    ids = mixed_dlq(clients, queues)
    result = dlq.redrive(clients, queues)
    assert {kind: c["moved"] for kind, c in result["counts"].items()} == {
        "pending": 12,
        "stored": 1,
        "conflict": 0,
        "malformed": 0,
    }
    assert result["failures"] == []
    remaining = dlq.listing(clients, queues)
    assert sorted(m["message_id"] for m in remaining["messages"]) == sorted(
        [ids["conflict"], ids["malformed"]]
    )
    jobs = clients.client("sqs").receive_message(
        QueueUrl=queues.jobs_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    )["Messages"]
    assert all(
        m["MessageAttributes"]["origin"]["StringValue"] == "test" for m in jobs if "pending" in m["Body"]
    )
    again = dlq.redrive(clients, queues)
    assert sum(c["moved"] for c in again["counts"].values()) == 0
    assert visible(clients, queues.dlq_url) == 2
    assert "moved 0 pending, 0 stored" in format_redrive(
        again
    ) and "1 conflict, 1 malformed" in format_redrive(again)


def test_dry_run_and_a_chosen_class(aws):
    clients, queues = aws
    mixed_dlq(clients, queues)
    dry = dlq.redrive(clients, queues, dry_run=True)
    assert dry["counts"]["pending"] == {"found": 12, "moved": 0, "failed": 0}
    assert visible(clients, queues.dlq_url) == 15 and visible(clients, queues.jobs_url) == 0
    only_stored = dlq.redrive(clients, queues, ["stored"])
    assert only_stored["counts"]["stored"]["moved"] == 1 and only_stored["counts"]["pending"]["moved"] == 0
    assert bodies(clients, queues.jobs_url) == ['{"id": "stored-1", "quantity": 2}']


@pytest.mark.parametrize("classes", ["conflict", "pending,malformed", ""])
def test_conflicts_and_malformed_bodies_are_never_redriven(classes):
    with pytest.raises(dlq.DlqError, match="only pending and stored messages are sent back"):
        dlq.parse_classes(classes or ",")


def test_a_failed_send_loses_nothing(aws):
    """The jobs queue is gone: the redrive fails, and every message is still in the DLQ."""
    clients, queues = aws
    mixed_dlq(clients, queues)
    clients.client("sqs").delete_queue(QueueUrl=queues.jobs_url)
    with pytest.raises(Exception, match="NonExistentQueue|QueueDoesNotExist"):
        dlq.redrive(clients, queues)
    assert visible(clients, queues.dlq_url) == 15


def test_discard_needs_a_reason_and_a_decided_class_and_leaves_an_audit_record(aws):
    clients, queues = aws
    ids = mixed_dlq(clients, queues)
    pending_id = dlq.listing(clients, queues)["messages"][0]["message_id"]
    with pytest.raises(dlq.DlqError, match="needs --reason"):
        dlq.discard(clients, queues, ids["conflict"], "  ")
    with pytest.raises(dlq.DlqError, match="is pending .* redrive it"):
        dlq.discard(clients, queues, pending_id, "by mistake")
    with pytest.raises(dlq.DlqError, match="is not in the dead-letter queue"):
        dlq.discard(clients, queues, "no-such-message", "gone")
    assert visible(clients, queues.dlq_url) == 15

    record = dlq.discard(clients, queues, ids["conflict"], "customer confirmed quantity 3 is right")
    assert record["class"] == "conflict" and record["who"].startswith("arn:aws:")
    assert record["body"] == '{"id": "conflict-1", "quantity": 4}'
    assert visible(clients, queues.dlq_url) == 14
    (logged,) = dlq.audit(clients, queues)
    assert logged == record
    assert {logged["reason"], logged["stored"]["quantity"]} == {"customer confirmed quantity 3 is right", 3}


def test_the_listing_text_escapes_what_came_from_messages(aws):
    clients, queues = aws
    dead_letter(clients, queues, '{"id": "evil\\u001b[2J", "quantity": 1}')
    text = format_listing("jobs-dlq", dlq.listing(clients, queues))
    assert "\x1b" not in text and "evil\\x1b[2J" in text
    assert text.splitlines()[0] == "jobs-dlq: 1 message(s): 1 pending, 0 stored, 0 conflict, 0 malformed"
