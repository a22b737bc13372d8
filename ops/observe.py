"""Read-only views of a deployed consumer, for any endpoint boto3 can reach (the embedded AWS or a
real account): queue counters, the event source mapping, stored orders, the reference item and
the worker's log records (JOB / WRITE / RESULT / ERROR lines, START lines per execution).

Every function takes a boto3 client and only reads, so the demo, the tests and the live view
share one definition of what "the state of the consumer" is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Iterator

from boto3.dynamodb.types import TypeDeserializer

RECORD_TAGS = ("JOB", "WRITE", "RESULT", "ERROR")
_DESERIALIZER = TypeDeserializer()


def plain_item(attributes: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB attribute map as plain JSON values (whole numbers as int)."""
    def plain(value: Any) -> Any:
        if isinstance(value, Decimal):
            return int(value) if value == value.to_integral_value() else float(value)
        return value

    return {key: plain(_DESERIALIZER.deserialize(value)) for key, value in attributes.items()}


def queue_counters(sqs: Any, queue_url: str) -> dict[str, int]:
    """visible / in_flight / delayed, from the queue's approximate counters."""
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                        "ApproximateNumberOfMessagesDelayed"],
    )["Attributes"]
    return {
        "visible": int(attributes.get("ApproximateNumberOfMessages", 0)),
        "in_flight": int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0)),
        "delayed": int(attributes.get("ApproximateNumberOfMessagesDelayed", 0)),
    }


def mappings(lambda_api: Any, function_name: str) -> list[dict[str, Any]]:
    """The function's event source mappings as source queue, function, batch size, state."""
    found = lambda_api.list_event_source_mappings(FunctionName=function_name)["EventSourceMappings"]
    return [
        {
            "uuid": mapping["UUID"],
            "source": mapping["EventSourceArn"].split(":")[-1],
            "source_arn": mapping["EventSourceArn"],
            "function": mapping["FunctionArn"].split(":")[-1],
            "batch_size": mapping.get("BatchSize"),
            "state": mapping.get("State"),
            "response_types": mapping.get("FunctionResponseTypes", []),
        }
        for mapping in found
    ]


def scan_items(dynamodb: Any, table: str) -> list[dict[str, Any]]:
    """Every item of a table, sorted by id (fine for a lab-sized table)."""
    items: list[dict[str, Any]] = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=table):
        items.extend(plain_item(item) for item in page["Items"])
    return sorted(items, key=lambda item: str(item.get("id")))


@dataclass(frozen=True)
class LogRecord:
    timestamp: int
    stream: str
    tag: str
    data: dict[str, Any]


def log_events(logs: Any, log_group: str, start_time: int | None = None) -> Iterator[dict[str, Any]]:
    kwargs: dict[str, Any] = {"logGroupName": log_group}
    if start_time is not None:
        kwargs["startTime"] = start_time
    for page in logs.get_paginator("filter_log_events").paginate(**kwargs):
        yield from page["events"]


def log_records(logs: Any, log_group: str, start_time: int | None = None) -> list[LogRecord]:
    """The worker's JOB / WRITE / RESULT / ERROR lines, parsed, in time order."""
    records = []
    for event in log_events(logs, log_group, start_time):
        tag, _, rest = event["message"].partition(" ")
        if tag in RECORD_TAGS:
            try:
                data = json.loads(rest)
            except ValueError:
                continue
            records.append(LogRecord(event["timestamp"], event.get("logStreamName", ""), tag, data))
    return sorted(records, key=lambda record: record.timestamp)


def executions(logs: Any, log_group: str, start_time: int | None = None) -> int:
    """How many times the function ran: one START line per invocation."""
    return sum(1 for event in log_events(logs, log_group, start_time) if event["message"].startswith("START RequestId:"))
