"""The FIFO variant (`fifo=true`) on the local stack, at batch sizes 1 and 10 side by side: a
poison order in the middle of a message group holds back the later orders of its group until it
is in the dead-letter queue, other groups are written meanwhile, each group's orders are written
in the order they were sent, and `ops dlq redrive` sends the dead letters back into the FIFO
queue in their group's order. Two receives and short timeouts (tests only), so the poison reaches
the DLQ in about 25 s; both stacks wait out the same seconds."""

from __future__ import annotations

import json
import time
import uuid
from contextlib import ExitStack

import pytest

from local.session import wait_for
from ops import observe
from tests.e2e.operator import Operator
from tests.e2e.reliability import TWO_RECEIVES
from tests.shared_aws import FAST_TIMEOUTS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(60)]

PREFIXES = {1: "fifo-b1", 10: "fifo-b10"}
SETTLE = 120  # a deadline: two failed deliveries, 12 s apart, on a loaded machine
GROUP_A = [("a-1", 1), ("a-2", 2), ("a-3", 3)]  # a-2 is the poison: stored before with quantity 9
GROUP_B = [("b-1", 1), ("b-2", 2), ("b-3", 3)]


class FifoStack:
    """One deployed FIFO consumer, its clients and its operator."""

    def __init__(self, session) -> None:
        self.session = session
        self.env = session.user_env()
        self.sqs = session.client("sqs")
        self.dynamodb = session.client("dynamodb")
        self.logs = session.client("logs")
        self.operator = Operator.create(session)

    def send_group(self, group: str, orders: list[tuple[str, int]]) -> None:
        """One SendMessageBatch, in order, one message group, a deduplication id per send."""
        response = self.sqs.send_message_batch(
            QueueUrl=self.env["QUEUE_URL"],
            Entries=[
                {
                    "Id": str(i),
                    "MessageBody": json.dumps({"id": order_id, "quantity": quantity}),
                    "MessageGroupId": group,
                    "MessageDeduplicationId": uuid.uuid4().hex,
                }
                for i, (order_id, quantity) in enumerate(orders)
            ],
        )
        assert not response.get("Failed"), response["Failed"]

    def records(self, since: int) -> list[observe.LogRecord]:
        return observe.log_records(self.logs, self.env["LOG_GROUP"], since)

    def stored(self) -> dict[str, int]:
        return {
            item["id"]: item["quantity"]
            for item in observe.scan_items(self.dynamodb, self.env["ORDERS_TABLE"])
        }

    def drained(self) -> bool:
        counters = observe.queue_counters(self.sqs, self.env["QUEUE_URL"])
        return counters == {"visible": 0, "in_flight": 0, "delayed": 0}

    def dead(self) -> int:
        return observe.queue_counters(self.sqs, self.env["DLQ_URL"])["visible"]


def timeline(records: list[observe.LogRecord]) -> list[tuple[str, str]]:
    """(event, order id) in time order: `written` for an accepted write, `failed` for an ERROR."""
    events = []
    for record in records:
        if record.tag == "WRITE" and record.data["outcome"] == "Accepted":
            events.append(("written", record.data["id"]))
        elif record.tag == "ERROR":
            events.append(("failed", record.data.get("id", "?")))
    return events


@pytest.fixture(scope="module")
def stacks(shared_aws, tmp_path_factory):
    with ExitStack() as exits:
        deployed = {}
        for size, prefix in PREFIXES.items():
            context = {
                **FAST_TIMEOUTS,
                **TWO_RECEIVES,
                "fifo": "true",
                "prefix": prefix,
                "batch_size": str(size),
            }
            session = exits.enter_context(shared_aws.stack(context, tmp_path_factory.mktemp(prefix)))
            deployed[size] = FifoStack(session)
        yield deployed


