"""IdempotentConsumer (lib/src/idempotent_consumer) as another team uses it: the payments example
(examples/payments) and stacks of its own, with any construct id, its own names or none, and props
that refuse a wrong value in one line naming it. The lab's stack is its first user
(tests/infra/test_template.py pins that its logical ids did not change)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import synth_app

pytestmark = pytest.mark.jsii  # run in one worker with the other synthesizing modules (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "payments"
HANDLER = EXAMPLE / "payments"
# Every property that gives a resource its physical name.
NAME_PROPERTIES = (
    "TableName",
    "QueueName",
    "FunctionName",
    "LogGroupName",
    "AlarmName",
    "TopicName",
    "DashboardName",
    "ManagedPolicyName",
)


def synth_example(outdir: Path) -> dict[str, Any]:
    """examples/payments/app.py run as `cdk synth` runs it, in this process; its stack's template."""
    synth_app(EXAMPLE / "app.py", {}, outdir)
    template: dict[str, Any] = json.loads((outdir / "payments-consumer.template.json").read_text())
    return template


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("payments")
    return outdir, synth_example(outdir)


def of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {key: r for key, r in template["Resources"].items() if r["Type"] == kind}


def test_the_payments_example_guards_payment_id_in_names_of_its_own(example):
    """The example's table is keyed on payment_id, its worker is told so, every name is its own
    (`payments-*`, no `labex` anywhere), and its outputs are the ones `ops --stack` reads."""
    _, template = example
    assert "labex" not in json.dumps(template)
    (table,) = of_type(template, "AWS::DynamoDB::Table").values()
    assert table["Properties"]["KeySchema"] == [{"AttributeName": "payment_id", "KeyType": "HASH"}]
    assert table["Properties"]["TableName"] == "payments-orders"
    assert table["DeletionPolicy"] == "Retain"
    (function,) = of_type(template, "AWS::Lambda::Function").values()
    assert function["Properties"]["FunctionName"] == "payments-worker"
    assert function["Properties"]["Environment"]["Variables"]["KEY_ATTRIBUTE"] == "payment_id"
    assert set(template["Outputs"]) >= {
        "QueueUrl",
        "DeadLetterQueueUrl",
        "OrdersTableName",
        "FunctionName",
        "LogGroupName",
        "DlqAuditLogGroupName",
    }


def test_the_example_worker_package_is_its_handler_and_the_library(example):
    """The example's function package is its own app.py and the handler library, nothing of the lab's."""
    outdir, template = example
    (function,) = of_type(template, "AWS::Lambda::Function").values()
    asset = outdir / f"asset.{function['Properties']['Code']['S3Key'].removesuffix('.zip')}"
    files = sorted(str(p.relative_to(asset)) for p in asset.rglob("*") if p.is_file())
    assert files[0] == "app.py" and "order_rules.py" not in files
    assert {f for f in files if f != "app.py"} == {
        f"guarded_consumer/{name}"
        for name in (
            "__init__.py",
            "contract.py",
            "log_lines.py",
            "records.py",
            "sqs_batch.py",
            "write_guard.py",
        )
    }


