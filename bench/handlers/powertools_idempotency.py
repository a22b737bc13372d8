"""Powertools for AWS Lambda (Python) idempotency guarding the same business write as ours.

`idempotent_function` keyed on the order id, with the DynamoDB persistence layer in its own
table (IDEMPOTENCY_TABLE); inside it, the worker's own conditional PutItem and decision. A
duplicate is answered from the idempotency record with the first delivery's result.
"""

from __future__ import annotations

import os
from typing import Any

import boto3
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)

from bench.handlers import load_worker

IDEMPOTENCY_TABLE_ENV = "IDEMPOTENCY_TABLE"

_worker = load_worker()
_client = boto3.client("dynamodb")
_persistence = DynamoDBPersistenceLayer(table_name=os.environ[IDEMPOTENCY_TABLE_ENV])
_config = IdempotencyConfig(event_key_jmespath="id")


# Powertools' decorator is untyped; store_order keeps the signature written here.
@idempotent_function(data_keyword_argument="order", persistence_store=_persistence, config=_config)  # type: ignore[untyped-decorator]
def store_order(order: dict[str, Any]) -> dict[str, Any]:
    job = _worker.Job(id=order["id"], quantity=order["quantity"])
    result: dict[str, Any] = _worker.write_order(_client, os.environ[_worker.TABLE_NAME_ENV], job).result
    return result


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if context is not None:
        _config.register_lambda_context(context)
    failures = []
    for record in event.get("Records", []):
        try:
            job = _worker.parse_job(record.get("body"))
            result = store_order(order={"id": job.id, "quantity": job.quantity})
            _worker.log(_worker.Tag.RESULT, result)
        except Exception as error:  # noqa: BLE001 - reported, never acknowledged, as in ours
            _worker.log(
                _worker.Tag.ERROR,
                {_worker.ERROR_FIELD: type(error).__name__, "message_id": record.get("messageId")},
            )
            failures.append({"itemIdentifier": record.get("messageId", "")})
    return {"batchItemFailures": failures}
