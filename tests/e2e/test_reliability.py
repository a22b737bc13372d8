"""The promise, measured: every order is written exactly once or kept in the dead-letter queue;
nothing lost, nothing written twice, nothing acknowledged that should not be.

Two stacks share one embedded AWS: batch size 1 and batch size 10, both with a 3 s function
timeout and an 18 s visibility timeout so that retries and redrives take seconds, not minutes.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections import Counter

import boto3
import pytest
from hypothesis import HealthCheck, given, settings

from local.session import ROOT, LocalSession, free_port, wait_for
from ops import observe
from tests.conftest import load_lambda
from tests.e2e.conftest import drained, pipeline, put_item_on, table
from tests.strategies import malformed_bodies, sqs_sendable

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FAST_RETRY = {"visibility_timeout_seconds": "18", "function_timeout_seconds": "3"}
MAX_RECEIVES = 5  # the stack's default maxReceiveCount
SETTLE_SECONDS = 600  # a deadline, not a wait: a loaded 2-core machine needs minutes for 5,000 deliveries


class Stack:
    """One deployed consumer and the clients to look at it."""

    def __init__(self, session: LocalSession) -> None:
        self.session = session
        self.env = session.user_env()
        self.sqs = session.client("sqs")
        self.dynamodb = session.client("dynamodb")
        self.logs = session.client("logs")

    def send(self, bodies: list[str]) -> None:
        """Send in batches of up to 10 and under 200 kB, in the given order."""
        batch: list[str] = []
        for body in [*bodies, None]:
            full = body is None or len(batch) == 10 or sum(map(len, batch)) + len(body) > 200_000
            if batch and full:
                response = self.sqs.send_message_batch(QueueUrl=self.env["QUEUE_URL"], Entries=[
                    {"Id": str(i), "MessageBody": text} for i, text in enumerate(batch)])
                assert not response.get("Failed"), response["Failed"]
                batch = []
            if body is not None:
                batch.append(body)

    def settled(self) -> bool:
        counters = observe.queue_counters(self.sqs, self.env["QUEUE_URL"])
        return counters == {"visible": 0, "in_flight": 0, "delayed": 0}

    def wait_settled(self) -> None:
        wait_for(self.settled, timeout=SETTLE_SECONDS, interval=0.5, what="the jobs queue to drain")

    def take_dead_letters(self) -> list[str]:
        """Every body in the DLQ, removed so the next test starts from an empty DLQ."""
        url, bodies = self.env["DLQ_URL"], []
        while True:
            messages = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=120).get("Messages", [])
            if not messages:
                return bodies
            bodies += [m["Body"] for m in messages]
            self.sqs.delete_message_batch(QueueUrl=url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)])

    def records(self, since: int, tag: str) -> list[observe.LogRecord]:
        return [r for r in observe.log_records(self.logs, self.env["LOG_GROUP"], since) if r.tag == tag]

    def assert_no_abnormal_ends(self, since: int) -> None:
        """Exact counts below assume every invocation returned; a timeout (a machine too loaded
        for the 3 s function timeout) is reported as such instead of as a count mismatch."""
        assert observe.abnormal_ends(self.logs, self.env["LOG_GROUP"], since) == Counter()

    def items(self, id_prefix: str) -> dict[str, dict]:
        return {item["id"]: item for item in observe.scan_items(self.dynamodb, self.env["ORDERS_TABLE"])
                if str(item["id"]).startswith(id_prefix)}


@pytest.fixture(scope="module")
def stacks(tmp_path_factory):
    state_dir = tmp_path_factory.mktemp("reliability")
    sessions = {size: LocalSession(state_dir, {**FAST_RETRY, "prefix": f"rel-b{size}", "batch_size": str(size)})
                for size in (1, 10)}
    sessions[1].start_emulator(free_port())
    try:
        deployed = {}
        for size, session in sessions.items():
            session.deploy()
            deployed[size] = Stack(session)
        yield deployed
    finally:
        try:
            for session in sessions.values():
                if session.outputs_path.exists():
                    session.destroy()
        finally:
            sessions[1].stop_emulator()


def now_ms() -> int:
    return int(time.time() * 1000) - 1000


def generated_bodies(count: int) -> list[str]:
    """`count` malformed bodies SQS can carry, the same ones on every run."""
    bodies: list[str] = []

    @settings(max_examples=count, database=None, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(body=malformed_bodies().filter(sqs_sendable))
    def collect(body: str) -> None:
        bodies.append(body)

    collect()
    return bodies


def test_malformed_bodies_end_in_the_dlq_intact(stacks, figure):
    """1,000 generated malformed bodies through the queue: none written, none acknowledged; each
    is delivered maxReceiveCount times and then sits in the DLQ byte-for-byte as sent."""
    stack, since = stacks[10], now_ms()
    assert stack.take_dead_letters() == []
    before = observe.scan_items(stack.dynamodb, stack.env["ORDERS_TABLE"])
    bodies = generated_bodies(1000)
    assert len(bodies) >= 1000
    stack.send(bodies)
    stack.wait_settled()
    stack.assert_no_abnormal_ends(since)
    dead = stack.take_dead_letters()
    assert Counter(dead) == Counter(bodies)
    assert observe.scan_items(stack.dynamodb, stack.env["ORDERS_TABLE"]) == before
    assert stack.records(since, "WRITE") == [] and stack.records(since, "RESULT") == []
    # Each message's ERROR lines carry its id and receive count: every one was delivered
    # exactly maxReceiveCount times (counted as distinct deliveries, so a log line the SDK
    # happened to send twice cannot inflate the figure).
    deliveries: dict[str, set[str]] = {}
    for error in stack.records(since, "ERROR"):
        deliveries.setdefault(error.data["message_id"], set()).add(error.data["receive_count"])
    assert len(deliveries) == len(bodies)
    assert all(counts == {str(n) for n in range(1, MAX_RECEIVES + 1)} for counts in deliveries.values())
    failures = sum(map(len, deliveries.values()))
    figure("bad input (through the queue)",
           f"{len(bodies)} malformed bodies: 0 written, 0 acknowledged, {failures} failed deliveries "
           f"({MAX_RECEIVES} each), {len(dead)}/{len(bodies)} in the DLQ byte-for-byte")


def test_concurrent_conditional_writes_accept_exactly_one(stacks, figure):
    """24 threads released together write the same order to the embedded DynamoDB with the
    worker's own write path: one Accepted, 23 acknowledged duplicates, the item unchanged."""
    stack, worker = stacks[10], load_lambda("worker")
    env, n = stack.env, 24
    clients = [boto3.client("dynamodb", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"],
                            aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])
               for _ in range(n)]
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
    assert stack.items("race-threads") == {"race-threads": {"id": "race-threads", "quantity": 3, "total_cents": 850}}
    figure("race (threads)", f"{n} simultaneous writes of one order: 1 accepted, {n - 1} duplicates, item unchanged")


