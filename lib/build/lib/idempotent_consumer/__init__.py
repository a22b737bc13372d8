"""An AWS CDK v2 construct for an SQS -> Lambda -> DynamoDB consumer in which one conditional write
per business key keeps the first result: IdempotentConsumer, made from ConsumerProps. The handler
side is the guarded_consumer package (no CDK), which the construct bundles with the team's code.

The construct's names load aws_cdk on first use, so the CDK-free modules (rules, alarms) stay
cheap to import for the operators' tools."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .consumer import WORKER_QUEUE_ACTIONS, WORKER_TABLE_ACTIONS, IdempotentConsumer
    from .props import ConsumerProps
    from .rules import ConsumerNames, PropsError

__version__ = "0.1.0"

_EXPORTS = {
    "IdempotentConsumer": "consumer",
    "WORKER_QUEUE_ACTIONS": "consumer",
    "WORKER_TABLE_ACTIONS": "consumer",
    "ConsumerProps": "props",
    "ConsumerNames": "rules",
    "PropsError": "rules",
}
__all__ = [
    "WORKER_QUEUE_ACTIONS",
    "WORKER_TABLE_ACTIONS",
    "ConsumerNames",
    "ConsumerProps",
    "IdempotentConsumer",
    "PropsError",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
