"""The dead-letter queue tools (ops/dlq/) against moto in-process: every message classified with
the worker's own rules, listed however many there are, the safe ones redriven and nothing else,
a discard only with a reason and an audit record. The real stack's version: tests/e2e/test_dlq_recovery.py."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from ops import dlq
from ops.dlq_cli import format_listing, format_redrive
from tests.unit.conftest import MotoClients, create_table, mocked_aws

ORDERS = "orders"
AUDIT = "dlq-audit"


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setattr(dlq.reading, "END_OF_QUEUE_WAIT_SECONDS", 0)  # moto's short poll sees every message
    with mocked_aws():
        clients = MotoClients()
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
    sent = clients.client("sqs").send_message(QueueUrl=queues.dlq_url, MessageBody=body, **extra)
    message_id: str = sent["MessageId"]
    return message_id


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
    assert result["counts"] == {"pending": 12, "stored": 1, "lapsing": 0, "conflict": 1, "malformed": 1}
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
        "lapsing": 0,
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
    assert part["reading"] == {"read": 10, "visible_after": 15, "in_flight_elsewhere": 0, "stopped": ""}
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
    seen: list[dict[str, Any]] = []
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


class FailingDeletes(MotoClients):
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


# --- holds, audit and bounds (issue 27) -----------------------------------------------------


class Clock:
    """A reader's clock that moves only when told (each receive, each extension)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Steered(MotoClients):
    """SQS whose calls move a fake clock and can fail chosen ChangeMessageVisibilityBatch
    entries, as a lapsed hold does; everything else is moto's."""

    def __init__(self, clock: Clock, per_receive: float = 0.0, per_extension: float = 0.0, lapse: int = 0):
        self.clock, self.per_receive, self.per_extension, self.lapse = (
            clock,
            per_receive,
            per_extension,
            lapse,
        )
        self.extended: list[int] = []

    def client(self, service):
        client = boto3.client(service)
        if service != "sqs":
            return client
        receive, change = client.receive_message, client.change_message_visibility_batch

        def receive_message(**kwargs):
            self.clock.now += self.per_receive
            return receive(**kwargs)

        def change_message_visibility_batch(QueueUrl, Entries):
            if Entries[0]["VisibilityTimeout"] == 0:  # a release
                return change(QueueUrl=QueueUrl, Entries=Entries)
            self.clock.now += self.per_extension
            self.extended.append(len(Entries))
            if self.lapse:
                # The hold ran out before this extension: the message is visible again and SQS
                # refuses the stale handle.
                self.lapse -= 1
                change(QueueUrl=QueueUrl, Entries=[{**entry, "VisibilityTimeout": 0} for entry in Entries])
                return {
                    "Successful": [],
                    "Failed": [
                        {
                            "Id": e["Id"],
                            "SenderFault": True,
                            "Code": "ReceiptHandleIsInvalid",
                            "Message": "expired",
                        }
                        for e in Entries
                    ],
                }
            return change(QueueUrl=QueueUrl, Entries=Entries)

        client.receive_message = receive_message
        client.change_message_visibility_batch = change_message_visibility_batch
        return client


def reader_with(clock: Clock, **options):
    return lambda sqs, url, hold: dlq.DeadLetterReader(sqs, url, hold, clock=clock, **options)


def test_holds_are_extended_in_batches_of_ten_and_a_lapsed_hold_is_not_counted_twice(aws):
    """25 malformed messages held past several hold periods: every extension carries at most ten
    entries; the first extension fails (the holds lapsed, the messages visible again), so they
    come round again: held again, reported as lapsed and seen again, never found twice."""
    clients, queues = aws
    for n in range(25):
        dead_letter(clients, queues, f"not json {n}")
    clock = Clock()
    steered = Steered(clock, per_receive=40, lapse=1)
    result = dlq.redrive(steered, queues, reader=reader_with(clock))
    assert result["counts"]["malformed"]["found"] == 25 and result["complete"] is True
    assert result["lapsed_holds"] == 10 and result["seen_again"] == 10
    assert steered.extended and max(steered.extended) <= 10
    assert result["extended_holds"] == sum(steered.extended) - 10  # every entry SQS took
    assert "10 hold(s) could not be extended and lapsed" in format_redrive(result)
    assert visible(clients, queues.dlq_url) == 25


