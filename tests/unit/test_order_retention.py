"""With `order_retention_days`, the worker's one conditional PutItem carries the order's expiry,
and a stored order with an expiry is still recognized as the same order."""

from __future__ import annotations

import json
import time

from tests.unit.conftest import ORDERS_TABLE

TABLE = ORDERS_TABLE
DAY = 86_400


def record(order_id: str, quantity: int) -> dict:
    return {
        "messageId": f"m-{order_id}-{quantity}",
        "body": json.dumps({"id": order_id, "quantity": quantity}),
    }


def stored(client, order_id: str) -> dict:
    item: dict = client.get_item(TableName=TABLE, Key={"id": {"S": order_id}}, ConsistentRead=True)["Item"]
    return item


class Counting:
    """A client that counts the calls it passes on."""

    def __init__(self, client) -> None:
        self.client = client
        self.calls: list[str] = []

    def __getattr__(self, name):
        self.calls.append(name)
        return getattr(self.client, name)


def test_order_item_carries_an_expiry_only_with_a_retention(worker):
    """The item is the order, plus `expires_at` = write time + retention when one is set."""
    job = worker.Job(id="o-1", quantity=2)
    assert worker.order_item(job, None, 1_000.9) == {"id": "o-1", "quantity": 2, "total_cents": 600}
    assert worker.order_item(job, 30 * DAY, 1_000.9) == {
        "id": "o-1",
        "quantity": 2,
        "total_cents": 600,
        "expires_at": 1_000 + 30 * DAY,
    }


def test_the_expiry_is_written_by_the_one_conditional_put(worker, client, monkeypatch):
    """ORDER_RETENTION_SECONDS set: a single conditional PutItem stores the order with its expiry."""
    monkeypatch.setenv(worker.ORDER_RETENTION_SECONDS_ENV, str(30 * DAY))
    counting = Counting(client)
    before = int(time.time())
    assert worker.handle_event({"Records": [record("o-1", 2)]}, counting, TABLE) == {"batchItemFailures": []}
    assert counting.calls == ["put_item"]
    expires_at = int(stored(client, "o-1")["expires_at"]["N"])
    assert before + 30 * DAY <= expires_at <= int(time.time()) + 30 * DAY


def test_a_later_copy_with_another_expiry_is_the_same_order(worker, client, monkeypatch, capsys):
    """A copy arriving later would carry a later expiry: it is acknowledged as a duplicate and the
    stored item, expiry included, is left as the first delivery wrote it."""
    monkeypatch.setenv(worker.ORDER_RETENTION_SECONDS_ENV, str(30 * DAY))
    worker.handle_event({"Records": [record("o-1", 2)]}, client, TABLE)
    first = stored(client, "o-1")
    monkeypatch.setenv(worker.ORDER_RETENTION_SECONDS_ENV, str(60 * DAY))
    capsys.readouterr()
    assert worker.handle_event({"Records": [record("o-1", 2)]}, client, TABLE) == {"batchItemFailures": []}
    assert stored(client, "o-1") == first
    result = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("RESULT "))
    assert json.loads(result[len("RESULT ") :])["duplicate"] is True


def test_an_order_stored_without_expiry_is_the_same_order_once_retention_is_on(worker, client, monkeypatch):
    """Turning the retention on later: orders stored before it (no expiry) still guard their ids."""
    worker.handle_event({"Records": [record("o-1", 2)]}, client, TABLE)
    monkeypatch.setenv(worker.ORDER_RETENTION_SECONDS_ENV, str(30 * DAY))
    assert worker.handle_event({"Records": [record("o-1", 2)]}, client, TABLE) == {"batchItemFailures": []}
    assert "expires_at" not in stored(client, "o-1")
    conflicting = record("o-1", 3)
    assert worker.handle_event({"Records": [conflicting]}, client, TABLE) == {
        "batchItemFailures": [{"itemIdentifier": conflicting["messageId"]}]
    }


def test_an_expired_order_not_yet_deleted_still_guards_its_id(worker, client, monkeypatch):
    """An order past its `expires_at` that DynamoDB has not deleted yet is still read and still
    fails the condition: the copy is a duplicate, so the guard lapses at or after the expiry, when
    the item is actually gone (moto never deletes it)."""
    client.put_item(
        TableName=TABLE,
        Item={
            "id": {"S": "o-1"},
            "quantity": {"N": "2"},
            "total_cents": {"N": "600"},
            "expires_at": {"N": "1"},
        },
    )
    monkeypatch.setenv(worker.ORDER_RETENTION_SECONDS_ENV, str(30 * DAY))
    assert worker.handle_event({"Records": [record("o-1", 2)]}, client, TABLE) == {"batchItemFailures": []}
    assert stored(client, "o-1")["expires_at"] == {"N": "1"}
