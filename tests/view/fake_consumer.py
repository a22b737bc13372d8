"""A deployed consumer's traces made directly in moto (no CDK, no Lambda host): the stack's
outputs, queues, tables, a mapping and the worker's log lines, for the snapshot tests and the
page's layout tests."""

from __future__ import annotations

import io
import json
import time
import zipfile
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from idempotent_consumer.alarms import resolved
from ops.aws import Clients
from stacks.config import StackConfig

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch.literals import StateValueType
    from mypy_boto3_cloudwatch.type_defs import DimensionTypeDef, MetricDatumTypeDef

PREFIX = "view-test"
REGION = "us-east-1"
TEMPLATE: dict[str, dict[str, dict[str, Any]]] = {
    "Resources": {
        "Jobs": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{PREFIX}-jobs"}},
        "DeadLetters": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{PREFIX}-jobs-dlq"}},
    },
    "Outputs": {
        "QueueUrl": {"Value": {"Ref": "Jobs"}},
        "DeadLetterQueueUrl": {"Value": {"Ref": "DeadLetters"}},
        "OrdersTableName": {"Value": f"{PREFIX}-orders"},
        "ReferenceTableName": {"Value": f"{PREFIX}-reference"},
        "FunctionName": {"Value": f"{PREFIX}-worker"},
        "LogGroupName": {"Value": f"/aws/lambda/{PREFIX}-worker"},
    },
}
ITEM = {"id": "dedup-order", "quantity": 4, "total_cents": 1100}


def write_line(decision: str, previous: dict | None, requested: dict = ITEM) -> str:
    outcome = "Accepted" if previous is None else "ConditionalCheckFailed"
    return "WRITE " + json.dumps(
        {
            "decision": decision,
            "id": requested["id"],
            "outcome": outcome,
            "requested": requested,
            **({"previous": previous} if previous is not None else {}),
        },
        sort_keys=True,
    )


def job_line(item: dict, message_id: str) -> str:
    return "JOB " + json.dumps({**item, "message_id": message_id}, sort_keys=True)


def error_line(error: str, message: str, message_id: str, receive_count: int) -> str:
    return "ERROR " + json.dumps(
        {"error": error, "message": message, "message_id": message_id, "receive_count": str(receive_count)},
        sort_keys=True,
    )


CONFLICTING = {"id": "dedup-order", "quantity": 5, "total_cents": 1350}
# What the worker logs for: an accepted write (m1), a malformed body (m3) delivered twice around
# a duplicate (m2), and a conflict (m4); one stream, so the order of the lines is the log's.
WORKER_LINES = [
    "START RequestId: 1 Version: $LATEST",
    job_line(ITEM, "m1"),
    write_line("written", None),
    'RESULT {"duplicate": false, "id": "dedup-order", "processed": true, "quantity": 4}',
    "START RequestId: 2 Version: $LATEST",
    error_line("JobError", "missing field: quantity", "m3", 1),
    "START RequestId: 3 Version: $LATEST",
    job_line(ITEM, "m2"),
    write_line("duplicate", ITEM),
    'RESULT {"duplicate": true, "id": "dedup-order", "processed": false, "quantity": 4}',
    "START RequestId: 4 Version: $LATEST",
    error_line("JobError", "missing field: quantity", "m3", 2),
    "START RequestId: 5 Version: $LATEST",
    job_line(CONFLICTING, "m4"),
    write_line("conflict", ITEM, CONFLICTING),
    error_line("ConflictingOrder", "order 'dedup-order' already stored with different details", "m4", 1),
    "not a record line",
]


def create_resources(clients: Clients, mapping: bool = True) -> dict[str, str]:
    """Queues, tables, worker log lines and (optionally) a mapping like a deployed stack has."""
    sqs, dynamodb, logs = clients.client("sqs"), clients.client("dynamodb"), clients.client("logs")
    urls = {name: sqs.create_queue(QueueName=f"{PREFIX}-{name}")["QueueUrl"] for name in ("jobs", "jobs-dlq")}
    for table in ("orders", "reference"):
        dynamodb.create_table(
            TableName=f"{PREFIX}-{table}",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        )
    dynamodb.put_item(
        TableName=f"{PREFIX}-orders",
        Item={"id": {"S": "dedup-order"}, "quantity": {"N": "4"}, "total_cents": {"N": "1100"}},
    )
    dynamodb.put_item(
        TableName=f"{PREFIX}-reference", Item={"id": {"S": "reference"}, "note": {"S": "keep unchanged"}}
    )
    for body in ('{"id":"a","quantity":1}', '{"id":"b","quantity":2}'):
        sqs.send_message(QueueUrl=urls["jobs"], MessageBody=body)
    sqs.send_message(QueueUrl=urls["jobs"], MessageBody='{"id":"c","quantity":3}', DelaySeconds=60)
    sqs.send_message(QueueUrl=urls["jobs-dlq"], MessageBody='{"id":"dedup-order","quantity":5}')
    if mapping:
        create_mapping(clients, urls["jobs"])
    group = f"/aws/lambda/{PREFIX}-worker"
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s1")
    now = int(time.time() * 1000)
    logs.put_log_events(
        logGroupName=group,
        logStreamName="s1",
        logEvents=[{"timestamp": now + index, "message": line} for index, line in enumerate(WORKER_LINES)],
    )
    return urls


