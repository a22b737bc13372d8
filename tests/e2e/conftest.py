"""End-to-end fixtures: the run's shared embedded AWS (tests/shared_aws.py), and small pipelines of
functions the local Lambda host has never seen."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass

import pytest

from local.session import LocalSession, wait_for
from ops import observe

ACCOUNT, REGION = "123456789012", "us-east-1"


@pytest.fixture(scope="module")
def emulator(shared_aws):
    """The embedded AWS with IAM enforcement on and the Lambda host polling. Resources a module
    creates in it carry names of their own: other modules use it at the same time."""
    return shared_aws.session


def function_zip(source: str | dict[str, str]) -> bytes:
    """A deployment package: one app.py, or the given {file name: source}."""
    files = {"app.py": source} if isinstance(source, str) else source
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


LAMBDA_TRUST = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
)


def make_role(session: LocalSession, name: str, statements: list[dict]) -> str:
    """A function role with exactly the given inline statements; returns its ARN."""
    iam = session.client("iam")
    arn: str = iam.create_role(RoleName=name, AssumeRolePolicyDocument=LAMBDA_TRUST)["Role"]["Arn"]
    if statements:
        iam.put_role_policy(
            RoleName=name,
            PolicyName="inline",
            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": statements}),
        )
    return arn


def consume_statement(*queue_arns: str) -> dict:
    return {
        "Effect": "Allow",
        "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
        "Resource": list(queue_arns),
    }


def logs_statement(function_name: str, account: str = "123456789012", region: str = "us-east-1") -> dict:
    return {
        "Effect": "Allow",
        "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
        "Resource": f"arn:aws:logs:{region}:{account}:log-group:/aws/lambda/{function_name}:*",
    }


def sns_may_send(topic_arn: object, queue_arn: object) -> dict:
    """The queue policy statement SNS needs to deliver `topic_arn`'s messages to the queue (ARNs,
    or CloudFormation expressions of them). SNS is a service principal: on AWS, as here, only the
    queue policy can allow it."""
    return {
        "Effect": "Allow",
        "Principal": {"Service": "sns.amazonaws.com"},
        "Action": "sqs:SendMessage",
        "Resource": queue_arn,
        "Condition": {"ArnEquals": {"aws:SourceArn": topic_arn}},
    }


def subscribe_queue(session: LocalSession, topic_arn: str, queue_url: str, queue_arn: str) -> None:
    """Subscribe a queue to a topic the way AWS needs it: its policy lets the topic deliver."""
    session.client("sqs").set_queue_attributes(
        QueueUrl=queue_url,
        Attributes={
            "Policy": json.dumps({"Version": "2012-10-17", "Statement": [sns_may_send(topic_arn, queue_arn)]})
        },
    )
    session.client("sns").subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn)


@dataclass
class Pipeline:
    name: str
    queue_url: str
    dlq_url: str
    mapping_id: str


WORKER_TIMEOUT = (
    2  # the real worker starts a write only with 1.4 s left (lib/src/guarded_consumer/write_guard.py)
)


def pipeline(
    session: LocalSession,
    name: str,
    *,
    batch_size: int = 1,
    enabled: bool = True,
    source: str | dict[str, str],
    handler: str = "app.handler",
    extra_statements: tuple = (),
    environment: dict | None = None,
    create_mapping: bool = True,
    timeout: int = 1,
    visibility: int = 1,
) -> Pipeline:
    """A queue with a DLQ (maxReceiveCount 2, `visibility` s), a function (`timeout` s) with its
    own role (consume + own logs + extras) and a mapping with partial batch responses."""
    sqs, lambda_api = session.client("sqs"), session.client("lambda")
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dlq_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}-dlq"
    queue_url = sqs.create_queue(
        QueueName=name,
        Attributes={
            "VisibilityTimeout": str(visibility),
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2}),
        },
    )["QueueUrl"]
    queue_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"
    role = make_role(
        session, f"{name}-role", [consume_statement(queue_arn), logs_statement(name), *extra_statements]
    )
    session.client("logs").create_log_group(logGroupName=f"/aws/lambda/{name}")
    lambda_api.create_function(
        FunctionName=name,
        Runtime="python3.14",
        Role=role,
        Handler=handler,
        Timeout=timeout,
        Code={"ZipFile": function_zip(source)},
        Environment={"Variables": environment or {}},
    )
    mapping_id = ""
    if create_mapping:
        mapping_id = lambda_api.create_event_source_mapping(
            EventSourceArn=queue_arn,
            FunctionName=name,
            BatchSize=batch_size,
            Enabled=enabled,
            FunctionResponseTypes=["ReportBatchItemFailures"],
        )["UUID"]
    return Pipeline(name, queue_url, dlq_url, mapping_id)


def batches(session: LocalSession, name: str) -> list[dict]:
    events = observe.log_events(session.client("logs"), f"/aws/lambda/{name}")
    return [json.loads(e["message"][len("BATCH ") :]) for e in events if e["message"].startswith("BATCH ")]


def dead_letters(session: LocalSession, p: Pipeline, expected: int) -> list[str]:
    """Wait until the DLQ holds `expected` messages; return their bodies (left in place)."""
    sqs = session.client("sqs")
    wait_for(
        lambda: observe.queue_counters(sqs, p.dlq_url)["visible"] == expected,
        timeout=30,
        what=f"{expected} message(s) in {p.name}-dlq",
    )
    received = sqs.receive_message(QueueUrl=p.dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=0)
    return sorted(m["Body"] for m in received.get("Messages", []))


def drained(session: LocalSession, p: Pipeline) -> bool:
    counters = observe.queue_counters(session.client("sqs"), p.queue_url)
    return counters["visible"] == 0 and counters["in_flight"] == 0


def table(session: LocalSession, name: str) -> str:
    session.client("dynamodb").create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


def put_item_on(arn: str) -> dict:
    return {"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": arn}
