"""The worker's guard and batch loop (lib/src/guarded_consumer/write_guard.py, sqs_batch.py) with a business
of another team: payments keyed on `payment_id`, parsed by a function of their own. Nothing of the
lab's orders is used, and the same guarantees hold: one write, a completed duplicate acknowledged,
other details for a stored key never acknowledged, a refused body reported as malformed."""

from __future__ import annotations

import importlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from tests.unit.conftest import mocked_aws

TABLE = "payments"


@pytest.fixture(scope="module")
def library(worker):
    """The three modules a team's handler would import (loaded beside the lab's worker)."""
    return (
        importlib.import_module("guarded_consumer.sqs_batch"),
        importlib.import_module("guarded_consumer.write_guard"),
        importlib.import_module("guarded_consumer.contract"),
    )


@dataclass(frozen=True)
class Payment:
    payment_id: str
    amount_cents: int

    @property
    def key(self) -> str:
        return self.payment_id

    def item(self) -> dict[str, Any]:
        return {"payment_id": self.payment_id, "amount_cents": self.amount_cents}

    def same_as(self, stored: Mapping[str, Any]) -> bool:
        return stored.get("payment_id") == self.payment_id and stored.get("amount_cents") == self.amount_cents

    def fields(self) -> dict[str, Any]:
        return {"id": self.payment_id, "amount_cents": self.amount_cents}


def parser(contract):
    def parse(body: Any) -> Payment:
        data = json.loads(body)
        if not isinstance(data.get("amount_cents"), int):
            raise contract.InvalidBody("amount_cents must be an integer", data.get("payment_id"))
        return Payment(data["payment_id"], data["amount_cents"])

    return parse


def record(payment: dict) -> dict:
    return {"messageId": str(uuid.uuid4()), "body": json.dumps(payment), "attributes": {}}


def lines(out: str, tag: str) -> list[dict]:
    return [json.loads(line[len(tag) + 1 :]) for line in out.splitlines() if line.startswith(f"{tag} ")]


def test_another_teams_records_are_guarded_on_their_own_key(library, capsys):
    """A payment, the same payment again, other details for it and a refused body, in one batch:
    one item stored, the copy acknowledged as a duplicate, the conflict and the refusal reported,
    each line naming the payment; the condition is on `payment_id`."""
    sqs_batch, guard, contract = library
    with mocked_aws():
        client = boto3.client("dynamodb")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "payment_id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "payment_id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        consumer = sqs_batch.Consumer(TABLE, parser(contract), key_attribute="payment_id")
        batch = [
            record({"payment_id": "p-1", "amount_cents": 500}),
            record({"payment_id": "p-1", "amount_cents": 500}),
            record({"payment_id": "p-1", "amount_cents": 900}),
            record({"payment_id": "p-2", "amount_cents": "lots"}),
        ]
        answer = sqs_batch.handle_event({"Records": batch}, client, consumer)
        stored = client.scan(TableName=TABLE)["Items"]
    assert answer == {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in batch[2:]]}
    assert stored == [{"payment_id": {"S": "p-1"}, "amount_cents": {"N": "500"}}]
    out = capsys.readouterr().out
    assert lines(out, "RESULT") == [
        {"amount_cents": 500, "duplicate": False, "id": "p-1", "processed": True},
        {"amount_cents": 500, "duplicate": True, "id": "p-1", "processed": False},
    ]
    errors = lines(out, "ERROR")
    assert [(e["error"], e["id"]) for e in errors] == [
        (contract.Failure.CONFLICT, "p-1"),
        (contract.Failure.MALFORMED, "p-2"),
    ]
    assert guard.condition("payment_id") == "attribute_not_exists(payment_id)"


def test_the_labs_orders_are_the_same_library_with_the_labs_key(library):
    """The lab's worker is this library with its own parser: its condition is the contract's."""
    _, guard, contract = library
    assert guard.condition(contract.ID_FIELD) == contract.CONDITION
