"""Injected latency (embedded_aws/faults.py): each matching DynamoDB request waits the given time
before it is served, requests wait side by side as on a network, other operations and tables do
not wait, and clearing the rule ends it."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from ops.aws import Clients, Endpoint

WAIT_MS = 1000


@pytest.fixture
def table(emulator):
    dynamodb, name = emulator.client("dynamodb"), f"slow-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    yield name
    emulator.clear_faults(name)
    dynamodb.delete_table(TableName=name)


def timed(call) -> float:
    started = time.monotonic()
    call()
    return time.monotonic() - started


def test_a_slowed_operation_waits_side_by_side_and_stops_when_cleared(emulator, table):
    emulator.slow_down(action="PutItem", table=table, latency_ms=WAIT_MS)
    clients = [Clients(Endpoint.from_env(emulator.aws_env())).client("dynamodb") for _ in range(5)]

    def put(n: int) -> float:
        return timed(lambda: clients[n].put_item(TableName=table, Item={"id": {"S": f"o-{n}"}}))

    started = time.monotonic()
    with ThreadPoolExecutor(5) as pool:
        each = list(pool.map(put, range(5)))
    together = time.monotonic() - started
    assert min(each) >= WAIT_MS / 1000
    # One after another they would take five waits at the least: the bound is that floor, so it
    # tells the two apart with as much room for a loaded machine as the claim allows. (The 1 s
    # bounds below are the same: a request that waited took at least the wait.)
    assert together < 5 * WAIT_MS / 1000
    dynamodb = emulator.client("dynamodb")
    assert timed(lambda: dynamodb.get_item(TableName=table, Key={"id": {"S": "o-0"}})) < WAIT_MS / 1000
    assert [rule for rule in emulator.faults() if rule["table"] == table] == [
        {"action": "PutItem", "table": table, "latency_ms": WAIT_MS}
    ]
    assert emulator.clear_faults(table) == 1
    assert timed(lambda: dynamodb.put_item(TableName=table, Item={"id": {"S": "later"}})) < WAIT_MS / 1000