def create_mapping(clients: Clients, jobs_url: str) -> None:
    """The worker function and its mapping. Send nothing to the jobs queue afterwards: moto would
    try to run the function through Docker on each send."""
    # Clients types only the product's services; moto needs an IAM role for the function.
    iam: Any = clients.client("iam")  # type: ignore[call-overload]
    role = iam.create_role(RoleName="worker-role", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return {}\n")
    lambda_api = clients.client("lambda")
    lambda_api.create_function(
        FunctionName=f"{PREFIX}-worker",
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": code.getvalue()},
    )
    queue_arn = clients.client("sqs").get_queue_attributes(QueueUrl=jobs_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn, FunctionName=f"{PREFIX}-worker", BatchSize=1
    )


def deploy_stack(clients: Clients) -> None:
    clients.client("cloudformation").create_stack(
        StackName=f"{PREFIX}-consumer", TemplateBody=json.dumps(TEMPLATE)
    )


# The consumer's alarms as the layout tests show them: what each watches, and states with
# CloudWatch's own wording of their reasons. Descriptions come from the alarm table
# (lib/src/idempotent_consumer/alarms.py) with the default context, as the stack makes them; an alarm added there
# without a state here fails at import.
_STATES = {
    "conflicting-orders": (
        "Conflict",
        "ALARM",
        (
            "Threshold Crossed: 1 datapoint [1.0 (01/12/26 08:41:00)] was greater than or equal to "
            "the threshold (1.0)."
        ),
    ),
    "failed-records": (
        "Error",
        "ALARM",
        (
            "Threshold Crossed: 1 datapoint [1.0 (01/12/26 08:42:00)] was greater than or equal to "
            "the threshold (1.0)."
        ),
    ),
    "malformed-jobs": (
        "Malformed",
        "ALARM",
        (
            "Threshold Crossed: 1 datapoint [2.0 (01/12/26 08:41:00)] was greater than or equal to "
            "the threshold (1.0)."
        ),
    ),
    "new-dead-letters": (
        "ApproximateNumberOfMessagesVisible",
        "OK",
        (
            "Threshold Crossed: 1 datapoint [0.0 (01/12/26 08:44:00)] was "
            "not greater than or equal to the threshold (1.0)."
        ),
    ),
    "dead-letter-expiry": (
        "ApproximateNumberOfMessagesVisible",
        "OK",
        (
            "Threshold Crossed: 118 out of the last 118 datapoints were not greater than or equal to "
            "the threshold (1.0)."
        ),
    ),
    "dead-letters": (
        "ApproximateNumberOfMessagesVisible",
        "ALARM",
        (
            "Threshold Crossed: 1 datapoint [2.0 (01/12/26 08:42:00)] was greater than or equal "
            "to the threshold (1.0)."
        ),
    ),
    "oldest-job-age": (
        "ApproximateAgeOfOldestMessage",
        "OK",
        (
            "Threshold Crossed: no datapoints were received for 1 period and 1 missing datapoint "
            "was treated as [NonBreaching]."
        ),
    ),
    "orders-throttled": (
        "WriteThrottleEvents",
        "INSUFFICIENT_DATA",
        "Unchecked: Initial alarm creation",
    ),
    "worker-errors": (
        "Errors",
        "ALARM",
        (
            "Threshold Crossed: 1 out of the last 1 datapoints [1.0 (01/12/26 08:43:00)] was greater than "
            "or equal to the threshold (1.0) (minimum 1 datapoint for OK -> ALARM transition)."
        ),
    ),
    "worker-throttles": (
        "Throttles",
        "OK",
        (
            "Threshold Crossed: no datapoints were received for 1 period and 1 missing datapoint was "
            "treated as [NonBreaching]."
        ),
    ),
}
_DESCRIPTIONS = {
    alarm.what: alarm.description for alarm in resolved(StackConfig.from_context({}).alarm_settings)
}
ALARMS = {what: (_STATES[what][0], _DESCRIPTIONS[what], *_STATES[what][1:]) for what in _DESCRIPTIONS}
BAD_DELIVERIES = {"bad-1": 7, "bad-2": 8}  # two poison messages, fifteen failed records
LONG_ID = "shop-2026-12-01-order-0000000000000000000000000000000000000001"


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def create_busy_day(clients: Clients) -> None:
    """A young stack's first minutes gone badly: create_resources, then two malformed messages
    delivered 7 and 8 times, a write that failed once and then went in, an order with a long id,
    the ten alarms (five in ALARM, one with no data), and four minutes of metrics."""
    deploy_stack(clients)
    urls = create_resources(clients)
    sqs, dynamodb, logs = clients.client("sqs"), clients.client("dynamodb"), clients.client("logs")
    sqs.send_message(QueueUrl=urls["jobs-dlq"], MessageBody='{"id": "bad-1", "quantity": 11}')
    dynamodb.put_item(
        TableName=f"{PREFIX}-orders",
        Item={"id": {"S": LONG_ID}, "quantity": {"N": "10"}, "total_cents": {"N": "2600"}},
    )
    now = int(time.time() * 1000)
    group = f"/aws/lambda/{PREFIX}-worker"
    slow = {"id": LONG_ID, "quantity": 10, "total_cents": 2600}
    lines: dict[str, list[tuple[int, str]]] = {"s2": [], "s3": []}
    for n in range(1, BAD_DELIVERIES["bad-1"] + 1):
        lines["s2"].append(
            (now - 200_000 + n * 20_000, error_line("JobError", "quantity must be 1..10, got 11", "bad-1", n))
        )
    for n in range(1, BAD_DELIVERIES["bad-2"] + 1):
        lines["s3"].append(
            (
                now - 190_000 + n * 20_000,
                error_line(
                    "JobError",
                    "body is not valid JSON: Expecting ',' delimiter: line 1 column 22 (char 21)",
                    "bad-2",
                    n,
                ),
            )
        )
    lines["s3"] += [
        (now - 120_000, job_line(slow, "slow-1")),
        (
            now - 120_000,
            error_line(
                "ProvisionedThroughputExceededException",
                "PutItem failed after 4 attempts: An error occurred (ProvisionedThroughputExceededException)",
                "slow-1",
                1,
            ),
        ),
        (now - 60_000, job_line(slow, "slow-1")),
        (now - 60_000, write_line("written", None, slow)),
    ]
    for stream, events in lines.items():
        logs.create_log_stream(logGroupName=group, logStreamName=stream)
        logs.put_log_events(
            logGroupName=group,
            logStreamName=stream,
            logEvents=[{"timestamp": t, "message": m} for t, m in sorted(events, key=lambda e: e[0])],
        )
    cloudwatch = clients.client("cloudwatch")
    for what, (metric, description, state, reason) in ALARMS.items():
        cloudwatch.put_metric_alarm(
            AlarmName=f"{PREFIX}-{what}",
            AlarmDescription=description,
            MetricName=metric,
            Namespace="n",
            Statistic="Sum",
            Period=60,
            EvaluationPeriods=1,
            Threshold=1,
            ComparisonOperator="GreaterThanOrEqualToThreshold",
        )
        if state != "INSUFFICIENT_DATA":
            cloudwatch.set_alarm_state(
                AlarmName=f"{PREFIX}-{what}", StateValue=cast("StateValueType", state), StateReason=reason
            )
    minute = now // 60_000 * 60_000
    worker: list[DimensionTypeDef] = [{"Name": "FunctionName", "Value": f"{PREFIX}-worker"}]
    per_minute = {
        "Accepted": [0, 1, 0, 1],
        "Duplicate": [0, 1, 1, 0],
        "Conflict": [0, 0, 1, 0],
        "Malformed": [3, 4, 4, 4],
        "Error": [0, 0, 1, 0],
    }
    data: list[MetricDatumTypeDef] = [
        {
            "MetricName": name,
            "Dimensions": worker,
            "Timestamp": _at(minute - (4 - index) * 60_000),
            "Value": value,
        }
        for name, values in per_minute.items()
        for index, value in enumerate(values)
    ]
    cloudwatch.put_metric_data(Namespace="IdempotentOrderConsumer", MetricData=data)
    cloudwatch.put_metric_data(
        Namespace="AWS/Lambda",
        MetricData=[
            {"MetricName": "Errors", "Dimensions": worker, "Timestamp": _at(minute - 2 * 60_000), "Value": 1}
        ],
    )
    for queue, depths in ((f"{PREFIX}-jobs", [3, 2, 2, 3]), (f"{PREFIX}-jobs-dlq", [0, 0, 1, 2])):
        cloudwatch.put_metric_data(
            Namespace="AWS/SQS",
            MetricData=[
                {
                    "MetricName": "ApproximateNumberOfMessagesVisible",
                    "Dimensions": [{"Name": "QueueName", "Value": queue}],
                    "Timestamp": _at(minute - (4 - index) * 60_000),
                    "Value": depth,
                }
                for index, depth in enumerate(depths)
            ],
        )
