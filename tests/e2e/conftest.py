"""End-to-end fixtures: a real embedded AWS in its own process, on a free port, always stopped."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from local.session import LocalSession, free_port


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """An embedded AWS with IAM enforcement on and the Lambda host polling; no stack deployed."""
    session = LocalSession(tmp_path_factory.mktemp("emulator"))
    session.start_emulator(free_port())
    try:
        yield session
    finally:
        session.stop_emulator()


def function_zip(source: str) -> bytes:
    """A deployment package with one app.py."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", source)
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
