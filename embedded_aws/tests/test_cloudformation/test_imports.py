"""Resource import as CloudFormation does it, for the types the consumer stack retains: an IMPORT
change set (what `cdk import` sends) binds a stack's logical resource to an existing table or queue
with its items and messages untouched, refused in AWS's words when it breaks an import rule; and
`ImportExistingResources` (what `cdk deploy --import-existing-resources` sends) imports a retained
table by its static name but creates a queue (its primary identifier, QueueUrl, is read-only),
which then collides with the queue that exists. Small templates of their own, through the
CloudFormation API."""

from __future__ import annotations

import json

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
ITEM = {"id": {"S": "old-order"}, "note": {"S": "the duplicate guard"}}
RETAIN = {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}


def table(name: str, **attributes) -> dict:
    return {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": name, **KEY}, **attributes}


def queue(name: str, **attributes) -> dict:
    return {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name}, **attributes}


def body(resources: dict, outputs: dict | None = None) -> str:
    return json.dumps({"Resources": resources, **({"Outputs": outputs} if outputs else {})})


def retained(emulator, name: str) -> str:
    """A table with an item and a queue with a message, as `cdk destroy` leaves them with
    removal=retain; returns the queue's URL."""
    dynamodb, sqs = emulator.client("dynamodb"), emulator.client("sqs")
    dynamodb.create_table(TableName=f"{name}-orders", **KEY)
    dynamodb.put_item(TableName=f"{name}-orders", Item=ITEM)
    url: str = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="an order a human must look at")
    return url


def forget(emulator, name: str, url: str) -> None:
    emulator.client("dynamodb").delete_table(TableName=f"{name}-orders")
    emulator.client("sqs").delete_queue(QueueUrl=url)


def import_change_set(cloudformation, stack: str, resources: dict, to_import: list, outputs=None) -> dict:
    created = cloudformation.create_change_set(
        StackName=stack,
        ChangeSetName="cdk-deploy-change-set",
        ChangeSetType="IMPORT",
        TemplateBody=body(resources, outputs),
        ResourcesToImport=to_import,
    )
    described: dict = cloudformation.describe_change_set(
        StackName=created["StackId"], ChangeSetName=created["Id"]
    )
    return described


def to_import(name: str, url: str) -> list:
    return [
        {
            "ResourceType": "AWS::DynamoDB::Table",
            "LogicalResourceId": "Orders",
            "ResourceIdentifier": {"TableName": f"{name}-orders"},
        },
        {
            "ResourceType": "AWS::SQS::Queue",
            "LogicalResourceId": "Dlq",
            "ResourceIdentifier": {"QueueUrl": url},
        },
    ]


def test_cdk_import_creates_a_stack_of_existing_resources_and_deploy_adds_the_rest(emulator):
    """An IMPORT change set on a stack that does not exist: the changes are Imports with the
    resources' physical ids; executed, the stack is IMPORT_COMPLETE with each resource's
    IMPORT_IN_PROGRESS/IMPORT_COMPLETE events, and the table's item and the queue's message are
    untouched. An UPDATE then adds the rest without touching them; deleting the stack keeps the
    retained two and deletes the added queue."""
    name = unique("imp-new")
    cloudformation, dynamodb, sqs = (emulator.client(s) for s in ("cloudformation", "dynamodb", "sqs"))
    url = retained(emulator, name)
    imported = {"Orders": table(f"{name}-orders", **RETAIN), "Dlq": queue(f"{name}-dlq", **RETAIN)}

    described = import_change_set(cloudformation, name, imported, to_import(name, url))

    assert described["Status"] == "CREATE_COMPLETE"
    found = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in described["Changes"]}
    assert {k: (v["Action"], v["PhysicalResourceId"].rsplit("/", 1)[-1]) for k, v in found.items()} == {
        "Orders": ("Import", f"{name}-orders"),
        "Dlq": ("Import", f"{name}-dlq"),
    }
    cloudformation.execute_change_set(ChangeSetName=described["ChangeSetId"])
    assert cloudformation.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"] == "IMPORT_COMPLETE"
    events = cloudformation.describe_stack_events(StackName=name)["StackEvents"][::-1]
    assert [
        (e["LogicalResourceId"], e["ResourceStatus"]) for e in events if e["LogicalResourceId"] == "Orders"
    ] == [
        ("Orders", "IMPORT_IN_PROGRESS"),
        ("Orders", "IMPORT_COMPLETE"),
    ]
    resources = cloudformation.list_stack_resources(StackName=name)["StackResourceSummaries"]
    assert sorted(
        (r["LogicalResourceId"], r["PhysicalResourceId"].rsplit("/", 1)[-1]) for r in resources
    ) == [
        ("Dlq", f"{name}-dlq"),
        ("Orders", f"{name}-orders"),
    ]
    assert dynamodb.scan(TableName=f"{name}-orders")["Items"] == [ITEM]
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])[
        "Attributes"
    ] == {"ApproximateNumberOfMessages": "1"}

    everything = {**imported, "Jobs": queue(f"{name}-jobs")}
    update = cloudformation.create_change_set(
        StackName=name,
        ChangeSetName="cdk-deploy-change-set",
        ChangeSetType="UPDATE",
        TemplateBody=body(everything),
    )
    described = cloudformation.describe_change_set(ChangeSetName=update["Id"])
    assert [
        (c["ResourceChange"]["LogicalResourceId"], c["ResourceChange"]["Action"])
        for c in described["Changes"]
    ] == [("Jobs", "Add")]
    cloudformation.execute_change_set(ChangeSetName=update["Id"])
    assert cloudformation.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE"
    assert dynamodb.scan(TableName=f"{name}-orders")["Items"] == [ITEM]

    cloudformation.delete_stack(StackName=name)
    assert dynamodb.scan(TableName=f"{name}-orders")["Items"] == [ITEM]
    left = sqs.list_queues(QueueNamePrefix=name).get("QueueUrls", [])
    assert [u.rsplit("/", 1)[-1] for u in left] == [f"{name}-dlq"]
    forget(emulator, name, url)


