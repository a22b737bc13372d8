"""A resource that fails to create or update fails the stack operation as CloudFormation does:
the resource's CREATE_FAILED with the handler's message, the rollback (resources the operation
created deleted, Retain ones kept, nothing it did not create touched), ROLLBACK_COMPLETE or
UPDATE_ROLLBACK_COMPLETE, by CreateStack/UpdateStack and by change set alike; and every answer in
CloudFormation's own protocol. Small templates of their own, through the CloudFormation API."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError
from test_lambda_host.functions import unique

from local.session import wait_for
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e]

KEY = {
    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
    "BillingMode": "PAY_PER_REQUEST",
}
ITEM = {"id": {"S": "kept-order"}, "note": {"S": "keep unchanged"}}


def queue(name: str, **properties) -> dict:
    return {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name, **properties}}


def table(name: str, **attributes) -> dict:
    return {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": name, **KEY}, **attributes}


def deploy(cloudformation, name: str, resources: dict, method: str, change_set_type: str) -> None:
    """Create or update the stack directly, or by creating and executing a change set."""
    body = json.dumps({"Resources": resources})
    if method == "direct" and change_set_type == "CREATE":
        cloudformation.create_stack(StackName=name, TemplateBody=body)
    elif method == "direct":
        cloudformation.update_stack(StackName=name, TemplateBody=body)
    else:
        change_set = cloudformation.create_change_set(
            StackName=name,
            ChangeSetName=f"{name}-{len(resources)}",
            TemplateBody=body,
            ChangeSetType=change_set_type,
        )["Id"]
        cloudformation.execute_change_set(ChangeSetName=change_set)


def wait_for_status(cloudformation, name: str, wanted: str) -> dict:
    def stack() -> dict:
        described: dict = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
        return described

    reached = wait_for(
        lambda: stack() if stack()["StackStatus"] == wanted else None,
        timeout=30,
        what=lambda: f"{name} to reach {wanted} (it is {stack()['StackStatus']})",
    )
    assert reached is not None  # wait_for returns only a truthy value
    return reached


def events(cloudformation, name: str) -> list[tuple[str, str, str]]:
    """(logical id, status, reason), oldest first."""
    found = cloudformation.describe_stack_events(StackName=name)["StackEvents"]
    return [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason", "")) for e in found][
        ::-1
    ]


def read_in_order_by_time(cloudformation, name: str) -> bool:
    """Sorted by their millisecond timestamps, as the CDK CLI sorts what it reads (newest first
    from the API, a stable sort), the events come out in the order they happened."""
    newest_first = cloudformation.describe_stack_events(StackName=name)["StackEvents"]
    by_time = sorted(
        newest_first,
        key=lambda e: e["Timestamp"].replace(microsecond=e["Timestamp"].microsecond // 1000 * 1000),
    )
    return [e["EventId"] for e in by_time] == [e["EventId"] for e in reversed(newest_first)]


def queue_names(emulator, prefix: str) -> list[str]:
    urls = emulator.client("sqs").list_queues(QueueNamePrefix=prefix).get("QueueUrls", [])
    return sorted(url.rsplit("/", 1)[1] for url in urls)


@pytest.mark.parametrize("method", ["direct", "change set"])
def test_a_table_name_that_is_taken_fails_the_create_and_rolls_it_back(emulator, method):
    """A table whose name exists (as one retained by an earlier `cdk destroy`): the table's
    CREATE_FAILED says it already exists, the queue created before it is deleted, the Retain
    queue is kept, the stack ends ROLLBACK_COMPLETE, and the existing table keeps its item."""
    name = unique("cfn-taken")
    dynamodb, cloudformation = emulator.client("dynamodb"), emulator.client("cloudformation")
    dynamodb.create_table(TableName=f"{name}-orders", **KEY)
    dynamodb.put_item(TableName=f"{name}-orders", Item=ITEM)
    resources = {
        "Jobs": queue(f"{name}-jobs"),
        "Dlq": {**queue(f"{name}-dlq"), "DeletionPolicy": "Retain"},
        "Orders": table(f"{name}-orders", DependsOn=["Jobs", "Dlq"]),
    }

    deploy(cloudformation, name, resources, method, "CREATE")

    stack = wait_for_status(cloudformation, name, "ROLLBACK_COMPLETE")
    assert "Outputs" not in stack
    seen = events(cloudformation, name)
    (failed,) = [(logical, reason) for logical, status, reason in seen if status == "CREATE_FAILED"]
    assert failed[0] == "Orders"
    assert f"'{name}-orders' already exists." in failed[1] and "HandlerErrorCode: AlreadyExists" in failed[1]
    assert (name, "ROLLBACK_IN_PROGRESS", "The following resource(s) failed to create: [Orders].") in seen
    assert read_in_order_by_time(cloudformation, name)
    assert [(logical, status) for logical, status, _ in seen if logical == "Jobs"] == [
        ("Jobs", "DELETE_COMPLETE")
    ]
    assert queue_names(emulator, name) == [f"{name}-dlq"]
    assert dynamodb.scan(TableName=f"{name}-orders")["Items"] == [ITEM]
    cloudformation.delete_stack(StackName=name)  # a ROLLBACK_COMPLETE stack can only be deleted
    emulator.client("sqs").delete_queue(
        QueueUrl=emulator.client("sqs").get_queue_url(QueueName=f"{name}-dlq")["QueueUrl"]
    )
    dynamodb.delete_table(TableName=f"{name}-orders")


def test_a_queue_name_taken_with_other_attributes_fails_its_create(emulator):
    """SQS refuses a queue name that exists with other attributes; its CREATE_FAILED says the
    name is taken, and the existing queue keeps its attributes."""
    name = unique("cfn-queue")
    sqs, cloudformation = emulator.client("sqs"), emulator.client("cloudformation")
    existing = sqs.create_queue(QueueName=f"{name}-jobs", Attributes={"VisibilityTimeout": "10"})["QueueUrl"]

    deploy(cloudformation, name, {"Jobs": queue(f"{name}-jobs", VisibilityTimeout=30)}, "direct", "CREATE")

    wait_for_status(cloudformation, name, "ROLLBACK_COMPLETE")
    (failed,) = [
        (logical, reason)
        for logical, status, reason in events(cloudformation, name)
        if status == "CREATE_FAILED"
    ]
    assert failed[0] == "Jobs" and "HandlerErrorCode: AlreadyExists" in failed[1]
    assert sqs.get_queue_attributes(QueueUrl=existing, AttributeNames=["VisibilityTimeout"])[
        "Attributes"
    ] == {"VisibilityTimeout": "10"}
    cloudformation.delete_stack(StackName=name)
    sqs.delete_queue(QueueUrl=existing)


@pytest.mark.parametrize("method", ["direct", "change set"])
def test_a_failed_update_rolls_back_and_keeps_the_previous_resources(emulator, method):
    """An update that adds a queue and a table whose name is taken, changes a queue and drops a
    table: the new table's CREATE_FAILED, UPDATE_ROLLBACK_COMPLETE, the added queue deleted, the
    changed one as it was, and the dropped table still there with its item (CloudFormation deletes
    what an update removes only once the update has succeeded). The stack then updates again."""
    name = unique("cfn-update")
    dynamodb, cloudformation, sqs = (emulator.client(s) for s in ("dynamodb", "cloudformation", "sqs"))
    dynamodb.create_table(TableName=f"{name}-taken", **KEY)
    deploy(
        cloudformation,
        name,
        {"Jobs": queue(f"{name}-jobs", VisibilityTimeout=30), "Kept": table(f"{name}-kept")},
        "direct",
        "CREATE",
    )
    wait_for_status(cloudformation, name, "CREATE_COMPLETE")
    dynamodb.put_item(TableName=f"{name}-kept", Item=ITEM)
    jobs = sqs.get_queue_url(QueueName=f"{name}-jobs")["QueueUrl"]

    failing = {
        "Jobs": queue(f"{name}-jobs", VisibilityTimeout=60),
        "Other": queue(f"{name}-other"),
        "Taken": table(f"{name}-taken", DependsOn="Other"),
    }
    deploy(cloudformation, name, failing, method, "UPDATE")

    wait_for_status(cloudformation, name, "UPDATE_ROLLBACK_COMPLETE")
    seen = events(cloudformation, name)
    (failed,) = [(logical, reason) for logical, status, reason in seen if status.endswith("_FAILED")]
    assert failed[0] == "Taken" and f"'{name}-taken' already exists." in failed[1]
    assert (
        name,
        "UPDATE_ROLLBACK_IN_PROGRESS",
        "The following resource(s) failed to create: [Taken].",
    ) in seen
    assert read_in_order_by_time(cloudformation, name)
    assert queue_names(emulator, name) == [f"{name}-jobs"]
    assert sqs.get_queue_attributes(QueueUrl=jobs, AttributeNames=["VisibilityTimeout"])["Attributes"] == {
        "VisibilityTimeout": "30"
    }
    assert dynamodb.scan(TableName=f"{name}-kept")["Items"] == [ITEM]
    resources = cloudformation.list_stack_resources(StackName=name)["StackResourceSummaries"]
    assert sorted(r["LogicalResourceId"] for r in resources) == ["Jobs", "Kept"]

    fixed = {"Jobs": queue(f"{name}-jobs", VisibilityTimeout=60), "Other": queue(f"{name}-other")}
    deploy(cloudformation, name, fixed, method, "UPDATE")
    wait_for_status(cloudformation, name, "UPDATE_COMPLETE")
    assert queue_names(emulator, name) == [f"{name}-jobs", f"{name}-other"]
    assert f"{name}-kept" not in dynamodb.list_tables()["TableNames"]
    cloudformation.delete_stack(StackName=name)
    dynamodb.delete_table(TableName=f"{name}-taken")


def test_an_error_escaping_an_action_is_answered_in_cloudformations_protocol(emulator):
    """What moto fails at inside an action (here: executing a change set that does not exist)
    reaches the SDK as a CloudFormation error it can read, never as a 500 page."""
    cloudformation = emulator.new_client("cloudformation", retries={"max_attempts": 1})
    with pytest.raises(ClientError) as refused:
        cloudformation.execute_change_set(ChangeSetName="no-such-change-set", StackName=unique("cfn-none"))
    assert refused.value.response["Error"]["Code"]
    assert refused.value.response["Error"]["Message"]
