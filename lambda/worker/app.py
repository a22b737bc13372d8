"""Idempotent order worker: SQS records in, one conditional DynamoDB PutItem per order.

The duplicate guard is the order item itself, keyed on the business `id` (a producer that
sends the same order twice gets a new SQS message id each time, so the message id cannot be
the key). The write is a single atomic `PutItem ... attribute_not_exists(id)`; a read before the
write would race with a concurrent delivery of the same order.

Three modules, one concern each, and this handler that joins them:
- order_rules.py: the lab's business rules (a valid body, the stored item, the same order);
- write_guard.py: the conditional write and what its answer means, with deadline-aware retries,
  for any record that is a write_guard.Guarded;
- sqs_batch.py: the records of a batch, their metrics and log lines, partial batch responses,
  for any sqs_batch.Consumer (a table, a parser, a key attribute).
Only order_rules.py and this module know the lab's orders; the other two are the library a
team's handler would use with its own parser.
Standard library and boto3 only: the Lambda Python runtime provides both. The names the stack
and `ops` share with it are in order_contract.py; log_lines.py prints.

The tools that judge messages as the worker does (`ops dlq`, the benches) load this module and
find the worker's public names here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

import sqs_batch
from log_lines import log
from order_contract import (
    ERROR_FIELD,
    METRICS_NAMESPACE_ENV,
    ORDER_RETENTION_SECONDS_ENV,
    TABLE_NAME_ENV,
    Metric,
    Tag,
)
from order_contract import METRICS_NAMESPACE as DEFAULT_METRICS_NAMESPACE
from order_rules import Job, JobError, parse_job, same_order
from sqs_batch import (
    ONE_VCPU_MEMORY_MB,
    Attempt,
    Consumer,
    Failed,
    Settled,
    from_fifo_queue,
    metrics_line,
    writes_in_flight,
)
from write_guard import (
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
from write_guard import stored_item as order_item


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


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    def remaining() -> float:
        return context.get_remaining_time_in_millis() / 1000 if context is not None else math.inf

    memory = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "")
    in_flight = writes_in_flight(int(memory) if memory.isdigit() else None)
    return handle_event(event, dynamodb_client(), os.environ[TABLE_NAME_ENV], remaining, in_flight)