def test_concurrent_identical_deliveries_write_once(stacks, figure):
    """32 copies of one order at batch size 1, polled by five concurrent pollers: one accepted
    write, 31 duplicates acknowledged, nothing in the DLQ, the item as first written."""
    stack, since, n = stacks[1], now_ms(), 32
    stack.send([json.dumps({"id": "race-queue", "quantity": 5})] * n)
    stack.wait_settled()
    writes = [r for r in stack.records(since, "WRITE") if r.data["id"] == "race-queue"]
    results = [r.data for r in stack.records(since, "RESULT") if r.data["id"] == "race-queue"]
    assert Counter(r.data["outcome"] for r in writes) == {"Accepted": 1, "ConditionalCheckFailed": n - 1}
    assert Counter(r["duplicate"] for r in results) == {False: 1, True: n - 1}
    assert stack.take_dead_letters() == []
    assert stack.items("race-queue") == {"race-queue": {"id": "race-queue", "quantity": 5, "total_cents": 1350}}
    sandboxes = len({r.stream for r in writes})
    assert sandboxes >= 2, "the copies were never processed concurrently"
    figure("race (queue)", f"{n} identical deliveries over {sandboxes} concurrent sandboxes: 1 accepted, "
                           f"{n - 1} acknowledged duplicates, 0 in the DLQ")


def test_concurrent_conflicting_copies_one_wins_rest_dead_lettered(stacks, figure):
    """Ten copies of one id with ten different quantities at once: exactly one is written; the
    other nine are never acknowledged and end in the DLQ; the stored item is the winner's."""
    stack, since = stacks[1], now_ms()
    bodies = [json.dumps({"id": "race-conflict", "quantity": q}) for q in range(1, 11)]
    stack.send(bodies)
    stack.wait_settled()
    accepted = [r.data for r in stack.records(since, "WRITE")
                if r.data["id"] == "race-conflict" and r.data["outcome"] == "Accepted"]
    assert len(accepted) == 1
    winner = accepted[0]["requested"]
    assert stack.items("race-conflict") == {"race-conflict": winner}
    dead = stack.take_dead_letters()
    assert Counter(dead) == Counter(b for b in bodies if json.loads(b)["quantity"] != winner["quantity"])
    results = [r.data for r in stack.records(since, "RESULT") if r.data["id"] == "race-conflict"]
    assert results == [{"id": "race-conflict", "quantity": winner["quantity"], "processed": True, "duplicate": False}]
    figure("race (conflicting copies)", f"10 copies, 10 quantities: 1 written (quantity {winner['quantity']}), "
                                        f"{len(dead)} in the DLQ, 0 acknowledged")


CRASH_AFTER_WRITE = '''
import os

import app


def handler(event, context):
    response = app.handler(event, context)
    marker = os.environ["CRASH_MARKER"]
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(137)  # the sandbox dies after the write, before the service can delete the message
    return response
'''


