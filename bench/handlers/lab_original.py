"""Stand-in for the lab's original handler: the same parse, conditional PutItem with ALL_OLD and
duplicate decision as lambda/worker/app.py, but a new DynamoDB client on every invocation and a
batch's records written one after another, as the lab wrote them.

The client's lifetime and the order of writes differ, so the comparison measures what creating
a client costs, and what writing a batch sequentially costs."""

from __future__ import annotations

import math
import os
from typing import Any

import boto3

from bench.handlers import load_worker

_worker = load_worker()


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    client = boto3.client("dynamodb")
    table = os.environ[_worker.TABLE_NAME_ENV]
    failures: list[dict[str, str]] = []
    for record in event.get("Records", []):
        if isinstance(_worker.attempt_record(record, client, table, lambda: math.inf), _worker.Failed):
            failures.append({"itemIdentifier": record.get("messageId", "")})
    return {"batchItemFailures": failures}