def test_a_reader_stops_before_sqs_twelve_hour_visibility_limit(aws):
    """With a visibility limit of 700 s (SQS's is 12 hours) and a 600 s margin, a redrive that
    has held a message for 100 s stops, says why, releases what it held, and calls itself
    incomplete."""
    clients, queues = aws
    for n in range(45):
        dead_letter(clients, queues, f"not json {n}")
    clock = Clock()
    result = dlq.redrive(
        Steered(clock, per_receive=40), queues, reader=reader_with(clock, max_visibility_seconds=700)
    )
    assert result["complete"] is False
    assert "SQS keeps a message invisible at most" in result["stopped"] and "run again" in result["stopped"]
    assert 0 < result["counts"]["malformed"]["found"] < 45
    assert visible(clients, queues.dlq_url) == 45


def test_a_reader_stops_when_extensions_fall_behind_its_holds(aws):
    """Extensions that take more than a quarter of the hold stop the redrive with a clear line
    rather than letting holds lapse."""
    clients, queues = aws
    for n in range(25):
        dead_letter(clients, queues, f"not json {n}")
    clock = Clock()
    result = dlq.redrive(Steered(clock, per_receive=40, per_extension=20), queues, reader=reader_with(clock))
    assert result["complete"] is False and "more than a quarter of the 60 s hold" in result["stopped"]
    assert visible(clients, queues.dlq_url) == 25


def test_a_listing_stopped_by_slow_extensions_is_incomplete_and_says_why(aws):
    """The listing reads with the same reader: stopped early, it neither calls the queue done
    nor keeps the reason to itself."""
    clients, queues = aws
    for n in range(25):
        dead_letter(clients, queues, f"not json {n}")
    clock = Clock()
    result = dlq.listing(Steered(clock, per_receive=40, per_extension=20), queues, reader=reader_with(clock))
    assert result["complete"] is False
    assert "more than a quarter of the 60 s hold" in result["reading"]["stopped"]
    assert result["reading"]["stopped"] in format_listing("dlq", result)
    assert visible(clients, queues.dlq_url) == 25


def test_a_report_lists_a_bounded_sample_and_de_duplication_is_bounded(aws, monkeypatch):
    """LISTED moves are listed and the rest counted; the reader remembers at most RECENT_IDS ids
    of messages it let go."""
    clients, queues = aws
    monkeypatch.setattr(dlq.redriving, "LISTED", 5)
    monkeypatch.setattr(dlq.reading, "RECENT_IDS", 4)
    mixed_dlq(clients, queues)
    readers = []

    def remembering(sqs, url, hold):
        readers.append(dlq.DeadLetterReader(sqs, url, hold))
        return readers[-1]

    result = dlq.redrive(clients, queues, reader=remembering)
    assert len(result["moved"]) == 5 and result["moved_not_listed"] == 8
    assert result["counts"]["pending"]["moved"] + result["counts"]["stored"]["moved"] == 13
    assert len(readers[0].recent) == 4 and readers[0].held == {}


def test_a_dry_run_does_not_count_a_message_as_both_moved_and_left(aws):
    """`redrive --dry-run` text: the safe ones would move, only the others would be left."""
    clients, queues = aws
    mixed_dlq(clients, queues)
    text = format_redrive(dlq.redrive(clients, queues, dry_run=True))
    assert text.splitlines()[:2] == [
        "would move 12 pending, 1 stored to the jobs queue",
        "would leave in the DLQ: 1 conflict, 1 malformed",
    ]


