"""End-to-end fixtures: a real embedded AWS in its own process, on a free port, always stopped."""

from __future__ import annotations

import io
import json
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from local.session import LocalSession, free_port, wait_for
from ops import observe

ACCOUNT, REGION = "123456789012", "us-east-1"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """An embedded AWS with IAM enforcement on and the Lambda host polling; no stack deployed."""
    session = LocalSession(tmp_path_factory.mktemp("emulator"))
    session.start_emulator(free_port())
    try:
        yield session
    finally:
        session.stop_emulator()


@contextmanager
def deployed(state_dir: Path, context: dict[str, str]) -> Iterator[tuple[LocalSession, dict[str, str]]]:
    """The real stack deployed into an embedded AWS of its own; destroyed and stopped afterwards."""
    session = LocalSession(state_dir, context=context)
    session.start_emulator(free_port())
    try:
        outputs = session.deploy()
        yield session, outputs
        session.destroy()
    finally:
        session.stop_emulator()


def function_zip(source: str | dict[str, str]) -> bytes:
    """A deployment package: one app.py, or the given {file name: source}."""
    files = {"app.py": source} if isinstance(source, str) else source
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


LAMBDA_TRUST = json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
})


def make_role(session: LocalSession, name: str, statements: list[dict]) -> str:
    """A function role with exactly the given inline statements; returns its ARN."""
    iam = session.client("iam")
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=LAMBDA_TRUST)["Role"]["Arn"]
    if statements:
        iam.put_role_policy(RoleName=name, PolicyName="inline",
                            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": statements}))
    return arn


def consume_statement(*queue_arns: str) -> dict:
    return {"Effect": "Allow", "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
            "Resource": list(queue_arns)}


def logs_statement(function_name: str, account: str = "123456789012", region: str = "us-east-1") -> dict:
    return {"Effect": "Allow", "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": f"arn:aws:logs:{region}:{account}:log-group:/aws/lambda/{function_name}:*"}


@dataclass
class Pipeline:
    name: str
    queue_url: str
    dlq_url: str
    mapping_id: str


def pipeline(session: LocalSession, name: str, *, batch_size: int = 1, enabled: bool = True,
             source: str | dict[str, str], handler: str = "app.handler", extra_statements: tuple = (), environment: dict | None = None,
             create_mapping: bool = True) -> Pipeline:
    """A queue with a DLQ (maxReceiveCount 2, 1 s visibility), a function with its own role
    (consume + own logs + extras) and a mapping with partial batch responses."""
    sqs, lambda_api = session.client("sqs"), session.client("lambda")
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dlq_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}-dlq"
    queue_url = sqs.create_queue(QueueName=name, Attributes={
        "VisibilityTimeout": "1",
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2}),
    })["QueueUrl"]
    queue_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"
    role = make_role(session, f"{name}-role", [consume_statement(queue_arn), logs_statement(name), *extra_statements])
    session.client("logs").create_log_group(logGroupName=f"/aws/lambda/{name}")
    lambda_api.create_function(
        FunctionName=name, Runtime="python3.12", Role=role, Handler=handler, Timeout=1,
        Code={"ZipFile": function_zip(source)}, Environment={"Variables": environment or {}},
    )
    mapping_id = ""
    if create_mapping:
        mapping_id = lambda_api.create_event_source_mapping(
            EventSourceArn=queue_arn, FunctionName=name, BatchSize=batch_size, Enabled=enabled,
            FunctionResponseTypes=["ReportBatchItemFailures"],
        )["UUID"]
    return Pipeline(name, queue_url, dlq_url, mapping_id)


def batches(session: LocalSession, name: str) -> list[dict]:
    events = observe.log_events(session.client("logs"), f"/aws/lambda/{name}")
    return [json.loads(e["message"][len("BATCH "):]) for e in events if e["message"].startswith("BATCH ")]


def dead_letters(session: LocalSession, p: Pipeline, expected: int) -> list[str]:
    """Wait until the DLQ holds `expected` messages; return their bodies (left in place)."""
    sqs = session.client("sqs")
    wait_for(lambda: observe.queue_counters(sqs, p.dlq_url)["visible"] == expected,
             timeout=30, what=f"{expected} message(s) in {p.name}-dlq")
    received = sqs.receive_message(QueueUrl=p.dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=0)
    return sorted(m["Body"] for m in received.get("Messages", []))


def drained(session: LocalSession, p: Pipeline) -> bool:
    counters = observe.queue_counters(session.client("sqs"), p.queue_url)
    return counters["visible"] == 0 and counters["in_flight"] == 0


def table(session: LocalSession, name: str) -> str:
    session.client("dynamodb").create_table(
        TableName=name, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


def put_item_on(arn: str) -> dict:
    return {"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": arn}
