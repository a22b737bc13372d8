"""Read-only views of a deployed consumer, for any endpoint boto3 can reach (the embedded AWS or a
real account): queue counters, the event source mapping, stored orders, the reference item, the
worker's log records (its lines about records, as its contract defines them; START lines
per execution) and the stack's outputs.

Every function takes a boto3 client and only reads, so the demo, the tests and the live view
share one definition of what "the state of the consumer" is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from functools import cache
from typing import Any

from guarded_consumer import contract
from stacks.lambda_code import load_worker

# The worker's lines (tags, payloads) as its contract defines them (lib/src/guarded_consumer/contract.py).


def plain_item(attributes: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB attribute map as the worker reads it: whole numbers as int, others as their
    decimal text (the worker's own conversion)."""
    item: dict[str, Any] = _worker().item_from_attributes(attributes)
    return item


@cache
def _worker() -> Any:
    return load_worker()


def queue_counters(sqs: Any, queue_url: str) -> dict[str, int]:
    """visible / in_flight / delayed, from the queue's approximate counters."""
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=[
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ],
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


def function_state(lambda_api: Any, function_name: str) -> dict[str, Any]:
    """The worker function's state and runtime (GetFunctionConfiguration), not its code."""
    found = lambda_api.get_function_configuration(FunctionName=function_name)
    return {"name": found["FunctionName"], "state": found.get("State"), "runtime": found.get("Runtime")}


def scan_items(dynamodb: Any, table: str, limit: int | None = None) -> list[dict[str, Any]]:
    """Every item of a table (or the first `limit` scanned), sorted by id; for lab-sized tables."""
    items: list[dict[str, Any]] = []
    paging = {"PaginationConfig": {"MaxItems": limit}} if limit else {}
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, **paging):
        items.extend(plain_item(item) for item in page["Items"])
    return sorted(items, key=lambda item: str(item.get("id")))


@dataclass(frozen=True)
class LogRecord:
    timestamp: int
    stream: str
    tag: str
    data: dict[str, Any]


def log_events(
    logs: Any,
    log_group: str,
    start_time: int | None = None,
    end_time: int | None = None,
    pattern: str | None = None,
) -> Iterator[dict[str, Any]]:
    """FilterLogEvents over the group, every page; `pattern` is a filter pattern."""
    kwargs: dict[str, Any] = {"logGroupName": log_group}
    if start_time is not None:
        kwargs["startTime"] = start_time
    if end_time is not None:
        kwargs["endTime"] = end_time
    if pattern is not None:
        kwargs["filterPattern"] = pattern
    for page in logs.get_paginator("filter_log_events").paginate(**kwargs):
        yield from page["events"]


_REPORT_FIELD = re.compile(r"^([A-Za-z ]+): ([0-9.]+) (?:ms|MB)$")


def report_fields(message: str) -> dict[str, float] | None:
    """The numeric fields of a Lambda REPORT line (`{"Billed Duration": 1201.0, "Memory Size":
    256.0, "Init Duration": 412.5, ...}`); None for any other line."""
    if not message.startswith("REPORT RequestId: "):
        return None
    fields = {}
    for part in message.split("\t")[1:]:
        found = _REPORT_FIELD.match(part.strip())
        if found:
            fields[found.group(1)] = float(found.group(2))
    return fields


def parse_record(event: dict[str, Any]) -> LogRecord | None:
    """A log event as the worker's line about a record; None for any other line."""
    parsed = contract.parse_line(event["message"])
    if parsed is None:
        return None
    tag, data = parsed
    return LogRecord(event["timestamp"], event.get("logStreamName", ""), tag, data)


def log_records(logs: Any, log_group: str, start_time: int | None = None) -> list[LogRecord]:
    """The worker's WRITE / RESULT / ERROR lines (and older workers' JOB lines), parsed, in time order."""
    records = [record for record in map(parse_record, log_events(logs, log_group, start_time)) if record]
    return sorted(records, key=lambda record: record.timestamp)


@dataclass(frozen=True)
class WorkerLog:
    records: list[LogRecord]
    executions: int


def worker_log(logs: Any, log_group: str, start_time: int | None = None) -> WorkerLog:
    """The parsed records and the number of executions, from one pass over the log group."""
    records, executions = [], 0
    for event in log_events(logs, log_group, start_time):
        if event["message"].startswith("START RequestId:"):
            executions += 1
        elif record := parse_record(event):
            records.append(record)
    return WorkerLog(sorted(records, key=lambda record: record.timestamp), executions)


def executions(logs: Any, log_group: str, start_time: int | None = None) -> int:
    """How many times the function ran: one START line per invocation."""
    return sum(
        1
        for event in log_events(logs, log_group, start_time)
        if event["message"].startswith("START RequestId:")
    )