def test_a_discard_says_not_found_only_when_the_end_was_reached(aws):
    """Reading past its cap, or stopped by an empty poll while SQS still counts visible
    messages, a discard says it did not find the message among those read; only at the end of
    the queue does it say the message is not there."""
    clients, queues = aws
    mixed_dlq(clients, queues)
    with pytest.raises(dlq.DlqError, match=r"not among the first 10 messages read .*run again later"):
        dlq.discard(clients, queues, "no-such-message", "gone", max_held=10)

    class EmptyPolls(MotoClients):
        def client(self, service):
            client = boto3.client(service)
            if service == "sqs":
                client.receive_message = lambda **kwargs: {}
            return client

    with pytest.raises(dlq.DlqError, match=r"end of the queue was not reached.*counts 15 visible"):
        dlq.discard(EmptyPolls(), queues, "no-such-message", "gone")
    with pytest.raises(
        dlq.DlqError, match=r"is not in the dead-letter queue \(15 messages read, the end reached\)"
    ):
        dlq.discard(clients, queues, "no-such-message", "gone")
    assert visible(clients, queues.dlq_url) == 15


def audit_lines(clients) -> list[str]:
    events = clients.client("logs").filter_log_events(logGroupName=AUDIT)["events"]
    return [event["message"].split(" ", 1)[0] for event in events]


def test_a_discard_records_its_request_then_its_confirmation(aws):
    """Intent and outcome are two records with one audit id, the confirmation after the delete."""
    clients, queues = aws
    ids = mixed_dlq(clients, queues)
    record = dlq.discard(clients, queues, ids["malformed"], "garbage from a test producer")
    assert audit_lines(clients) == ["DISCARD_REQUESTED", "DISCARD_CONFIRMED"]
    (logged,) = dlq.audit(clients, queues)
    assert logged["outcome"] == "discarded" and logged["audit_id"] == record["audit_id"]


def test_a_delete_answered_after_its_hold_could_end_is_not_confirmed(aws):
    """The delete succeeded, but only after the hold its handle carried could have run out
    (another reader may have received the message, and a stale handle's delete "might not"
    delete): the discard fails and the audit says requested, not confirmed, with why."""
    clients, queues = aws
    ids = mixed_dlq(clients, queues)
    clock = Clock()

    class SlowDelete(MotoClients):
        def client(self, service):
            client = boto3.client(service)
            if service == "sqs":
                delete = client.delete_message

                def delete_message(**kwargs):
                    clock.now += 61
                    return delete(**kwargs)

                client.delete_message = delete_message
            return client

    real = dlq.DeadLetterReader
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            dlq.discarding, "DeadLetterReader", lambda sqs, url, hold: real(sqs, url, hold, clock=clock)
        )
        with pytest.raises(dlq.DlqError, match="the delete is not confirmed"):
            dlq.discard(SlowDelete(), queues, ids["conflict"], "checked")
    (logged,) = dlq.audit(clients, queues)
    assert logged["outcome"].startswith("requested, not confirmed: the delete answered 61.0 s after")
    assert audit_lines(clients) == ["DISCARD_REQUESTED", "DISCARD_UNCONFIRMED"]


def test_a_confirmation_that_cannot_be_written_leaves_requested_not_confirmed(aws):
    """The delete was confirmed but the confirmation record cannot be written: the command says
    so and fails, and the audit claims no more than a request."""
    clients, queues = aws
    ids = mixed_dlq(clients, queues)

    class NoConfirmation(MotoClients):
        def client(self, service):
            client = boto3.client(service)
            if service == "logs":
                put = client.put_log_events

                def put_log_events(**kwargs):
                    if kwargs["logEvents"][0]["message"].startswith("DISCARD_CONFIRMED"):
                        raise RuntimeError("logs unavailable")
                    return put(**kwargs)

                client.put_log_events = put_log_events
            return client

    with pytest.raises(dlq.DlqError, match="was deleted, but the confirmation could not be recorded"):
        dlq.discard(NoConfirmation(), queues, ids["conflict"], "checked")
    assert [r["outcome"] for r in dlq.audit(clients, queues)] == ["requested, not confirmed"]
    assert visible(clients, queues.dlq_url) == 14


