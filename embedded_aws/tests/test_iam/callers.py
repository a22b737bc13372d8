"""IAM callers for the resource-policy tests (topics, queues): a user with exactly the given
statements and a client signing as it, in the run's shared embedded AWS."""

from __future__ import annotations

import json
import uuid
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError


def policy(*statements: dict) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def user(emulator, statements: list[dict], service: str = "sns") -> tuple[str, Any]:
    """An IAM user with exactly `statements` (none: no policy at all), its ARN and a `service`
    client signing as it."""
    iam, name = emulator.client("iam"), f"caller-{uuid.uuid4().hex[:8]}"
    arn = iam.create_user(UserName=name)["User"]["Arn"]
    if statements:
        iam.put_user_policy(UserName=name, PolicyName="inline", PolicyDocument=policy(*statements))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    env = emulator.aws_env()
    # the stubs type a client only for a literal service name; the callers name theirs at run time
    return arn, boto3.client(  # type: ignore[call-overload]
        service,
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=env["AWS_REGION"],
        aws_access_key_id=key["AccessKeyId"],
        aws_secret_access_key=key["SecretAccessKey"],
    )


def refusal(call) -> dict:
    with pytest.raises(ClientError) as raised:
        call()
    return {
        "code": raised.value.response["Error"]["Code"],
        "status": raised.value.response["ResponseMetadata"]["HTTPStatusCode"],
        "message": raised.value.response["Error"]["Message"],
    }
