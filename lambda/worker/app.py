"""Idempotent order worker: SQS records in, one conditional DynamoDB PutItem per order id.

The duplicate guard is the order item itself, keyed on the business `id` (a producer that
sends the same order twice gets a new SQS message id each time, so the message id cannot be
the key). The write is a single atomic `PutItem ... attribute_not_exists(id)`; a read before the
write would race with a concurrent delivery of the same order.

The worker is the handler library (guarded_consumer: the write guard, the batch loop, the lines
and metrics, bundled into the function's package by the construct) and the lab's business rules
(order_rules.py). Standard library and boto3 only: the Lambda Python runtime provides both.

The tools that judge messages as the worker does (`ops dlq`, the benches) load this module and
find the worker's public names here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import guarded_consumer
from guarded_consumer import sqs_batch
from guarded_consumer.contract import (
    ERROR_FIELD,
    ID_FIELD,
    METRICS_NAMESPACE_ENV,
    ORDER_RETENTION_SECONDS_ENV,
    TABLE_NAME_ENV,
    Metric,
    Tag,
)
from guarded_consumer.contract import METRICS_NAMESPACE as DEFAULT_METRICS_NAMESPACE
from guarded_consumer.log_lines import log
from guarded_consumer.sqs_batch import (
    ONE_VCPU_MEMORY_MB,
    Attempt,
    Consumer,
    Failed,
    Settled,
    from_fifo_queue,
    metrics_line,
    writes_in_flight,
)
from guarded_consumer.write_guard import (
    ATTEMPT_SECONDS,
    DEADLINE_MARGIN_SECONDS,
    ConflictingOrder,
    Outcome,
    OutOfTime,
    WriteFailed,
    decide,
    dynamodb_client,
    item_from_attributes,
    put_order,
    write_order,
)
from guarded_consumer.write_guard import stored_item as order_item
from order_rules import Job, JobError, parse_job, same_order


def orders(table_name: str) -> Consumer:
    """The lab's consumer: orders parsed by order_rules, guarded on `id` in `table_name`."""
    return Consumer(table_name, parse_job)


def handle_event(
    event: Mapping[str, Any],
    client: Any,
    table_name: str,
    remaining: Callable[[], float] = lambda: math.inf,
    in_flight: int = 1,
) -> dict[str, Any]:
    """sqs_batch.handle_event for the lab's orders in `table_name`."""
    return sqs_batch.handle_event(event, client, orders(table_name), remaining, in_flight)


def attempt_record(
    record: Mapping[str, Any], client: Any, table_name: str, remaining: Callable[[], float] = lambda: math.inf
) -> Attempt:
    """sqs_batch.attempt_record for one of the lab's orders."""
    return sqs_batch.attempt_record(record, client, orders(table_name), remaining)


# The Lambda handler: the library's, with the lab's parser, guarding `id`.
handler = guarded_consumer.GuardedHandler(parse_job, ID_FIELD)
