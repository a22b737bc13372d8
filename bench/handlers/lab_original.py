"""Stand-in for the lab's original handler: the same parse, conditional PutItem with ALL_OLD and
duplicate decision as lambda/worker/app.py, but a new DynamoDB client on every invocation.

Only the client's lifetime differs, so the comparison measures what creating it costs."""

from __future__ import annotations

import os
from typing import Any

import boto3

from bench.handlers import load_worker

_worker = load_worker()


def handler(event: dict, context: Any) -> dict:
    client = boto3.client("dynamodb")
    return _worker.handle_event(event, client, os.environ[_worker.TABLE_NAME_ENV])
