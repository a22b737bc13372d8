"""The worker on a FIFO queue's batches (moto's DynamoDB): AWS's rule for partial batch responses
from FIFO queues, stop at the first failure and report it and every later record."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.unit.conftest import ORDERS_TABLE

TABLE = ORDERS_TABLE
FIFO_ARN = "arn:aws:sqs:us-east-1:123456789012:labex-q05-jobs.fifo"
STANDARD_ARN = "arn:aws:sqs:us-east-1:123456789012:labex-q05-jobs"


def fifo_record(body: str, group: str = "g") -> dict:
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": "AQEB-fifo",
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1", "MessageGroupId": group},
        "eventSource": "aws:sqs",
        "eventSourceARN": FIFO_ARN,
    }


def fifo_order(order_id: str, quantity: int, group: str = "g") -> dict:
    return fifo_record(json.dumps({"id": order_id, "quantity": quantity}), group)


def stored_ids(client) -> set[str]:
    return {item["id"]["S"] for item in client.scan(TableName=TABLE)["Items"]}


def failed(response: dict) -> list[str]:
    return [entry["itemIdentifier"] for entry in response["batchItemFailures"]]


@pytest.mark.parametrize("in_flight", [1, 2])
@pytest.mark.parametrize("poison", ["{}", json.dumps({"id": "a-1", "quantity": 9})])
def test_a_failure_mid_batch_reports_it_and_every_later_record_and_writes_nothing_after_it(
    worker, client, capsys, in_flight, poison
):
    """A malformed body or a conflicting order third in a FIFO batch of five: records 3-5 are
    reported (in order), only 1 and 2 are written, also with two writes in flight allowed."""
    worker.handle_event({"Records": [fifo_order("a-1", 1)]}, client, TABLE)
    capsys.readouterr()
    batch = [
        fifo_order("a-2", 2),
        fifo_order("b-1", 3, group="b"),
        fifo_record(poison),
        fifo_order("a-3", 4),
        fifo_order("b-2", 5, group="b"),
    ]
    response = worker.handle_event({"Records": batch}, client, TABLE, in_flight=in_flight)
    assert failed(response) == [r["messageId"] for r in batch[2:]]
    assert stored_ids(client) == {"a-1", "a-2", "b-1"}
    writes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("WRITE ")]
    conflict = [] if poison == "{}" else ["a-1"]
    assert [json.loads(line[6:])["id"] for line in writes] == ["a-2", "b-1", *conflict]


def test_a_duplicate_is_acknowledged_and_the_batch_goes_on(worker, client):
    """An order already stored, delivered again mid-batch, is not a failure: nothing is reported
    and the later orders are written."""
    worker.handle_event({"Records": [fifo_order("seen", 2)]}, client, TABLE)
    batch = [fifo_order("new-1", 1), fifo_order("seen", 2), fifo_order("new-2", 3)]
    assert worker.handle_event({"Records": batch}, client, TABLE) == {"batchItemFailures": []}
    assert stored_ids(client) == {"seen", "new-1", "new-2"}


def test_a_fifo_batch_is_written_one_record_after_another_even_with_a_whole_vcpu(worker, client, capsys):
    """With two writes in flight allowed, a FIFO batch's records still go strictly in order: each
    record's WRITE and RESULT lines come before the next record's WRITE."""
    batch = [fifo_order(f"o-{n}", 1) for n in range(6)]
    assert worker.handle_event({"Records": batch}, client, TABLE, in_flight=2) == {"batchItemFailures": []}
    tagged = [
        (line.split(" ", 1)[0], json.loads(line.split(" ", 1)[1])["id"])
        for line in capsys.readouterr().out.splitlines()
        if line.split(" ", 1)[0] in ("JOB", "WRITE", "RESULT")
    ]
    assert tagged == [(tag, f"o-{n}") for n in range(6) for tag in ("WRITE", "RESULT")]


def test_a_record_is_from_a_fifo_queue_by_its_arn_or_its_message_group(worker):
    """`.fifo` at the end of eventSourceARN, or a MessageGroupId attribute, marks a FIFO record."""
    assert worker.from_fifo_queue({"eventSourceARN": FIFO_ARN})
    assert worker.from_fifo_queue({"eventSourceARN": "", "attributes": {"MessageGroupId": "g"}})
    assert not worker.from_fifo_queue({"eventSourceARN": STANDARD_ARN, "attributes": {}})
    assert not worker.from_fifo_queue({})


def test_a_standard_batch_still_reports_only_its_failed_records(worker, client):
    """Without FIFO the rule is unchanged: the bad record alone is reported, the later ones written."""
    batch = [fifo_order("s-1", 1), fifo_record("{}"), fifo_order("s-2", 2)]
    for entry in batch:
        entry["eventSourceARN"] = STANDARD_ARN
        del entry["attributes"]["MessageGroupId"]
    response = worker.handle_event({"Records": batch}, client, TABLE)
    assert failed(response) == [batch[1]["messageId"]]
    assert stored_ids(client) == {"s-1", "s-2"}
