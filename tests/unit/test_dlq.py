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
    assert logged == record and logged["outcome"] == "discarded"
    assert {logged["reason"], logged["stored"]["quantity"]} == {"customer confirmed quantity 3 is right", 3}


def test_the_listing_text_escapes_what_came_from_messages(aws):
    clients, queues = aws
    dead_letter(clients, queues, '{"id": "evil\\u001b[2J", "quantity": 1}')
    text = format_listing("jobs-dlq", dlq.listing(clients, queues))
    assert "\x1b" not in text and "evil\\x1b[2J" in text
    assert text.splitlines()[0] == "jobs-dlq: 1 message(s): 1 pending, 0 stored, 0 conflict, 0 malformed"


def test_a_listing_reads_at_most_its_limit_and_says_it_is_incomplete(aws):
    """25 messages, --limit 10: ten classified, marked incomplete, the rest counted by SQS; all
    visible again afterwards. With room for all 25 the listing is complete."""
    clients, queues = aws
    for n in range(25):
        dead_letter(clients, queues, json.dumps({"id": f"o-{n}", "quantity": 1}))
    part = dlq.listing(clients, queues, limit=10)
    assert len(part["messages"]) == 10 and part["counts"]["pending"] == 10 and part["complete"] is False
    assert part["reading"] == {"read": 10, "visible_after": 15, "in_flight_elsewhere": 0}
    assert format_listing("jobs-dlq", part).splitlines()[0] == (
        "jobs-dlq: the first 10 message(s) read: 10 pending, 0 stored, 0 conflict, 0 malformed; "
        "about 15 more visible (--limit reads more)"
    )
    assert visible(clients, queues.dlq_url) == 25
    assert dlq.listing(clients, queues, limit=25)["complete"] is True
    with pytest.raises(dlq.DlqError, match="--limit must be at least 1"):
        dlq.listing(clients, queues, limit=0)


def test_a_listing_tells_of_messages_another_reader_holds(aws):
    clients, queues = aws
    for n in range(5):
        dead_letter(clients, queues, json.dumps({"id": f"o-{n}", "quantity": 1}))
    clients.client("sqs").receive_message(
        QueueUrl=queues.dlq_url, MaxNumberOfMessages=2, VisibilityTimeout=60
    )
    result = dlq.listing(clients, queues)
    assert len(result["messages"]) == 3 and result["complete"] is False
    assert result["reading"]["in_flight_elsewhere"] == 2
    assert "2 more message(s) are held by another reader" in format_listing("jobs-dlq", result)
    redriven = dlq.redrive(clients, queues)
    assert redriven["in_flight_elsewhere"] == 2 and redriven["complete"] is False
    assert "2 more message(s) are held by another reader" in format_redrive(redriven)


def test_a_redrive_reports_each_move_and_its_progress(aws):
    clients, queues = aws
    ids = mixed_dlq(clients, queues)
    seen = []
    result = dlq.redrive(clients, queues, progress=seen.append)
    assert result["complete"] is True and result["stopped"] == ""
    assert len(result["moved"]) == 13 and {m["class"] for m in result["moved"]} == {"pending", "stored"}
    assert ids["conflict"] not in {m["message_id"] for m in result["moved"]}
    new_ids = {
        m["MessageId"]
        for m in clients.client("sqs").receive_message(
            QueueUrl=queues.jobs_url, MaxNumberOfMessages=10, VisibilityTimeout=0
        )["Messages"]
    }
    assert new_ids <= {m["new_message_id"] for m in result["moved"]}
    assert seen and seen[-1]["seen"] == 15 and seen[-1]["moved"] == 13 and seen[-1]["held"] == 2


def test_a_redrive_stops_when_it_would_hold_too_many_unsafe_messages(aws):
    clients, queues = aws
    for n in range(4):
        dead_letter(clients, queues, f"not json {n}")
    result = dlq.redrive(clients, queues, max_held=3)
    assert result["complete"] is False and "stopped after stepping past" in result["stopped"]
    assert visible(clients, queues.dlq_url) == 4


def test_send_batches_keep_to_ten_messages_and_one_mebibyte():
    letter = lambda body, **attributes: dlq.DeadLetter(
        "m", body, 1, None, {k: {"DataType": "String", "StringValue": v} for k, v in attributes.items()}, "h"
    )
    assert dlq.message_bytes(letter("é" * 10, origin="test")) == 20 + len("origin") + len("String") + 4
    assert [len(b) for b in dlq.send_batches([letter("x")] * 25)] == [10, 10, 5]
    half = "x" * (dlq.BATCH_BYTES // 2)
    assert [len(b) for b in dlq.send_batches([letter(half), letter(half), letter(half, a="b")])] == [2, 1]


class FailingDeletes(Clients):
    """SQS whose DeleteMessage fails (the receipt handle expired, a permission was revoked)."""

    def client(self, service):
        client = boto3.client(service)
        if service == "sqs":

            def delete_message(**kwargs):
                raise client.exceptions.ReceiptHandleIsInvalid(
                    {
                        "Error": {
                            "Code": "ReceiptHandleIsInvalid",
                            "Message": "The receipt handle has expired.",
                        }
                    },
                    "DeleteMessage",
                )

            client.delete_message = delete_message
        return client


def test_a_discard_whose_delete_fails_is_reported_and_audited_as_failed(aws):
    clients, queues = aws
    ids = mixed_dlq(clients, queues)
    with pytest.raises(dlq.DlqError, match=f"message {ids['conflict']} was not discarded: the delete failed"):
        dlq.discard(FailingDeletes(), queues, ids["conflict"], "checked with the customer")
    assert visible(clients, queues.dlq_url) == 15
    (attempt,) = dlq.audit(clients, queues)
    assert attempt["message_id"] == ids["conflict"] and attempt["outcome"].startswith("delete failed: ")
    record = dlq.discard(clients, queues, ids["conflict"], "checked with the customer")
    assert [r["outcome"] for r in dlq.audit(clients, queues)] == [attempt["outcome"], "discarded"]
    assert record["audit_id"] != attempt["audit_id"]


def test_a_class_that_may_not_be_redriven_is_refused_before_anything_is_read():
    """No AWS is reachable at the endpoint: the refusal comes from the argument, not a connection."""
    import os
    import subprocess
    import sys

    env = {
        **os.environ,
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "ops", "dlq", "redrive", "--class", "pending,conflict"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "argument --class: cannot redrive class conflict: only pending and stored messages are sent back; decide on "
            "the others with `ops dlq discard`"
        )
    )