def report_status(message: str) -> str | None:
    """The Status of a REPORT line (timeout, error): an invocation that did not return; None for
    one that did, and for any other line."""
    if not message.startswith("REPORT RequestId:") or "\tStatus: " not in message:
        return None
    return message.rsplit("Status: ", 1)[1].split()[0]


def abnormal_ends(logs: Any, log_group: str, start_time: int | None = None) -> Counter[str]:
    """Invocations that did not return, by the Status on their REPORT line (timeout, error)."""
    return Counter(
        status
        for event in log_events(logs, log_group, start_time)
        if (status := report_status(event["message"])) is not None
    )


def stack_outputs(cloudformation: Any, stack_name: str) -> dict[str, str]:
    """The stack's outputs as {OutputKey: OutputValue}."""
    stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    return {output["OutputKey"]: output["OutputValue"] for output in stack.get("Outputs", [])}


def find_queue_url(sqs: Any, queue_name: str) -> str:
    url: str = sqs.get_queue_url(QueueName=queue_name)["QueueUrl"]
    return url


def alarms(cloudwatch: Any, names: list[str]) -> list[dict[str, Any]]:
    """The consumer's metric alarms, by their exact names (a name prefix would also take in a
    deployment whose prefix extends this one): name, state, reason, when the state last changed
    and what the alarm means (its description)."""
    pages = cloudwatch.get_paginator("describe_alarms").paginate(AlarmNames=names, AlarmTypes=["MetricAlarm"])
    found = [_alarm_record(alarm) for page in pages for alarm in page["MetricAlarms"]]
    return sorted(found, key=lambda alarm: alarm["name"])


def alarms_notifying(cloudwatch: Any, topic_arn: str) -> list[dict[str, Any]]:
    """The metric alarms whose actions notify `topic_arn`: a consumer's, whatever their names
    (DescribeAlarms' ActionPrefix, then the exact ARN: a prefix would also take in a topic whose
    name extends this one's)."""
    pages = cloudwatch.get_paginator("describe_alarms").paginate(
        ActionPrefix=topic_arn, AlarmTypes=["MetricAlarm"]
    )
    found = [
        _alarm_record(alarm)
        for page in pages
        for alarm in page["MetricAlarms"]
        if topic_arn in alarm.get("AlarmActions", [])
    ]
    return sorted(found, key=lambda alarm: alarm["name"])


def _alarm_record(alarm: dict[str, Any]) -> dict[str, Any]:
    updated = alarm.get("StateUpdatedTimestamp")
    return {
        "name": alarm["AlarmName"],
        "state": alarm.get("StateValue"),
        "reason": alarm.get("StateReason", ""),
        "updated_ms": int(updated.timestamp() * 1000) if updated else None,
        "metric": alarm.get("MetricName"),
        "threshold": alarm.get("Threshold"),
        "description": alarm.get("AlarmDescription", ""),
    }


def metric_series(
    cloudwatch: Any,
    metrics: dict[str, tuple[str, str, dict[str, str], str]],
    start_ms: int,
    end_ms: int,
    period: int = 60,
) -> dict[str, list[list[float]]]:
    """`{key: [[time_ms, value], ...]}` oldest first, for `{key: (namespace, name, dimensions, statistic)}`."""
    from datetime import datetime

    queries = [
        {
            "Id": f"m{index}",
            "Label": key,
            "ReturnData": True,
            "MetricStat": {
                "Metric": {
                    "Namespace": namespace,
                    "MetricName": name,
                    "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
                },
                "Period": period,
                "Stat": statistic,
            },
        }
        for index, (key, (namespace, name, dimensions, statistic)) in enumerate(metrics.items())
    ]
    # CloudWatch rounds StartTime down to the minute anyway; starting on a period boundary keeps
    # each point on its own minute in every answer (and is what the API reference advises).
    start_ms = start_ms // (period * 1000) * period * 1000
    series: dict[str, list[list[float]]] = {key: [] for key in metrics}
    keys = {f"m{index}": key for index, key in enumerate(metrics)}
    for page in cloudwatch.get_paginator("get_metric_data").paginate(
        MetricDataQueries=queries,
        ScanBy="TimestampAscending",
        StartTime=datetime.fromtimestamp(start_ms / 1000, tz=UTC),
        EndTime=datetime.fromtimestamp(end_ms / 1000, tz=UTC),
    ):
        for result in page["MetricDataResults"]:
            series[keys[result["Id"]]] += [
                [int(t.timestamp() * 1000), float(v)] for t, v in zip(result["Timestamps"], result["Values"])
            ]
    return {key: sorted(points) for key, points in series.items()}
