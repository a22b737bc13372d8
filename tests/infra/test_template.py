"""The synthesized template, property by property: queues, tables, the seeded item, the worker
function and mapping, and above all the worker role's exact permissions."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import synth_stack
from tests.infra import assertions

if TYPE_CHECKING:
    from aws_cdk.assertions import Template

pytestmark = pytest.mark.jsii  # run in one worker with the other synthesizing modules (conftest.py)

QUEUE = "labex-q05-jobs"
WORKER = "labex-q05-worker"


def only(template: Template, resource_type: str, properties: dict) -> tuple[str, dict]:
    """The single resource of a type matching the properties: (logical id, resource)."""
    found = template.find_resources(resource_type, {"Properties": assertions.Match.object_like(properties)})
    assert len(found) == 1, f"expected one {resource_type} matching {properties}, found {len(found)}"
    logical_id, resource = next(iter(found.items()))
    return logical_id, resource


def role_statements(template: Template, function_name: str) -> list[dict]:
    """All policy statements attached to the role of the named function."""
    _, function = only(template, "AWS::Lambda::Function", {"FunctionName": function_name})
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    role = template.to_json()["Resources"][role_id]
    assert "Policies" not in role["Properties"], "inline policies on the role itself"
    policies = template.find_resources("AWS::IAM::Policy", {"Properties": {"Roles": [{"Ref": role_id}]}})
    assert len(policies) == 1
    statements: list[dict] = next(iter(policies.values()))["Properties"]["PolicyDocument"]["Statement"]
    return statements


def logical_id(template: Template, resource_type: str, properties: dict) -> str:
    return only(template, resource_type, properties)[0]


def test_jobs_queue_redrives_to_dlq_with_sse_and_visibility(template):
    """Jobs queue: 30 s visibility, 7-day retention (shorter than the DLQ's), SQS-managed SSE, redrive to the DLQ
    after 5 receives, and kept on destroy by default like the DLQ (it holds orders not yet stored)."""
    dlq = logical_id(template, "AWS::SQS::Queue", {"QueueName": f"{QUEUE}-dlq"})
    template.has_resource(
        "AWS::SQS::Queue",
        {
            "Properties": {
                "QueueName": QUEUE,
                "VisibilityTimeout": 30,
                "MessageRetentionPeriod": 7 * 86400,
                "SqsManagedSseEnabled": True,
                "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": [dlq, "Arn"]}, "maxReceiveCount": 5},
            },
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
        },
    )


def test_dead_letter_queue_keeps_messages_14_days_and_is_retained(template):
    """DLQ: 14-day retention (7 more than the jobs queue: SQS counts a dead letter's expiry from
    its first enqueue), SSE, and kept on destroy by default (it holds orders for a human)."""
    template.has_resource(
        "AWS::SQS::Queue",
        {
            "Properties": {
                "QueueName": f"{QUEUE}-dlq",
                "MessageRetentionPeriod": 1209600,
                "SqsManagedSseEnabled": True,
                "RedrivePolicy": assertions.Match.absent(),
            },
            "DeletionPolicy": "Retain",
        },
    )


@pytest.mark.parametrize("queue_name", [QUEUE, f"{QUEUE}-dlq"])
def test_queues_deny_plain_http(template, queue_name):
    """Both queues carry a policy denying any request without TLS."""
    queue = logical_id(template, "AWS::SQS::Queue", {"QueueName": queue_name})
    template.has_resource_properties(
        "AWS::SQS::QueuePolicy",
        {
            "Queues": [{"Ref": queue}],
            "PolicyDocument": {
                "Statement": assertions.Match.array_with(
                    [
                        assertions.Match.object_like(
                            {
                                "Effect": "Deny",
                                "Action": "sqs:*",
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        )
                    ]
                )
            },
        },
    )


@pytest.mark.parametrize("table_name", ["labex-q05-orders", "labex-q05-reference"])
def test_tables_keyed_on_id_on_demand_with_pitr_and_retained(template, table_name):
    """Both tables: partition key id (S), on-demand, PITR, retained on destroy by default."""
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "Properties": {
                "TableName": table_name,
                "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
                "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
            },
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
        },
    )


def test_removal_destroy_removes_tables_and_dlq():
    """`-c removal=destroy` makes every stateful resource go with the stack."""
    _, stack = synth_stack({"removal": "destroy"})
    template = assertions.Template.from_stack(stack)
    for resource_type in ("AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::Logs::LogGroup"):
        for resource in template.find_resources(resource_type).values():
            assert resource.get("DeletionPolicy", "Delete") == "Delete", resource_type


@pytest.mark.parametrize("removal, protected", [("retain", True), ("destroy", False)])
def test_termination_protection_follows_removal(removal, protected):
    """removal=retain (the default) deploys the stack with termination protection, so `cdk destroy`
    is refused until it is turned off; removal=destroy (labs, local runs) deploys it unprotected.
    It is in the cloud assembly's manifest, which the CDK CLI reads, not in the template."""
    app, stack = synth_stack({"removal": removal})
    assert stack.termination_protection is protected
    assert app.synth().get_stack_by_name(stack.stack_name).termination_protection is protected


def test_reference_item_is_seeded_by_custom_resource(template):
    """The stack puts {"id": "reference", "note": "keep unchanged"} into the reference table."""
    reference = logical_id(template, "AWS::DynamoDB::Table", {"TableName": "labex-q05-reference"})
    seeder = logical_id(template, "AWS::Lambda::Function", {"FunctionName": "labex-q05-reference-seeder"})
    template.has_resource_properties(
        "Custom::SeededItem",
        {
            "ServiceToken": {"Fn::GetAtt": [seeder, "Arn"]},
            "TableName": {"Ref": reference},
            "Item": '{"id": "reference", "note": "keep unchanged"}',
        },
    )


def test_worker_function(template):
    """Worker: name, handler app.handler, Python runtime, 5 s timeout, TABLE_NAME -> orders
    table, logging to its explicit log group."""
    orders = logical_id(template, "AWS::DynamoDB::Table", {"TableName": "labex-q05-orders"})
    logs = logical_id(template, "AWS::Logs::LogGroup", {"LogGroupName": f"/aws/lambda/{WORKER}"})
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "FunctionName": WORKER,
            "Handler": "app.handler",
            "Runtime": assertions.Match.string_like_regexp(r"^python3\.\d+$"),
            "Timeout": 5,
            "Environment": {"Variables": {"TABLE_NAME": {"Ref": orders}}},
            "LoggingConfig": {"LogGroup": {"Ref": logs}},
        },
    )


