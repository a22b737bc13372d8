"""Recovering the dead-letter queue of the real stack with `python -m ops dlq`, run as an operator
holding only the stack's `<prefix>-operator` policy: a DLQ of 12 pending, 1 stored, 1 conflicting
and 1 malformed message (three of them failed through the worker with an injected DynamoDB fault,
the rest sent there directly) is classified, the 13 safe ones are redriven (12 written, 1
acknowledged as a duplicate), a second redrive moves nothing, the conflict is discarded with an
audit record whose delete was confirmed. (At volume, with SQS's own move task: test_dlq_bulk.py.)"""

from __future__ import annotations

import time

import pytest

from local.session import wait_for
from ops import observe
from tests.e2e.operator import Operator, order
from tests.e2e.reliability import TWO_RECEIVES
from tests.shared_aws import FAST_TIMEOUTS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(65)]

PREFIX = "recover"
SETTLE = 120  # a deadline: two failed deliveries, 12 s apart, on a loaded machine


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    with shared_aws.stack(
        {**FAST_TIMEOUTS, **TWO_RECEIVES, "prefix": PREFIX}, tmp_path_factory.mktemp(PREFIX)
    ) as session:
        yield session, session.user_env(), session.outputs()


@pytest.fixture(scope="module")
def operator(stack):
    return Operator.create(stack[0])


@pytest.fixture(scope="module")
def dead_letters(stack):
    """The DLQ of 15: what it holds, by class."""
    session, env, _outputs = stack
    sqs, dynamodb = session.client("sqs"), session.client("dynamodb")
    for order_id, quantity in (("rec-stored", 2), ("rec-conflict", 3)):
        dynamodb.put_item(
            TableName=env["ORDERS_TABLE"],
            Item={
                "id": {"S": order_id},
                "quantity": {"N": str(quantity)},
                "total_cents": {"N": str(quantity * 250 + 100)},
            },
        )
    # Through the worker: a DynamoDB outage fails two new orders on every delivery; the conflicting
    # copy fails as a conflict (or as the outage; either way it is judged again in the DLQ).
    session.inject_fault(
        action="PutItem", table=env["ORDERS_TABLE"], code="ServiceUnavailable", status=503, count=1000
    )
    through_worker = [order("rec-pending-0", 1), order("rec-pending-1", 2), order("rec-conflict", 4)]
    for body in through_worker:
        sqs.send_message(QueueUrl=env["QUEUE_URL"], MessageBody=body)
    direct = [order(f"rec-pending-{n}", 1 + n % 10) for n in range(2, 12)] + [
        order("rec-stored", 2),
        '{"id": "rec-bad"}',
    ]
    for body in direct:
        sqs.send_message(
            QueueUrl=env["DLQ_URL"],
            MessageBody=body,
            MessageAttributes={"origin": {"DataType": "String", "StringValue": "test"}},
        )
    wait_for(
        lambda: observe.queue_counters(sqs, env["DLQ_URL"])["visible"] == 15,
        timeout=SETTLE,
        interval=0.5,
        what="the three failed orders to reach the DLQ beside the twelve sent there",
    )
    session.inject_fault(
        action="PutItem", table=env["ORDERS_TABLE"], code="ServiceUnavailable", status=503, count=0
    )
    return {"pending": 12, "stored": 1, "lapsing": 0, "conflict": 1, "malformed": 1}


def results(session, env, since_ms: int) -> list[dict]:
    return [
        r.data
        for r in observe.log_records(session.client("logs"), env["LOG_GROUP"], since_ms)
        if r.tag == "RESULT"
    ]


def test_list_classifies_all_fifteen(stack, dead_letters, operator):
    listing = operator.json("dlq", "list")
    assert listing["counts"] == dead_letters
    assert len(listing["messages"]) == 15
    (conflict,) = [m for m in listing["messages"] if m["class"] == "conflict"]
    assert (conflict["requested"]["quantity"], conflict["stored"]["quantity"]) == (4, 3)
    (malformed,) = [m for m in listing["messages"] if m["class"] == "malformed"]
    assert malformed["reason"] == "missing field: quantity"
    text = operator.run("dlq", "list")
    assert text.returncode == 0 and text.stdout.splitlines()[0] == (
        f"{PREFIX}-jobs-dlq: 15 message(s): 12 pending, 1 stored, 1 conflict, 1 malformed"
    )


def test_redrive_writes_the_pending_acknowledges_the_stored_and_leaves_the_rest(
    stack, dead_letters, operator
):
    session, env, _ = stack
    since = int(time.time() * 1000) - 1000
    redriven = operator.json("dlq", "redrive")
    assert {kind: counts["moved"] for kind, counts in redriven["counts"].items()} == {
        "pending": 12,
        "stored": 1,
        "lapsing": 0,
        "conflict": 0,
        "malformed": 0,
    }
    assert redriven["failures"] == []
    pending = {f"rec-pending-{n}" for n in range(12)}

    def settled() -> bool:
        done = results(session, env, since)
        return {r["id"] for r in done if r["processed"]} >= pending and any(
            r["id"] == "rec-stored" for r in done if r["duplicate"]
        )

    # On what was settled, not on a count of lines: on a loaded machine SQS may deliver a redriven
    # message again (at least once), and its second RESULT is a duplicate, never a second write.
    wait_for(settled, timeout=SETTLE, what="the 12 pending written and rec-stored acknowledged")
    done = results(session, env, since)
    written = [r["id"] for r in done if r["processed"]]
    assert sorted(written) == sorted(pending)
    assert {r["id"] for r in done if r["duplicate"]} <= pending | {"rec-stored"}
    remaining = operator.json("dlq", "list")
    assert remaining["counts"] == {"pending": 0, "stored": 0, "lapsing": 0, "conflict": 1, "malformed": 1}
    again = operator.run("dlq", "redrive")
    assert again.returncode == 0 and again.stdout.startswith("moved 0 pending, 0 stored to the jobs queue")


def test_discard_removes_the_conflict_with_an_audit_record(stack, dead_letters, operator):
    listing = operator.json("dlq", "list")
    (conflict,) = [m for m in listing["messages"] if m["class"] == "conflict"]
    (malformed,) = [m for m in listing["messages"] if m["class"] == "malformed"]
    refused = operator.run("dlq", "discard", "--message-id", conflict["message_id"], "--reason", " ")
    assert (
        refused.returncode == 1
        and refused.stderr.strip() == "error: a discard needs --reason: why this message may go"
    )
    done = operator.run(
        "dlq", "discard", "--message-id", conflict["message_id"], "--reason", "customer confirmed quantity 3"
    )
    assert done.returncode == 0, done.stderr
    (record,) = [r for r in operator.json("dlq", "audit") if r["message_id"] == conflict["message_id"]]
    assert record["reason"] == "customer confirmed quantity 3" and record["class"] == "conflict"
    assert record["outcome"] == "discarded"  # the delete was confirmed, under the operator's policy
    assert record["who"].endswith(f":user/{PREFIX}-operator-user")
    assert record["body"] == order("rec-conflict", 4)
    assert [m["message_id"] for m in operator.json("dlq", "list")["messages"]] == [malformed["message_id"]]