def test_a_team_builds_the_consumer_in_its_own_stack():
    """A stack of its own, the construct under the id `Payments`, prefix `pay`: one queue pair,
    one guarded table and one worker of that prefix; the exposed queue, table and function are
    the ones in the template, and the worker's role may put items into that table only."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from idempotent_consumer import ConsumerNames, ConsumerProps, IdempotentConsumer

    app = cdk.App()
    stack = cdk.Stack(app, "payments")
    props = ConsumerProps(handler=HANDLER, key_attribute="payment_id", names=ConsumerNames("pay"))
    consumer = IdempotentConsumer(stack, "Payments", props=props)
    template = Template.from_stack(stack)

    template.resource_count_is("AWS::DynamoDB::Table", 1)
    template.resource_count_is("AWS::SQS::Queue", 2)
    template.has_resource_properties("AWS::DynamoDB::Table", {"TableName": "pay-orders"})
    template.has_resource_properties("AWS::Lambda::Function", {"FunctionName": "pay-worker"})
    resolve = stack.resolve
    tables = template.find_resources("AWS::DynamoDB::Table")
    assert resolve(consumer.table.table_name) == {"Ref": next(iter(tables))}
    queues = template.find_resources("AWS::SQS::Queue", {"Properties": {"QueueName": "pay-jobs"}})
    assert resolve(consumer.queue.queue_url) == {"Ref": next(iter(queues))}
    assert set(consumer.alarms) and all(a.node.scope is not None for a in consumer.alarms.values())
    # The worker's one table grant (a list or one resource, by the app's minimizePolicies flag).
    puts = [
        statement
        for policy in template.find_resources("AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if "dynamodb:PutItem" in statement["Action"]
    ]
    assert len(puts) == 1 and puts[0]["Action"] == "dynamodb:PutItem"
    resource = puts[0]["Resource"]
    assert (resource if isinstance(resource, list) else [resource]) == [
        {"Fn::GetAtt": [next(iter(tables)), "Arn"]}
    ]


def test_without_names_no_physical_name_is_forced():
    """No `names`: CloudFormation names every resource; the topic admits exactly the consumer's
    alarms by their ARNs, and two consumers live in one stack side by side."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from idempotent_consumer import ConsumerProps, IdempotentConsumer

    app = cdk.App()
    stack = cdk.Stack(app, "two-teams")
    first = IdempotentConsumer(
        stack, "Payments", props=ConsumerProps(handler=HANDLER, key_attribute="payment_id")
    )
    IdempotentConsumer(stack, "Refunds", props=ConsumerProps(handler=HANDLER, key_attribute="payment_id"))
    template = Template.from_stack(stack).to_json()
    named = [
        (key, prop)
        for key, resource in template["Resources"].items()
        for prop in NAME_PROPERTIES
        if isinstance(resource.get("Properties", {}).get(prop), str)  # a reference names nothing
    ]
    assert named == []
    (policy,) = [
        r
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SNS::TopicPolicy"
        and stack.resolve(first.topic.topic_arn) in r["Properties"]["Topics"]
    ]
    allow = next(s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Allow")
    arns = allow["Condition"]["ArnEquals"]["aws:SourceArn"]
    assert arns == [stack.resolve(alarm.alarm_arn) for alarm in first.alarms.values()]


def test_a_team_brings_its_own_table_and_queues():
    """existing_table and existing_queue/existing_dead_letter_queue: the construct makes no table
    or queue; the worker may put items into the given table and is fed by the given queue."""
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as dynamodb
    from aws_cdk import aws_sqs as sqs
    from aws_cdk.assertions import Template

    from idempotent_consumer import ConsumerProps, IdempotentConsumer

    app = cdk.App()
    stack = cdk.Stack(app, "brought", env=cdk.Environment(account="123456789012", region="us-east-1"))
    table = dynamodb.Table.from_table_name(stack, "Ledger", "payments-ledger")
    queue = sqs.Queue.from_queue_arn(stack, "Jobs", "arn:aws:sqs:us-east-1:123456789012:payments-in")
    dlq = sqs.Queue.from_queue_arn(stack, "Dead", "arn:aws:sqs:us-east-1:123456789012:payments-in-dlq")
    props = ConsumerProps(
        handler=HANDLER,
        key_attribute="payment_id",
        existing_table=table,
        existing_queue=queue,
        existing_dead_letter_queue=dlq,
    )
    IdempotentConsumer(stack, "Payments", props=props)
    template = Template.from_stack(stack).to_json()
    kinds = [resource["Type"] for resource in template["Resources"].values()]
    assert "AWS::DynamoDB::Table" not in kinds and "AWS::SQS::Queue" not in kinds
    (mapping,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert mapping["Properties"]["EventSourceArn"] == "arn:aws:sqs:us-east-1:123456789012:payments-in"
    (put,) = [
        statement
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
        if statement["Action"] == "dynamodb:PutItem"
    ]
    assert ":table/payments-ledger" in json.dumps(put["Resource"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"batch_size": 11}, "batch_size=11 is invalid: use a whole number from 1 to 10"),
        ({"batch_size": True}, "batch_size=True is invalid: use a whole number from 1 to 10"),
        (
            {"visibility_timeout_seconds": 20},
            "visibility_timeout_seconds=20 is below 6 x function_timeout_seconds=5 (needs at least 30)",
        ),
        (
            {"dead_letter_retention_days": 7},
            "dead_letter_retention_days=7 is invalid: it must exceed job_retention_days=7",
        ),
        (
            {"order_retention_days": 20},
            "order_retention_days=20 is shorter than the 21 days a copy of a record can still be delivered",
        ),
        ({"content_based_deduplication": True}, "content_based_deduplication=True needs fifo=True"),
        ({"key_attribute": "payment id"}, "key_attribute='payment id' is invalid"),
        ({"handler": Path("/nowhere")}, "handler='/nowhere' is invalid"),
        ({"alarm_email": "ops"}, "alarm_email='ops' is invalid"),
        ({"fifo": True}, "names.fifo=False differs from fifo=True"),
        ({"existing_queue": "given"}, "existing_queue and existing_dead_letter_queue go together"),
    ],
)
def test_a_wrong_prop_is_refused_in_one_line_naming_it(change, message):
    """Each wrong prop stops the construction with one line that starts with its name and value."""
    from idempotent_consumer import ConsumerProps, PropsError

    with pytest.raises(PropsError) as refused:
        ConsumerProps(**{"handler": HANDLER, **change})
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


def test_the_props_table_names_every_prop_with_its_default():
    """docs/construct.md's props table has a row for each ConsumerProps field, with its default."""
    from idempotent_consumer.props import ConsumerProps

    rows = {
        m[1]: m[2]
        for m in re.finditer(
            r"^\| `(\w+)` \| (.+?) \|", (ROOT / "docs" / "construct.md").read_text(), re.MULTILINE
        )
    }
    expected = {}
    for field in dataclasses.fields(ConsumerProps):
        if field.default is not dataclasses.MISSING:
            default = field.default
            shown = f"`{default!r}`" if not hasattr(default, "name") else f"`RemovalPolicy.{default.name}`"
            expected[field.name] = shown.replace("'", '"')
        elif field.default_factory is not dataclasses.MISSING:
            expected[field.name] = f"`{type(field.default_factory()).__name__}()`"
        else:
            expected[field.name] = "(required)"
    assert rows == expected