def test_an_import_that_breaks_a_rule_is_refused_in_aws_words_and_creates_no_stack(emulator):
    """Each rule of a resource import, refused by CreateChangeSet with a ValidationError: a
    resource to import without DeletionPolicy, a template that also adds a resource, one that adds
    Outputs, a resource that does not exist, and one that belongs to another stack. A refused
    import of a new stack leaves no stack behind."""
    name = unique("imp-rules")
    cloudformation = emulator.client("cloudformation")
    url = retained(emulator, name)
    orders = table(f"{name}-orders", **RETAIN)
    only_table = to_import(name, url)[:1]

    def refusal(resources: dict, wanted: list, outputs=None, stack: str = name) -> str:
        with pytest.raises(ClientError) as refused:
            import_change_set(cloudformation, stack, resources, wanted, outputs)
        assert refused.value.response["Error"]["Code"] == "ValidationError"
        return refused.value.response["Error"]["Message"]

    assert refusal({"Orders": table(f"{name}-orders")}, only_table) == (
        "The following resources to import [Orders] must have DeletionPolicy attribute specified in the template."
    )
    assert refusal({"Orders": orders, "Jobs": queue(f"{name}-jobs")}, only_table) == (
        "You have modified resources [Jobs] in your template that are not being imported. Update, create or "
        "delete operations cannot be executed during import operations."
    )
    assert refusal({"Orders": orders}, only_table, {"Name": {"Value": {"Ref": "Orders"}}}) == (
        "As part of the import operation, you cannot modify or add [Outputs]"
    )
    missing = [{**only_table[0], "ResourceIdentifier": {"TableName": f"{name}-none"}}]
    assert f"{name}-none" in refusal({"Orders": orders}, missing)
    with pytest.raises(ClientError):
        cloudformation.describe_stacks(StackName=name)

    owner = import_change_set(cloudformation, f"{name}-owner", {"Orders": orders}, only_table)
    cloudformation.execute_change_set(ChangeSetName=owner["ChangeSetId"])
    assert (
        refusal({"Orders": orders}, only_table) == f"{name}-orders already exists in stack {owner['StackId']}"
    )
    cloudformation.delete_stack(StackName=f"{name}-owner")
    forget(emulator, name, url)


def test_import_existing_resources_imports_a_retained_table_but_creates_a_queue(emulator):
    """With ImportExistingResources, a retained table named statically is imported (Action
    Import, its item kept), while a queue, whose primary identifier QueueUrl is read-only, is
    created as usual: the create collides with the queue that exists (CREATE_FAILED, 'already
    exists'), the stack rolls back to ROLLBACK_COMPLETE, and the retained table and queue stay."""
    name = unique("imp-auto")
    cloudformation, dynamodb = emulator.client("cloudformation"), emulator.client("dynamodb")
    url = retained(emulator, name)
    resources = {
        "Orders": table(f"{name}-orders", **RETAIN),
        "Dlq": queue(f"{name}-dlq", **RETAIN, DependsOn="Orders"),
    }

    created = cloudformation.create_change_set(
        StackName=name,
        ChangeSetName="cdk-deploy-change-set",
        ChangeSetType="CREATE",
        TemplateBody=body(resources),
        ImportExistingResources=True,
    )
    described = cloudformation.describe_change_set(ChangeSetName=created["Id"])

    assert described["ImportExistingResources"] is True
    assert {
        c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"]["Action"] for c in described["Changes"]
    } == {
        "Orders": "Import",
        "Dlq": "Add",
    }
    cloudformation.execute_change_set(ChangeSetName=created["Id"])
    stack = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    events = cloudformation.describe_stack_events(StackName=name)["StackEvents"]
    (failed,) = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
    assert (
        failed["LogicalResourceId"] == "Dlq"
        and f"'{name}-dlq' already exists." in failed["ResourceStatusReason"]
    )
    assert dynamodb.scan(TableName=f"{name}-orders")["Items"] == [ITEM]
    assert emulator.client("sqs").get_queue_url(QueueName=f"{name}-dlq")["QueueUrl"] == url
    cloudformation.delete_stack(StackName=name)
    forget(emulator, name, url)


def test_import_existing_resources_fails_the_change_set_for_a_table_that_is_not_retained(emulator):
    """A table that exists but whose DeletionPolicy is not Retain or RetainExceptOnCreate is not
    imported: the change set is FAILED with CloudFormation's words, which the CDK CLI parses to
    name the resource; without ImportExistingResources the create fails on the name instead."""
    name = unique("imp-noretain")
    cloudformation = emulator.client("cloudformation")
    url = retained(emulator, name)

    created = cloudformation.create_change_set(
        StackName=name,
        ChangeSetName="cdk-deploy-change-set",
        ChangeSetType="CREATE",
        TemplateBody=body({"Orders": table(f"{name}-orders")}),
        ImportExistingResources=True,
    )
    described = cloudformation.describe_change_set(ChangeSetName=created["Id"])

    assert (described["Status"], described["ExecutionStatus"]) == ("FAILED", "UNAVAILABLE")
    assert described["StatusReason"] == (
        "CloudFormation is attempting to import some resources because they already exist in your account. "
        "The resources must have the DeletionPolicy attribute set to 'Retain' or 'RetainExceptOnCreate' in the "
        f"template for successful import. The affected resources are Orders ({{TableName={name}-orders}})"
    )
    cloudformation.delete_stack(StackName=name)
    forget(emulator, name, url)
