"""The handlers compared, each importable on its own so a fresh process can measure its cold start.

- `ours`: lambda/worker/app.py as deployed (one client per process, one conditional PutItem).
- `lab`: bench/handlers/lab_original.py, the lab's original shape (a client per invocation).
- `powertools`: bench/handlers/powertools_idempotency.py, Powertools' idempotency guarding the
  same business write.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.handlers import load_worker

ROOT = Path(__file__).resolve().parent.parent

VARIANTS = ("ours", "lab", "powertools")
LABELS = {
    "bare": "bare conditional PutItem (reference)",
    "ours": "this handler",
    "lab": "lab original (client per call)",
    "powertools": "Powertools idempotency",
}


def handler_of(variant: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    handler: Callable[[dict[str, Any], Any], dict[str, Any]]
    if variant == "ours":
        handler = load_worker().handler
    elif variant == "lab":
        handler = importlib.import_module("bench.handlers.lab_original").handler
    elif variant == "powertools":
        handler = importlib.import_module("bench.handlers.powertools_idempotency").handler
    else:
        raise ValueError(f"unknown handler variant {variant!r}: use one of {', '.join(VARIANTS)}")
    return handler


class BenchContext:
    """The parts of Lambda's context object the handlers may read (Powertools asks for the
    remaining time to expire in-progress records)."""

    function_name = "bench-worker"
    function_version = "$LATEST"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench-worker"

    def __init__(self, timeout_ms: int = 5000) -> None:
        import time
        import uuid

        self.aws_request_id = str(uuid.uuid4())
        self._deadline = time.monotonic() + timeout_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        import time

        return max(0, int((self._deadline - time.monotonic()) * 1000))


def sqs_event(order_id: str, quantity: int = 3, message_id: str | None = None) -> dict[str, Any]:
    """A one-record SQS event as the Lambda service delivers it."""
    import json

    return {
        "Records": [
            {
                "messageId": message_id or f"msg-{order_id}",
                "receiptHandle": "bench",
                "body": json.dumps({"id": order_id, "quantity": quantity}),
                "attributes": {"ApproximateReceiveCount": "1"},
                "eventSource": "aws:sqs",
            }
        ]
    }
