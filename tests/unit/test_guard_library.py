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
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.unit.conftest import mocked_aws

ROOT = Path(__file__).resolve().parents[2]
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


def test_an_item_is_the_same_record_only_with_equal_compared_attributes_of_the_same_type():
    """Record compares its key and the `same` attributes, type-strictly (a stored true is not 1,
    DynamoDB's Decimal 5 is 5), and ignores what the first delivery computed."""
    from decimal import Decimal

    from guarded_consumer import Record

    record = Record({"payment_id": "p", "amount_cents": 5, "fee_cents": 1}, "payment_id", ("amount_cents",))
    assert record.same_as({"payment_id": "p", "amount_cents": Decimal(5), "fee_cents": Decimal(9)})
    assert not record.same_as({"payment_id": "p", "amount_cents": True})
    assert not record.same_as({"payment_id": "p", "amount_cents": Decimal(6)})
    assert not record.same_as({"payment_id": "q", "amount_cents": 5})
    assert record.fields() == {"id": "p", "amount_cents": 5}


@pytest.mark.parametrize(
    ("body", "message", "key"),
    [
        ("not json", "body is not valid JSON", None),
        ("[1]", "body must be a JSON object, got list", None),
        (
            '{"payment_id": "", "amount_cents": 5, "currency": "EUR"}',
            "payment_id must be a non-empty string",
            None,
        ),
        (
            '{"payment_id": "p", "amount_cents": true, "currency": "EUR"}',
            "amount_cents must be a positive integer",
            "p",
        ),
        (
            '{"payment_id": "p", "amount_cents": 5, "currency": "XYZ"}',
            "currency must be one of EUR, GBP, USD",
            "p",
        ),
    ],
)
def test_the_example_handler_refuses_a_bad_body_in_one_line_naming_it(body, message, key):
    from guarded_consumer import InvalidBody
    from stacks.lambda_code import load_handler

    handler = load_handler(ROOT / "examples" / "payments" / "payments").handler
    with pytest.raises(InvalidBody) as refused:
        handler.parse(body)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)
    assert refused.value.key == key


def test_a_handler_guarding_another_key_than_the_tables_refuses_to_start(monkeypatch):
    """The construct tells the function its table's key (KEY_ATTRIBUTE): a handler that guards
    another attribute fails at import, loudly, instead of failing every write."""
    from guarded_consumer import contract, guarded_handler, json_object

    monkeypatch.setenv(contract.KEY_ATTRIBUTE_ENV, "payment_id")
    with pytest.raises(ValueError, match="the table's key attribute is 'payment_id'"):
        guarded_handler(json_object, key="id", same=())
    assert guarded_handler(json_object, key="payment_id", same=()).key_attribute == "payment_id"