@pytest.fixture(scope="module")
def poisoned(stacks):
    """Group a (a-1, poison a-2, a-3) sent; once the poison has failed, group b sent; then until
    the poison is in the DLQ and the jobs queue is empty. Each stack's log since the start."""
    since = int(time.time() * 1000) - 1000
    for stack in stacks.values():
        stack.dynamodb.put_item(
            TableName=stack.env["ORDERS_TABLE"],
            Item={"id": {"S": "a-2"}, "quantity": {"N": "9"}, "total_cents": {"N": "2350"}},
        )
        stack.send_group("a", GROUP_A)
    # Each stack gets group b as soon as its own poison has failed once: waiting for the stacks one
    # after the other sent the second stack's b late, on a loaded machine after its poison's last
    # receive (one visibility timeout after the first), and the test then saw b held back.
    waiting = dict(stacks)

    def send_b_where_the_poison_failed() -> bool:
        for size, stack in list(waiting.items()):
            if ("failed", "a-2") in timeline(stack.records(since)):
                stack.send_group("b", GROUP_B)
                del waiting[size]
        return not waiting

    wait_for(
        send_b_where_the_poison_failed,
        timeout=SETTLE,
        interval=0.3,
        what=lambda: f"the poison's first failure at batch size {sorted(waiting)}",
    )
    for stack in stacks.values():

        def poison_dead_and_drained(stack: FifoStack = stack) -> bool:
            return stack.dead() >= 1 and stack.drained()

        wait_for(
            poison_dead_and_drained,
            timeout=SETTLE,
            interval=0.5,
            what="the poison in the DLQ and the jobs queue empty",
        )
    return {size: timeline(stack.records(since)) for size, stack in stacks.items()}


@pytest.mark.parametrize("size", sorted(PREFIXES))
def test_a_poison_holds_back_only_its_own_group_and_each_group_is_written_in_order(stacks, poisoned, size):
    """Nothing of group a after the poison is written before the poison's last failure; group b,
    sent after the poison first failed, is written in order before that; the dead letters are the
    poison and (at batch size 10, where it shared the poison's batch) what followed it in its
    group, in group order; every other order is written."""
    events = poisoned[size]
    written = [order_id for event, order_id in events if event == "written"]
    last_poison_failure = max(i for i, event in enumerate(events) if event == ("failed", "a-2"))
    assert [o for o in written if o.startswith("b-")] == ["b-1", "b-2", "b-3"]
    assert events.index(("written", "b-3")) < last_poison_failure
    assert "a-3" not in [order_id for event, order_id in events[:last_poison_failure] if event == "written"]
    listing = stacks[size].operator.json("dlq", "list")
    # The listing is in send time order, and a-2 and a-3 went in one batch: the DLQ's own order
    # shows in the redrive's writes (the next test).
    dead = sorted(json.loads(m["body"])["id"] for m in listing["messages"])
    assert dead in (["a-2"], ["a-2", "a-3"])
    assert [o for o in written if o.startswith("a-")] == ["a-1"] + (["a-3"] if dead == ["a-2"] else [])
    if size == 1:  # one order per batch: a-3 came only after the poison left the queue
        assert dead == ["a-2"]


@pytest.mark.parametrize("size", sorted(PREFIXES))
def test_redrive_sends_the_dead_letters_back_into_the_fifo_queue_in_group_order(stacks, poisoned, size):
    """Once the conflicting stored a-2 is removed (the operator's decision), `ops dlq redrive`
    moves every dead letter back with its message group; the worker writes them in the order
    they were sent, and every order of both groups is stored with its own quantity."""
    stack = stacks[size]
    stack.dynamodb.delete_item(TableName=stack.env["ORDERS_TABLE"], Key={"id": {"S": "a-2"}})
    dead = sorted(json.loads(m["body"])["id"] for m in stack.operator.json("dlq", "list")["messages"])
    since = int(time.time() * 1000) - 1000
    redriven = stack.operator.json("dlq", "redrive")
    assert redriven["counts"]["pending"]["moved"] == len(dead) and redriven["failures"] == []
    wait_for(
        lambda: len(stack.stored()) == 6 and stack.drained(),
        timeout=SETTLE,
        interval=0.3,
        what="every order stored and the jobs queue empty",
    )
    assert [order_id for event, order_id in timeline(stack.records(since)) if event == "written"] == dead
    assert stack.stored() == dict(GROUP_A + GROUP_B)
    assert stack.dead() == 0
