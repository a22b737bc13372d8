"""The CloudFormation behaviours the stack relies on, through the embedded AWS: an update changes
resources in place (no new queue, table or function; data kept; the custom resource not run again
for unchanged properties), a delete with removal=retain keeps exactly the retained resources,
with their data and the orders table's deletion protection, and removes the rest. Create, the
custom resource at create, delete with removal=destroy and resources deleted out of band are in
tests/e2e/test_documented_commands.py."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from local.session import LocalSession
from ops import observe
from tests.shared_aws import FAST_TIMEOUTS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(40)]

PREFIX = "cfnrules"
ORDER = {"id": {"S": "cfn-order"}, "quantity": {"N": "2"}, "total_cents": {"N": "600"}}


@pytest.fixture(scope="module")
def deployments(shared_aws, tmp_path_factory):
    """Deploy with removal=retain, then the same stack again with a changed batch size and
    timeouts; yields (first session, outputs before, updated session, outputs after)."""
    workdir = tmp_path_factory.mktemp(PREFIX)
    context = {**FAST_TIMEOUTS, "prefix": PREFIX, "removal": "retain"}
    first = LocalSession(shared_aws.state_dir, context=context)
    assembly = shared_aws.synth(first.context, workdir / "first")
    shared_aws.bootstrap_once(assembly)
    before = first.deploy(bootstrap=False, assembly=assembly)
    first.client("dynamodb").put_item(TableName=before["OrdersTableName"], Item=ORDER)
    changed = {
        **context,
        "batch_size": "10",
        "function_timeout_seconds": "3",
        "visibility_timeout_seconds": "18",
    }
    updated = LocalSession(shared_aws.state_dir, context=changed)
    after = updated.deploy(bootstrap=False, assembly=shared_aws.synth(updated.context, workdir / "updated"))
    yield first, before, updated, after
    _remove_retained(updated)


def _remove_retained(session: LocalSession) -> None:
    """What an operator does by hand once a retained stack's data is no longer wanted."""
    dynamodb, sqs, logs = session.client("dynamodb"), session.client("sqs"), session.client("logs")
    retained = session.leftovers()
    for table in retained["tables"]:
        dynamodb.update_table(TableName=table, DeletionProtectionEnabled=False)
        dynamodb.delete_table(TableName=table)
    for queue_url in retained["queues"]:
        sqs.delete_queue(QueueUrl=queue_url)
    for group in retained["log groups"]:
        logs.delete_log_group(logGroupName=group)


def seeder_requests(session: LocalSession) -> list[str]:
    """The request types the reference seeder (the custom resource's function) has handled."""
    group = f"/aws/lambda/{PREFIX}-reference-seeder"
    events = session.client("logs").filter_log_events(logGroupName=group)["events"]
    return [json.loads(e["message"])["request"] for e in events if e["message"].startswith("{")]


def test_an_update_changes_resources_in_place_and_keeps_their_data(deployments):
    _first, before, updated, after = deployments
    assert {
        key: after[key] for key in ("QueueUrl", "DeadLetterQueueUrl", "OrdersTableName", "FunctionName")
    } == {key: before[key] for key in ("QueueUrl", "DeadLetterQueueUrl", "OrdersTableName", "FunctionName")}
    lambda_api = updated.client("lambda")
    (mapping,) = lambda_api.list_event_source_mappings(FunctionName=after["FunctionName"])[
        "EventSourceMappings"
    ]
    assert mapping["BatchSize"] == 10
    assert lambda_api.get_function_configuration(FunctionName=after["FunctionName"])["Timeout"] == 3
    queue = updated.client("sqs").get_queue_attributes(
        QueueUrl=updated.user_env()["QUEUE_URL"], AttributeNames=["VisibilityTimeout"]
    )["Attributes"]
    assert queue["VisibilityTimeout"] == "18"
    stored = observe.scan_items(updated.client("dynamodb"), after["OrdersTableName"])
    assert [(item["id"], item["quantity"]) for item in stored] == [("cfn-order", 2)]
    reference = updated.client("dynamodb").get_item(
        TableName=after["ReferenceTableName"], Key={"id": {"S": "reference"}}
    )
    assert reference["Item"]["note"] == {"S": "keep unchanged"}
    assert seeder_requests(updated) == ["Create"]  # its properties did not change: not run again
    stack = updated.client("cloudformation").describe_stacks(StackName=updated.stack_name)["Stacks"][0]
    assert stack["StackStatus"] == "UPDATE_COMPLETE"


def test_delete_with_removal_retain_keeps_the_data_and_removes_the_rest(deployments):
    _, _, updated, after = deployments
    updated.delete_stack()
    remaining = updated.leftovers()
    kept = {kind: sorted(names) for kind, names in remaining.items() if names}
    queues = [updated.local_queue_url(after[output]) for output in ("QueueUrl", "DeadLetterQueueUrl")]
    assert kept == {
        "tables": sorted([after["OrdersTableName"], after["ReferenceTableName"]]),
        "queues": sorted(queues),  # the jobs queue's waiting orders are kept too (removal=retain)
        "log groups": [f"{PREFIX}-dlq-audit"],
    }
    dynamodb = updated.client("dynamodb")
    stored = observe.scan_items(dynamodb, after["OrdersTableName"])
    assert [(item["id"], item["total_cents"]) for item in stored] == [("cfn-order", 600)]
    table = dynamodb.describe_table(TableName=after["OrdersTableName"])["Table"]
    assert table["DeletionProtectionEnabled"] is True
    with pytest.raises(ClientError) as refused:
        dynamodb.delete_table(TableName=after["OrdersTableName"])
    assert refused.value.response["Error"]["Code"] in ("ValidationException", "ResourceInUseException")
