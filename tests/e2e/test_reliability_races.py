"""Races through the real stack: concurrent writes of one order, identical copies polled by
concurrent sandboxes, and a crash between the write and the acknowledgement. (Conflicting
copies, which wait out five deliveries each: test_reliability_conflicts.py.)"""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter

import pytest

from local.session import wait_for
from ops import observe
from stacks.lambda_code import load_lambda, package_files
from tests.e2e.conftest import WORKER_TIMEOUT, drained, pipeline, put_item_on, table
from tests.e2e.reliability import FIVE_POLLERS, deployed, now_ms
from tests.shared_aws import FAST_TIMEOUTS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(30)]


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    """Batch size 1: five pollers take one message each, so copies are processed concurrently."""
    with deployed(
        shared_aws, "relrace", 1, tmp_path_factory.mktemp("relrace"), {**FAST_TIMEOUTS, **FIVE_POLLERS}
    ) as deployed_stack:
        yield deployed_stack


def test_concurrent_conditional_writes_accept_exactly_one(stack, figure):
    """24 threads released together write the same order to the embedded DynamoDB with the
    worker's own write path: one Accepted, 23 acknowledged duplicates, the item unchanged."""
    worker = load_lambda("worker")
    env, n = stack.env, 24
    clients = [stack.session.new_client("dynamodb") for _ in range(n)]
    barrier, decisions, errors = threading.Barrier(n), [], []
    job = worker.Job("race-threads", 3)

    def deliver(client) -> None:
        try:
            barrier.wait(timeout=30)
            decisions.append(worker.write_order(client, env["ORDERS_TABLE"], job).decision)
        except Exception as error:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=deliver, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert Counter(decisions) == {"written": 1, "duplicate": n - 1}
    assert stack.items("race-threads") == {
        "race-threads": {"id": "race-threads", "quantity": 3, "total_cents": 850}
    }
    figure(
        "race (threads)",
        f"{n} simultaneous writes of one order: 1 accepted, {n - 1} duplicates, item unchanged",
    )


def test_concurrent_identical_deliveries_write_once(stack, figure):
    """32 copies of one order at batch size 1, polled by five concurrent pollers: one accepted
    write, 31 duplicates acknowledged, nothing in the DLQ, the item as first written."""
    since, n = now_ms(), 32
    stack.send([json.dumps({"id": "race-queue", "quantity": 5})] * n)
    stack.wait_settled()
    writes = [r for r in stack.records(since, "WRITE") if r.data["id"] == "race-queue"]
    results = [r.data for r in stack.records(since, "RESULT") if r.data["id"] == "race-queue"]
    outcomes = Counter(r.data["outcome"] for r in writes)
    # On a busy emulator the one write that goes in may be one whose reply timed out: its retry
    # (or the record's redelivery) is then rejected with the identical item, and no write reads
    # Accepted. Either way exactly one write went in, and only a timed-out attempt explains none.
    timed_out = [w for w in writes if w.data["decision"] == "duplicate" and w.data.get("retried_after")] + [
        r
        for r in stack.records(since, "ERROR")
        if r.data.get("error") == "ReadTimeoutError" and r.data.get("id") == "race-queue"
    ]
    assert outcomes["Accepted"] == 1 or (outcomes["Accepted"] == 0 and timed_out), outcomes
    assert set(outcomes) <= {"Accepted", "ConditionalCheckFailed"}
    assert len(results) == n
    first = outcomes["Accepted"]
    assert Counter(r["duplicate"] for r in results) == +Counter({False: first, True: n - first})
    assert stack.take_dead_letters() == []
    assert stack.items("race-queue") == {
        "race-queue": {"id": "race-queue", "quantity": 5, "total_cents": 1350}
    }
    sandboxes = len({r.stream for r in writes})
    assert sandboxes >= 2, "the copies were never processed concurrently"
    figure(
        "race (queue)",
        f"{n} identical deliveries over {sandboxes} concurrent sandboxes: {first} accepted"
        + (
            ""
            if first
            else f" (its one write went in on an attempt whose reply timed out; {len(timed_out)} timed out)"
        )
        + f", {n - first} acknowledged duplicates, 0 in the DLQ",
    )


CRASH_AFTER_WRITE = """
import os

import app


def handler(event, context):
    response = app.handler(event, context)
    marker = os.environ["CRASH_MARKER"]
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(137)  # the sandbox dies after the write, before the service can delete the message
    return response
"""


def test_crash_between_write_and_acknowledgement(stack, figure, tmp_path):
    """The worker's process dies after PutItem succeeded and before the message is deleted: the
    redelivery is acknowledged as a duplicate and the stored item is unchanged."""
    session = stack.session
    table_arn = table(session, "crash-orders")
    p = pipeline(
        session,
        "crash-worker",
        source={**package_files("worker"), "crash.py": CRASH_AFTER_WRITE},
        handler="crash.handler",
        extra_statements=(put_item_on(table_arn),),
        environment={
            "TABLE_NAME": "crash-orders",
            "CRASH_MARKER": str(tmp_path / f"crashed-{uuid.uuid4().hex}"),
        },
        # One second more than the worker's minimum, as in test_lambda_host.py: with 0.6 s of slack
        # a loaded machine's first delivery can fail OutOfTime before its write, and then the crash
        # does not come between a write and its acknowledgement, which is this test's scenario.
        timeout=WORKER_TIMEOUT + 1,
        visibility=WORKER_TIMEOUT + 2,
    )
    sqs, logs, dynamodb = session.client("sqs"), session.client("logs"), session.client("dynamodb")
    sqs.send_message(QueueUrl=p.queue_url, MessageBody='{"id": "crash-order", "quantity": 3}')
    wait_for(
        # each delivery's WRITE and RESULT
        lambda: drained(session, p) and len(observe.log_records(logs, "/aws/lambda/crash-worker")) >= 4,
        timeout=60,
        what="the crashed order to be redelivered and acknowledged",
    )
    records = observe.log_records(logs, "/aws/lambda/crash-worker")
    writes = [r.data for r in records if r.tag == "WRITE"]
    assert [(w["outcome"], w["decision"]) for w in writes] == [
        ("Accepted", "written"),
        ("ConditionalCheckFailed", "duplicate"),
    ]
    assert [r.data["duplicate"] for r in records if r.tag == "RESULT"] == [False, True]
    assert observe.queue_counters(sqs, p.dlq_url)["visible"] == 0
    assert observe.scan_items(dynamodb, "crash-orders") == [
        {"id": "crash-order", "quantity": 3, "total_cents": 850}
    ]
    exits = [
        e for e in observe.log_events(logs, "/aws/lambda/crash-worker") if "REPORT RequestId" in e["message"]
    ]
    assert len(exits) == 2
    figure(
        "crash between write and acknowledgement",
        "1 write, sandbox killed, 1 redelivery acknowledged as a duplicate, item unchanged",
    )
