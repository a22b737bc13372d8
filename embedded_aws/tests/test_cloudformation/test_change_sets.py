"""Change sets as the CDK CLI's default deploy uses them (CreateChangeSet, DescribeChangeSet,
ExecuteChangeSet, DeleteChangeSet, DescribeStacks), answered as AWS answers them: the resource
changes from the old and new template, a change set that changes nothing FAILED with AWS's
reason, the stack's outputs after execution, and AWS's errors for change sets and stacks that are
not there. Small templates of their own, through the CloudFormation API."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from botocore.exceptions import ClientError
from test_lambda_host.functions import unique

from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e]

KEY = {
    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
    "BillingMode": "PAY_PER_REQUEST",
}


def queue(name: str, **properties) -> dict:
    return {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name, **properties}}


def table(name: str, **attributes) -> dict:
    return {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": name, **KEY}, **attributes}


def body(resources: dict, outputs: dict | None = None) -> str:
    return json.dumps({"Resources": resources, **({"Outputs": outputs} if outputs else {})})


def change_set(
    cloudformation, stack: str, kind: str, template: str, name: str = "cdk-deploy-change-set", **extra
):
    """Create a change set as the CDK CLI does (by name, then described by the ids it answers)."""
    created = cloudformation.create_change_set(
        StackName=stack,
        ChangeSetName=name,
        ChangeSetType=kind,
        TemplateBody=template,
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"],
        **extra,
    )
    return cloudformation.describe_change_set(StackName=created["StackId"], ChangeSetName=created["Id"])


def changes(description: dict) -> dict[str, dict]:
    return {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in description["Changes"]}


def stack_of(cloudformation, name: str) -> dict:
    stack: dict = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
    return stack


def test_a_create_then_an_update_by_change_set_as_the_cdk_cli_deploys(emulator):
    """CREATE: the stack is REVIEW_IN_PROGRESS with an executable change set whose changes are
    Adds; executed, it is CREATE_COMPLETE with its outputs. UPDATE: the old change set is deleted
    by name (waited for as gone: ChangeSetNotFound), the new one lists a Modify (replacement or
    not, with the physical id), an Add and a Remove; executed, the stack has the new outputs and
    its other change sets are gone."""
    name = unique("cs-deploy")
    cloudformation, sqs = emulator.client("cloudformation"), emulator.client("sqs")
    first = body(
        {"Jobs": queue(f"{name}-jobs", VisibilityTimeout=30), "Old": queue(f"{name}-old")},
        {"JobsUrl": {"Value": {"Ref": "Jobs"}}},
    )

    created = change_set(cloudformation, name, "CREATE", first)

    assert stack_of(cloudformation, name)["StackStatus"] == "REVIEW_IN_PROGRESS"
    assert (created["Status"], created["ExecutionStatus"]) == ("CREATE_COMPLETE", "AVAILABLE")
    assert {k: v["Action"] for k, v in changes(created).items()} == {"Jobs": "Add", "Old": "Add"}
    cloudformation.execute_change_set(StackName=created["StackId"], ChangeSetName=created["ChangeSetId"])
    stack = stack_of(cloudformation, name)
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    jobs_url = sqs.get_queue_url(QueueName=f"{name}-jobs")["QueueUrl"]
    assert [(o["OutputKey"], o["OutputValue"].rsplit("/", 1)[1]) for o in stack["Outputs"]] == [
        ("JobsUrl", f"{name}-jobs")
    ]

    cloudformation.delete_change_set(StackName=name, ChangeSetName="cdk-deploy-change-set")
    with pytest.raises(ClientError) as gone:
        cloudformation.describe_change_set(StackName=name, ChangeSetName="cdk-deploy-change-set")
    assert gone.value.response["Error"] == {
        "Type": "Sender",
        "Code": "ChangeSetNotFound",
        "Message": "ChangeSet [cdk-deploy-change-set] does not exist",
    }
    assert gone.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404

    second = body(
        {
            "Jobs": queue(f"{name}-jobs", VisibilityTimeout=60),
            "Renamed": queue(f"{name}-new"),
        },
        {"JobsUrl": {"Value": {"Ref": "Jobs"}}, "NewArn": {"Value": {"Fn::GetAtt": ["Renamed", "Arn"]}}},
    )
    stale = change_set(cloudformation, name, "UPDATE", second, name="someone-elses")
    updated = change_set(cloudformation, name, "UPDATE", second)

    found = changes(updated)
    assert found["Jobs"]["Action"] == "Modify" and found["Jobs"]["Replacement"] == "False"
    assert found["Jobs"]["PhysicalResourceId"].endswith(f"/{name}-jobs")
    assert [d["Target"]["Name"] for d in found["Jobs"]["Details"]] == ["VisibilityTimeout"]
    assert (found["Renamed"]["Action"], found["Old"]["Action"]) == ("Add", "Remove")
    assert found["Old"]["PhysicalResourceId"].endswith(f"/{name}-old")
    cloudformation.execute_change_set(StackName=updated["StackId"], ChangeSetName=updated["ChangeSetId"])
    stack = stack_of(cloudformation, name)
    assert stack["StackStatus"] == "UPDATE_COMPLETE"
    assert sorted(o["OutputKey"] for o in stack["Outputs"]) == ["JobsUrl", "NewArn"]
    assert sqs.get_queue_attributes(QueueUrl=jobs_url, AttributeNames=["VisibilityTimeout"])[
        "Attributes"
    ] == {"VisibilityTimeout": "60"}
    with pytest.raises(ClientError) as obsolete:
        cloudformation.describe_change_set(StackName=name, ChangeSetName=stale["ChangeSetId"])
    assert obsolete.value.response["Error"]["Code"] == "ChangeSetNotFound"
    cloudformation.delete_stack(StackName=name)


def test_a_renamed_table_is_a_replacement(emulator):
    """A change of a create-only property (TableName) is a Modify with Replacement True and the
    policy CloudFormation applies to the old resource."""
    name = unique("cs-replace")
    cloudformation = emulator.client("cloudformation")
    created = change_set(cloudformation, name, "CREATE", body({"Orders": table(f"{name}-a")}))
    cloudformation.execute_change_set(ChangeSetName=created["ChangeSetId"])

    renamed = changes(change_set(cloudformation, name, "UPDATE", body({"Orders": table(f"{name}-b")})))

    assert renamed["Orders"]["Replacement"] == "True"
    assert renamed["Orders"]["PolicyAction"] == "ReplaceAndDelete"
    assert renamed["Orders"]["Details"][0]["Target"] == {
        "Attribute": "Properties",
        "Name": "TableName",
        "RequiresRecreation": "Always",
    }
    cloudformation.delete_stack(StackName=name)


def test_an_update_that_changes_nothing_is_a_failed_change_set_and_cannot_run(emulator):
    """The same template again: the change set is FAILED, UNAVAILABLE, with AWS's reason (the
    CDK CLI reads it as 'no changes' and deletes it by ARN), and executing it is
    InvalidChangeSetStatus in AWS's words."""
    name = unique("cs-same")
    cloudformation = emulator.client("cloudformation")
    template = body({"Jobs": queue(f"{name}-jobs")})
    created = change_set(cloudformation, name, "CREATE", template)
    cloudformation.execute_change_set(ChangeSetName=created["ChangeSetId"])
    cloudformation.delete_change_set(StackName=name, ChangeSetName="cdk-deploy-change-set")

    same = change_set(cloudformation, name, "UPDATE", template)

    assert (same["Status"], same["ExecutionStatus"], same["Changes"]) == ("FAILED", "UNAVAILABLE", [])
    assert same["StatusReason"] == (
        "The submitted information didn't contain changes. Submit different information to create a change set."
    )
    with pytest.raises(ClientError) as refused:
        cloudformation.execute_change_set(ChangeSetName=same["ChangeSetId"])
    assert refused.value.response["Error"]["Code"] == "InvalidChangeSetStatus"
    assert refused.value.response["Error"]["Message"] == (
        f"ChangeSet [{same['ChangeSetId']}] cannot be executed in its current status of [FAILED]"
    )
    cloudformation.delete_change_set(StackName=same["StackId"], ChangeSetName=same["ChangeSetId"])
    assert stack_of(cloudformation, name)["StackStatus"] == "CREATE_COMPLETE"
    cloudformation.delete_stack(StackName=name)