def test_crash_between_write_and_acknowledgement(stacks, figure, tmp_path):
    """The worker's process dies after PutItem succeeded and before the message is deleted: the
    redelivery is acknowledged as a duplicate and the stored item is unchanged."""
    session = stacks[1].session
    table_arn = table(session, "crash-orders")
    worker_source = (ROOT / "lambda" / "worker" / "app.py").read_text()
    p = pipeline(session, "crash-worker", source={"app.py": worker_source, "crash.py": CRASH_AFTER_WRITE},
                 handler="crash.handler", extra_statements=(put_item_on(table_arn),),
                 environment={"TABLE_NAME": "crash-orders", "CRASH_MARKER": str(tmp_path / f"crashed-{uuid.uuid4().hex}")})
    sqs, logs, dynamodb = session.client("sqs"), session.client("logs"), session.client("dynamodb")
    sqs.send_message(QueueUrl=p.queue_url, MessageBody='{"id": "crash-order", "quantity": 3}')
    wait_for(lambda: drained(session, p) and len(observe.log_records(logs, "/aws/lambda/crash-worker")) >= 5,
             timeout=60, what="the crashed order to be redelivered and acknowledged")
    records = observe.log_records(logs, "/aws/lambda/crash-worker")
    writes = [r.data for r in records if r.tag == "WRITE"]
    assert [(w["outcome"], w["decision"]) for w in writes] == [("Accepted", "written"), ("ConditionalCheckFailed", "duplicate")]
    assert [r.data["duplicate"] for r in records if r.tag == "RESULT"] == [False, True]
    assert observe.queue_counters(sqs, p.dlq_url)["visible"] == 0
    assert observe.scan_items(dynamodb, "crash-orders") == [{"id": "crash-order", "quantity": 3, "total_cents": 850}]
    exits = [e for e in observe.log_events(logs, "/aws/lambda/crash-worker") if "REPORT RequestId" in e["message"]]
    assert len(exits) == 2
    figure("crash between write and acknowledgement", "1 write, sandbox killed, 1 redelivery acknowledged as a duplicate, item unchanged")


def mixed_run(tag: str, seed: str) -> tuple[list[str], dict[str, set[str]]]:
    """About 1,100 messages: orders sent once or several times, some with a conflicting copy,
    and malformed bodies, shuffled. Returns the bodies and each id's distinct versions."""
    rng = random.Random(seed)
    bodies: list[str] = []
    versions: dict[str, set[str]] = {}
    for n in range(450):
        order_id = f"{tag}-{n}"
        quantity = rng.randint(1, 10)
        original = json.dumps({"id": order_id, "quantity": quantity})
        copies = [original] * (1 + rng.choice([0, 0, 1, 2]))
        if rng.random() < 0.2:
            copies.append(json.dumps({"id": order_id, "quantity": quantity % 10 + 1}))
        versions[order_id] = set(copies)
        bodies += copies
    bodies += generated_bodies(150)
    rng.shuffle(bodies)
    return bodies, versions


@pytest.mark.parametrize("batch_size", [1, 10])
def test_conservation_over_a_mixed_run(stacks, figure, batch_size):
    """Over 1,000 mixed messages in random order: sent = accepted + acknowledged duplicates + in
    the DLQ, each exactly as predicted from the version that won each id; the table holds one
    item per id, equal to a version sent for it; nothing is written twice."""
    stack, since, tag = stacks[batch_size], now_ms(), f"mix{batch_size}"
    bodies, versions = mixed_run(tag, f"conservation-{batch_size}")
    assert len(bodies) >= 1000
    stack.send(bodies)
    stack.wait_settled()
    stack.assert_no_abnormal_ends(since)

    stored = stack.items(f"{tag}-")
    assert sorted(stored) == sorted(versions)
    winners = {order_id: json.dumps({"id": order_id, "quantity": item["quantity"]}) for order_id, item in stored.items()}
    assert all(winners[order_id] in versions[order_id] for order_id in versions)
    assert all(item["total_cents"] == item["quantity"] * 250 + 100 for item in stored.values())
    acknowledged_expected = [b for b in bodies if b in winners.values()]
    dead_expected = [b for b in bodies if b not in winners.values()]

    dead = stack.take_dead_letters()
    accepted = [r for r in stack.records(since, "WRITE") if str(r.data["id"]).startswith(f"{tag}-") and r.data["outcome"] == "Accepted"]
    duplicates = [r for r in stack.records(since, "RESULT") if str(r.data["id"]).startswith(f"{tag}-") and r.data["duplicate"]]
    assert Counter(dead) == Counter(dead_expected)
    assert len(accepted) == len(versions)
    assert len(duplicates) == len(acknowledged_expected) - len(versions)
    assert len(bodies) == len(accepted) + len(duplicates) + len(dead)
    figure(f"conservation (batch size {batch_size})",
           f"sent {len(bodies)} = accepted {len(accepted)} + duplicates {len(duplicates)} + DLQ {len(dead)}; "
           f"table holds exactly the {len(versions)} expected items")