def test_visibility_timeout_is_at_least_six_times_function_timeout(template):
    """The Lambda rule for SQS sources, checked on the template values."""
    _, queue = only(template, "AWS::SQS::Queue", {"QueueName": QUEUE})
    _, function = only(template, "AWS::Lambda::Function", {"FunctionName": WORKER})
    assert queue["Properties"]["VisibilityTimeout"] >= 6 * function["Properties"]["Timeout"]


def test_worker_log_group_has_retention_and_goes_with_stack(template):
    """Explicit log group /aws/lambda/labex-q05-worker with retention, deleted on destroy."""
    template.has_resource(
        "AWS::Logs::LogGroup",
        {
            "Properties": {"LogGroupName": f"/aws/lambda/{WORKER}", "RetentionInDays": 30},
            "DeletionPolicy": "Delete",
        },
    )


def test_event_source_mapping(template):
    """Jobs queue -> worker, batch size 1, enabled, partial batch responses."""
    queue = logical_id(template, "AWS::SQS::Queue", {"QueueName": QUEUE})
    function = logical_id(template, "AWS::Lambda::Function", {"FunctionName": WORKER})
    template.resource_count_is("AWS::Lambda::EventSourceMapping", 1)
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "EventSourceArn": {"Fn::GetAtt": [queue, "Arn"]},
            "FunctionName": {"Ref": function},
            "BatchSize": 1,
            "Enabled": True,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
        },
    )


def test_batch_size_comes_from_context():
    """`-c batch_size=10` reaches the mapping."""
    _, stack = synth_stack({"batch_size": "10"})
    assertions.Template.from_stack(stack).has_resource_properties(
        "AWS::Lambda::EventSourceMapping", {"BatchSize": 10}
    )


def test_worker_role_is_lambda_only_with_no_managed_policy(template):
    """The worker's role trusts only Lambda and carries no managed or inline policy."""
    _, function = only(template, "AWS::Lambda::Function", {"FunctionName": WORKER})
    role = template.to_json()["Resources"][function["Properties"]["Role"]["Fn::GetAtt"][0]]
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"] == [
        {"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}}
    ]
    assert "ManagedPolicyArns" not in role["Properties"]
    assert "Policies" not in role["Properties"]