def test_change_sets_and_stacks_that_are_not_there_answer_as_on_aws(emulator):
    """DeleteChangeSet of a name the stack has no change set of succeeds (the CDK CLI deletes
    `cdk-deploy-change-set` before each deploy); of a stack that does not exist, or by a bare
    name without a stack, it is AWS's ValidationError; by an ARN that is gone it succeeds; a
    CREATE change set for a stack that exists is refused in AWS's words. All in XML."""
    name = unique("cs-missing")
    cloudformation = emulator.client("cloudformation")
    created = change_set(cloudformation, name, "CREATE", body({"Jobs": queue(f"{name}-jobs")}))
    cloudformation.execute_change_set(ChangeSetName=created["ChangeSetId"])

    cloudformation.delete_change_set(StackName=name, ChangeSetName="never-made")
    cloudformation.delete_change_set(ChangeSetName=created["ChangeSetId"])
    cloudformation.delete_change_set(ChangeSetName=created["ChangeSetId"])

    def error(call, **arguments) -> Mapping[str, Any]:
        with pytest.raises(ClientError) as raised:
            call(**arguments)
        return raised.value.response["Error"]

    assert error(cloudformation.delete_change_set, StackName=f"{name}-none", ChangeSetName="x") == {
        "Type": "Sender",
        "Code": "ValidationError",
        "Message": f"Stack [{name}-none] does not exist",
    }
    assert error(cloudformation.delete_change_set, ChangeSetName="x")["Message"] == (
        "StackName must be specified if ChangeSetName is not specified as an ARN."
    )
    assert error(cloudformation.describe_change_set, StackName=f"{name}-none", ChangeSetName="x")[
        "Message"
    ] == (f"Stack [{name}-none] does not exist")
    assert (
        error(
            cloudformation.create_change_set,
            StackName=name,
            ChangeSetName="again",
            ChangeSetType="CREATE",
            TemplateBody=body({"Jobs": queue(f"{name}-jobs")}),
        )["Message"]
        == f"Stack [{name}] already exists and cannot be created again with the changeSet [again]."
    )
    cloudformation.delete_stack(StackName=name)


def test_a_review_stack_whose_change_set_is_deleted_stays_for_a_new_create(emulator):
    """Deleting the only change set of a REVIEW_IN_PROGRESS stack leaves the stack there, empty
    (the CDK CLI then creates a CREATE change set on it again); that one creates the stack."""
    name = unique("cs-review")
    cloudformation = emulator.client("cloudformation")
    template = body({"Jobs": queue(f"{name}-jobs")}, {"Url": {"Value": {"Ref": "Jobs"}}})
    first = change_set(cloudformation, name, "CREATE", template)

    cloudformation.delete_change_set(StackName=name, ChangeSetName="cdk-deploy-change-set")

    stack = stack_of(cloudformation, name)
    assert (stack["StackStatus"], stack["StackId"]) == ("REVIEW_IN_PROGRESS", first["StackId"])
    again = change_set(cloudformation, name, "CREATE", template)
    assert again["StackId"] == first["StackId"]
    cloudformation.execute_change_set(ChangeSetName=again["ChangeSetId"])
    stack = stack_of(cloudformation, name)
    assert stack["StackStatus"] == "CREATE_COMPLETE" and stack["Outputs"][0]["OutputKey"] == "Url"
    cloudformation.delete_stack(StackName=name)