def test_older_audit_records_are_read_without_claiming_a_confirmation(aws):
    """`DISCARD` records of earlier versions (written before a delete they never confirmed) read
    as requested, not confirmed, or as failed when their `DISCARD_FAILED` record says so."""
    clients, queues = aws
    logs = clients.client("logs")
    for n in ("1", "2"):
        dlq.write_audit(logs, AUDIT, {"audit_id": n, "message_id": f"m{n}", "reason": "old"}, tag="DISCARD")
    dlq.write_audit(logs, AUDIT, {"audit_id": "2", "error": "expired"}, tag="DISCARD_FAILED")
    assert [r["outcome"] for r in dlq.audit(clients, queues)] == [
        "requested, not confirmed (recorded by an earlier version, which did not confirm deletes)",
        "delete failed: expired",
    ]


class Unprocessed:
    """BatchGetItem that leaves every key unprocessed `times` times, then answers."""

    def __init__(self, times: int) -> None:
        self.times, self.calls = times, 0

    def batch_get_item(self, RequestItems):
        self.calls += 1
        if self.calls <= self.times:
            return {"Responses": {}, "UnprocessedKeys": RequestItems}
        keys = RequestItems["orders"]["Keys"]
        return {
            "Responses": {
                "orders": [{"id": k["id"], "quantity": {"N": "1"}, "total_cents": {"N": "350"}} for k in keys]
            }
        }


def test_unprocessed_keys_are_retried_with_capped_exponential_backoff():
    """Each retry waits longer (jittered, 50-100% of 0.05 s doubling, capped at 2 s); keys still
    unprocessed after BATCH_GET_TRIES tries are one clear error."""
    pauses: list[float] = []
    found = dlq.stored_orders(Unprocessed(6), "orders", ["a", "b"], sleep=pauses.append)
    assert set(found) == {"a", "b"} and len(pauses) == 6
    ceilings = [min(dlq.BACKOFF_CAP_SECONDS, dlq.BACKOFF_SECONDS * 2**n) for n in range(1, 7)]
    assert all(c / 2 <= p <= c for p, c in zip(pauses, ceilings)) and ceilings[-1] == dlq.BACKOFF_CAP_SECONDS
    with pytest.raises(
        dlq.DlqError, match=r"DynamoDB left 2 order id\(s\) of orders unprocessed after 8 tries"
    ):
        dlq.stored_orders(Unprocessed(100), "orders", ["a", "b"], sleep=pauses.append)


def test_a_standard_dead_letter_is_stored_while_its_order_outlives_a_copy_of_it(aws):
    """Standard queues, jobs 7 days, DLQ 14: a copy can arrive up to 21 days after its send. An
    order stored until 20 days from now is `lapsing` and never redriven; until 22 days, `stored`
    (on FIFO queues that one would be lapsing: tests/unit/test_dlq_fifo.py). Discard takes the lapsing one."""
    from tests.unit.test_dlq_fifo import retentions, stored_dead_letter

    clients, queues = aws
    retentions(clients.client("sqs"), queues)
    stored_dead_letter(clients, queues, "short", 20)
    stored_dead_letter(clients, queues, "long", 22)
    result = dlq.listing(clients, queues)
    listed = {m["id"]: m for m in result["messages"]}
    assert (listed["short"]["class"], listed["long"]["class"]) == ("lapsing", "stored")
    assert result["counts"]["lapsing"] == 1
    assert "1 lapsing" in format_listing("jobs-dlq", result).splitlines()[0]
    assert dlq.redrive(clients, queues, dry_run=True)["counts"]["lapsing"] == {
        "found": 1,
        "moved": 0,
        "failed": 0,
    }
    assert dlq.discard(clients, queues, listed["short"]["message_id"], "its order is stored")["message_id"]