def test_worker_policy_is_exactly_queue_consume_putitem_and_own_logs(template):
    """Exactly three statements: receive/delete/get-attributes on the jobs queue, PutItem on the
    orders table, create-stream/put-events on its own log group. Nothing else."""
    queue = logical_id(template, "AWS::SQS::Queue", {"QueueName": QUEUE})
    orders = logical_id(template, "AWS::DynamoDB::Table", {"TableName": "labex-q05-orders"})
    logs = logical_id(template, "AWS::Logs::LogGroup", {"LogGroupName": f"/aws/lambda/{WORKER}"})
    statements = role_statements(template, WORKER)
    normalized = sorted(
        (
            sorted([s["Action"]] if isinstance(s["Action"], str) else s["Action"]),
            s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]],
            s["Effect"],
        )
        for s in statements
    )
    assert normalized == sorted(
        [
            (
                ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"],
                [{"Fn::GetAtt": [queue, "Arn"]}],
                "Allow",
            ),
            (["dynamodb:PutItem"], [{"Fn::GetAtt": [orders, "Arn"]}], "Allow"),
            (["logs:CreateLogStream", "logs:PutLogEvents"], [{"Fn::GetAtt": [logs, "Arn"]}], "Allow"),
        ]
    )
    assert all("Condition" not in s and "NotAction" not in s and "NotResource" not in s for s in statements)


def test_seeder_may_only_put_into_reference_table(template):
    """The seeder role: PutItem on the reference table and its own logs, nothing else."""
    reference = logical_id(template, "AWS::DynamoDB::Table", {"TableName": "labex-q05-reference"})
    statements = role_statements(template, "labex-q05-reference-seeder")
    actions = sorted(
        a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    )
    assert actions == ["dynamodb:PutItem", "logs:CreateLogStream", "logs:PutLogEvents"]
    put = next(s for s in statements if s["Action"] == "dynamodb:PutItem")
    assert put["Resource"] == [{"Fn::GetAtt": [reference, "Arn"]}] or put["Resource"] == {
        "Fn::GetAtt": [reference, "Arn"]
    }


def test_no_policy_uses_a_wildcard_resource_or_managed_policy(template):
    """No identity policy in the stack grants on Resource '*' and no role has a managed policy."""
    for policy in template.find_resources("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            resources = (
                statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            )
            assert "*" not in resources
    for role in template.find_resources("AWS::IAM::Role").values():
        assert "ManagedPolicyArns" not in role["Properties"]


def test_outputs_name_everything_a_user_needs(template):
    """Outputs: queue URL/ARN, DLQ URL, table names, function, log group, mapping id."""
    outputs = template.to_json()["Outputs"]
    for key in (
        "QueueUrl",
        "QueueArn",
        "DeadLetterQueueUrl",
        "OrdersTableName",
        "ReferenceTableName",
        "FunctionName",
        "LogGroupName",
        "EventSourceMappingId",
    ):
        assert key in outputs, key


def test_every_target_keeps_the_bootstrap_version_rule(template):
    """CDK's bootstrap-version rule and its SSM parameter are in the template for a real account
    and for target=local alike: the embedded AWS evaluates the rule as CloudFormation does."""
    for found in (
        template.to_json(),
        assertions.Template.from_stack(synth_stack({"target": "local"})[1]).to_json(),
    ):
        assert "CheckBootstrapVersion" in found.get("Rules", {})
        assert found["Parameters"]["BootstrapVersion"]["Type"] == "AWS::SSM::Parameter::Value<String>"


def test_worker_asset_is_the_handler_and_the_library_it_imports(synthesized):
    """The worker's code asset is lambda/worker as-is (no Docker bundling) with the handler
    library (guarded_consumer) beside it, no caches; and nothing in it imports anything beyond the
    standard library, boto3 (with botocore) and its own modules: what Lambda's runtime provides."""
    app, stack = synthesized
    assembly = app.synth()
    template = assembly.get_stack_by_name(stack.stack_name).template
    function = next(
        r
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("FunctionName") == WORKER
    )
    asset_hash = function["Properties"]["Code"]["S3Key"].removesuffix(".zip")
    asset_dir = Path(assembly.directory) / f"asset.{asset_hash}"
    files = sorted(str(p.relative_to(asset_dir)) for p in asset_dir.rglob("*") if p.is_file())
    assert files == [
        "app.py",
        "guarded_consumer/__init__.py",
        "guarded_consumer/contract.py",
        "guarded_consumer/log_lines.py",
        "guarded_consumer/records.py",
        "guarded_consumer/sqs_batch.py",
        "guarded_consumer/write_guard.py",
        "order_rules.py",
    ]
    own = {"app", "order_rules", "guarded_consumer"}
    for name in files:
        for node in ast.walk(ast.parse((asset_dir / name).read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported = [node.module]
            elif isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            else:
                continue
            for module in imported:
                top = module.split(".")[0]
                assert top in sys.stdlib_module_names or top in {"boto3", "botocore"} or top in own, (
                    f"{name} imports {module}"
                )


def test_order_retention_is_the_orders_table_ttl_and_the_workers_env(template):
    """`-c order_retention_days=30`: the orders table's TTL attribute is `expires_at` and the
    worker is told the retention in seconds; by default neither exists (orders kept for ever)."""
    _, orders = only(template, "AWS::DynamoDB::Table", {"TableName": "labex-q05-orders"})
    _, function = only(template, "AWS::Lambda::Function", {"FunctionName": WORKER})
    assert "TimeToLiveSpecification" not in orders["Properties"]
    assert "ORDER_RETENTION_SECONDS" not in function["Properties"]["Environment"]["Variables"]
    retained = assertions.Template.from_stack(synth_stack({"order_retention_days": "30"})[1])
    retained.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "TableName": "labex-q05-orders",
            "TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True},
        },
    )
    retained.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "FunctionName": WORKER,
            "Environment": {
                "Variables": assertions.Match.object_like({"ORDER_RETENTION_SECONDS": "2592000"})
            },
        },
    )


