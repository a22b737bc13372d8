"""CloudFormation acting as the execution role a request names (RoleARN), checked as AWS checks it
before it starts ("AWS CloudFormation service role"): the caller needs iam:PassRole on it, the
role must trust cloudformation.amazonaws.com, else ValidationError "Role <arn> is invalid or
cannot be assumed"; the stack keeps the role (DescribeStacks RoleARN), and an update naming no
role keeps it. In the shared embedded AWS."""

from __future__ import annotations

import json
import uuid

import pytest

from embedded_aws.services.cloudformation.execution_role import cannot_be_assumed
from local.session import wait_for
from test_iam.callers import refusal, user
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

TEMPLATE = json.dumps({"Resources": {"Jobs": {"Type": "AWS::SQS::Queue"}}})


def _trust(service: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": service}}],
        }
    )


def test_only_a_role_trusting_cloudformation_can_be_its_execution_role():
    """The trust policy must name the CloudFormation service; a missing role cannot be assumed."""
    arn = "arn:aws:iam::123456789012:role/exec"
    assert cannot_be_assumed(arn, _trust("cloudformation.amazonaws.com")) is None
    assert (
        cannot_be_assumed(arn, _trust("lambda.amazonaws.com"))
        == f"Role {arn} is invalid or cannot be assumed"
    )
    assert cannot_be_assumed(arn, None) == f"Role {arn} is invalid or cannot be assumed"


def _role(emulator, service: str) -> str:
    arn: str = emulator.client("iam").create_role(
        RoleName=f"exec-{uuid.uuid4().hex[:8]}", AssumeRolePolicyDocument=_trust(service)
    )["Role"]["Arn"]
    return arn


def _settled(cloudformation, name: str) -> dict:
    settled: dict | None = wait_for(
        lambda: (
            stack
            if not (stack := cloudformation.describe_stacks(StackName=name)["Stacks"][0])[
                "StackStatus"
            ].endswith("IN_PROGRESS")
            else None
        ),
        timeout=30,
        what=f"stack {name} to settle",
    )
    assert settled is not None  # wait_for returns only a truthy value
    return settled


@pytest.mark.e2e
def test_a_stack_runs_as_its_execution_role_and_keeps_it(emulator):
    """CreateStack with a role trusting CloudFormation records it; an UpdateStack naming no role
    keeps it; a role trusting another service is refused as CloudFormation refuses it."""
    cloudformation, name = emulator.client("cloudformation"), f"exec-{uuid.uuid4().hex[:8]}"
    role = _role(emulator, "cloudformation.amazonaws.com")
    cloudformation.create_stack(StackName=name, TemplateBody=TEMPLATE, RoleARN=role)
    assert _settled(cloudformation, name)["RoleARN"] == role
    updated = json.dumps(
        {"Resources": {"Jobs": {"Type": "AWS::SQS::Queue"}, "More": {"Type": "AWS::SQS::Queue"}}}
    )
    cloudformation.update_stack(StackName=name, TemplateBody=updated)
    stack = _settled(cloudformation, name)
    assert (stack["StackStatus"], stack["RoleARN"]) == ("UPDATE_COMPLETE", role)

    wrong = _role(emulator, "lambda.amazonaws.com")
    found = refusal(lambda: cloudformation.update_stack(StackName=name, TemplateBody=TEMPLATE, RoleARN=wrong))
    assert found == {
        "code": "ValidationError",
        "status": 400,
        "message": f"Role {wrong} is invalid or cannot be assumed",
    }
    cloudformation.delete_stack(StackName=name)


@pytest.mark.e2e
def test_passing_the_execution_role_needs_iam_pass_role(emulator):
    """A caller allowed every CloudFormation action but not iam:PassRole on the role is refused in
    IAM's words; allowed iam:PassRole on that role, it creates the stack."""
    role = _role(emulator, "cloudformation.amazonaws.com")
    cfn_only = {"Effect": "Allow", "Action": "cloudformation:*", "Resource": "*"}
    arn, cloudformation = user(emulator, [cfn_only], service="cloudformation")
    name = f"exec-{uuid.uuid4().hex[:8]}"
    found = refusal(lambda: cloudformation.create_stack(StackName=name, TemplateBody=TEMPLATE, RoleARN=role))
    assert (found["code"], found["status"]) == ("AccessDenied", 403)
    assert found["message"] == f"User: {arn} is not authorized to perform: iam:PassRole on resource: {role}"

    pass_role = {"Effect": "Allow", "Action": "iam:PassRole", "Resource": role}
    _, allowed = user(emulator, [cfn_only, pass_role], service="cloudformation")
    allowed.create_stack(StackName=name, TemplateBody=TEMPLATE, RoleARN=role)
    assert _settled(allowed, name)["StackStatus"] == "CREATE_COMPLETE"
    allowed.delete_stack(StackName=name)
