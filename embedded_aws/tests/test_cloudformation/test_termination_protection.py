"""Stack termination protection as CloudFormation enforces it: CreateStack's and
UpdateTerminationProtection's setting shown by DescribeStacks, DeleteStack of a protected stack
refused in AWS's words with the stack and its resources unchanged, and the protection set on a
change set's REVIEW_IN_PROGRESS stack as the CDK CLI sets it. Small templates of their own."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from botocore.exceptions import ClientError
from test_lambda_host.functions import unique

from embedded_aws.services.cloudformation.termination_protection import refusal
from local.session import wait_for
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e]


def template(queue_name: str) -> str:
    return json.dumps(
        {"Resources": {"Jobs": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": queue_name}}}}
    )


def stack_of(cloudformation, name: str) -> dict:
    stack: dict = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
    return stack


def created(cloudformation, name: str, **extra) -> dict:
    cloudformation.create_stack(StackName=name, TemplateBody=template(name), **extra)
    return wait_for(
        lambda: (stack := stack_of(cloudformation, name))["StackStatus"] == "CREATE_COMPLETE" and stack,
        timeout=20,
        what=f"stack {name} created",
    )


def refused_delete(cloudformation, stack_name: str) -> Mapping[str, Any]:
    with pytest.raises(ClientError) as refused:
        cloudformation.delete_stack(StackName=stack_name)
    return refused.value.response


def test_a_protected_stack_is_not_deleted_until_its_protection_is_turned_off(emulator):
    """CreateStack with EnableTerminationProtection: DescribeStacks says true; DeleteStack is a 400
    ValidationError "Stack [<name>] cannot be deleted while TerminationProtection is enabled" and
    the stack, its status and its queue stay; UpdateTerminationProtection false answers the
    StackId, DescribeStacks says false, and the delete then goes through."""
    cloudformation, sqs = emulator.client("cloudformation"), emulator.client("sqs")
    name = unique("tp-create")
    stack = created(cloudformation, name, EnableTerminationProtection=True)
    assert stack["EnableTerminationProtection"] is True

    answer = refused_delete(cloudformation, name)
    assert answer["Error"]["Code"] == "ValidationError"
    assert answer["Error"]["Message"] == refusal(name)
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert stack_of(cloudformation, name)["StackStatus"] == "CREATE_COMPLETE"
    assert sqs.get_queue_url(QueueName=name)["QueueUrl"]

    turned_off = cloudformation.update_termination_protection(
        StackName=name, EnableTerminationProtection=False
    )
    assert turned_off["StackId"] == stack["StackId"]
    assert stack_of(cloudformation, name)["EnableTerminationProtection"] is False
    cloudformation.delete_stack(StackName=name)
    with pytest.raises(ClientError):
        stack_of(cloudformation, name)


def test_protection_turned_on_later_refuses_a_delete_by_stack_id(emulator):
    """A stack created without protection says false; UpdateTerminationProtection true protects
    it, and a DeleteStack by its id is refused naming the id as given."""
    cloudformation = emulator.client("cloudformation")
    name = unique("tp-later")
    stack = created(cloudformation, name)
    assert stack["EnableTerminationProtection"] is False
    cloudformation.update_termination_protection(StackName=stack["StackId"], EnableTerminationProtection=True)
    assert stack_of(cloudformation, name)["EnableTerminationProtection"] is True
    assert refused_delete(cloudformation, stack["StackId"])["Error"]["Message"] == refusal(stack["StackId"])
    cloudformation.update_termination_protection(StackName=name, EnableTerminationProtection=False)
    cloudformation.delete_stack(StackName=name)


def test_protection_set_before_a_create_change_set_is_executed_holds_after_it(emulator):
    """The CDK CLI's path: a CREATE change set makes a REVIEW_IN_PROGRESS stack, the CLI turns its
    protection on before executing; the created stack is protected."""
    cloudformation = emulator.client("cloudformation")
    name = unique("tp-changeset")
    change_set = cloudformation.create_change_set(
        StackName=name,
        ChangeSetName="cdk-deploy-change-set",
        ChangeSetType="CREATE",
        TemplateBody=template(name),
    )
    assert stack_of(cloudformation, name)["StackStatus"] == "REVIEW_IN_PROGRESS"
    cloudformation.update_termination_protection(StackName=name, EnableTerminationProtection=True)
    cloudformation.execute_change_set(StackName=name, ChangeSetName=change_set["Id"])
    wait_for(
        lambda: stack_of(cloudformation, name)["StackStatus"] == "CREATE_COMPLETE",
        timeout=20,
        what=f"stack {name} created",
    )
    assert stack_of(cloudformation, name)["EnableTerminationProtection"] is True
    assert refused_delete(cloudformation, name)["Error"]["Code"] == "ValidationError"
    cloudformation.update_termination_protection(StackName=name, EnableTerminationProtection=False)
    cloudformation.delete_stack(StackName=name)


def test_protection_of_a_stack_that_is_not_there_is_a_validation_error(emulator):
    """UpdateTerminationProtection of a stack that does not exist: ValidationError naming it."""
    cloudformation = emulator.client("cloudformation")
    name = unique("tp-missing")
    with pytest.raises(ClientError) as missing:
        cloudformation.update_termination_protection(StackName=name, EnableTerminationProtection=True)
    assert missing.value.response["Error"]["Code"] == "ValidationError"
    assert name in missing.value.response["Error"]["Message"]