# Types of the stack that CloudFormation cannot tag (no Tags property).
UNTAGGABLE = {
    "AWS::IAM::ManagedPolicy",
    "AWS::IAM::Policy",
    "AWS::Logs::QueryDefinition",
    "AWS::SNS::TopicPolicy",
    "AWS::SQS::QueuePolicy",
    "Custom::SeededItem",
}


def test_tags_reach_every_taggable_resource(template):
    """`-c tags=team=orders,note=a=b`: every resource that takes tags carries both (a value may
    hold `=`); the default template has no tags at all."""
    assert all("Tags" not in r.get("Properties", {}) for r in template.to_json()["Resources"].values())
    tagged = assertions.Template.from_stack(synth_stack({"tags": "team=orders,note=a=b"})[1]).to_json()[
        "Resources"
    ]
    untagged = {r["Type"] for r in tagged.values() if "Tags" not in r.get("Properties", {})}
    assert untagged == UNTAGGABLE
    for resource in tagged.values():
        if resource["Type"] not in UNTAGGABLE:
            tags = resource["Properties"]["Tags"]
            pairs = tags.items() if isinstance(tags, dict) else ((t["Key"], t["Value"]) for t in tags)
            assert {("team", "orders"), ("note", "a=b")} <= set(pairs), resource["Type"]


def test_tracing_adds_exactly_the_two_xray_actions_to_the_worker():
    """`-c tracing=true`: the worker traces actively and its role gains one statement, PutTraceSegments
    and PutTelemetryRecords on '*' (X-Ray has no resource types), in its one policy; the seeder
    is unchanged. Off by default (the exact grants above)."""
    tracing = assertions.Template.from_stack(synth_stack({"tracing": "true"})[1])
    tracing.has_resource_properties(
        "AWS::Lambda::Function", {"FunctionName": WORKER, "TracingConfig": {"Mode": "Active"}}
    )
    added = [s for s in role_statements(tracing, WORKER) if "*" in (s["Resource"], [s["Resource"]])]
    assert added == [
        {"Action": ["xray:PutTelemetryRecords", "xray:PutTraceSegments"], "Effect": "Allow", "Resource": "*"}
    ]
    assert len(role_statements(tracing, WORKER)) == 4
    assert all("xray" not in json.dumps(s) for s in role_statements(tracing, "labex-q05-reference-seeder"))


# The ids the deployed stacks hold their state under: a table, queue or log group whose id changes
# is replaced by the next deploy (a new, empty orders table: the duplicate guard lost).
DEPLOYED_STATE_IDS = {
    "MessagingDeadLetters30EBD3E2": "AWS::SQS::Queue",
    "MessagingJobsBB264806": "AWS::SQS::Queue",
    "OperatorDlqAudit36524C05": "AWS::Logs::LogGroup",
    "ReferenceItemSeederLogs9ECC181C": "AWS::Logs::LogGroup",
    "StorageOrders79EED263": "AWS::DynamoDB::Table",
    "StorageReference7C447470": "AWS::DynamoDB::Table",
    "WorkerHandlerLogsBC93B550": "AWS::Logs::LogGroup",
}


def test_the_state_keeps_its_logical_ids_inside_the_consumer_construct(template):
    """The lab's stack builds the consumer as one construct (lib/src/idempotent_consumer/consumer.py, id `Default`):
    every table, queue and log group keeps the logical id it had when the stack built them itself."""
    kinds = {"AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::Logs::LogGroup"}
    found = {
        logical_id: resource["Type"]
        for logical_id, resource in template.to_json()["Resources"].items()
        if resource["Type"] in kinds
    }
    assert found == DEPLOYED_STATE_IDS
