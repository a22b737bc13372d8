"""IdempotentConsumer (stacks/consumer.py) in a stack of another team's: any construct id, its own
names, and what it exposes is what it made. The lab's stack is its first user
(tests/infra/test_template.py pins that its logical ids did not change)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.jsii  # run in one worker with the other synthesizing modules (conftest.py)


def test_a_team_builds_the_consumer_in_its_own_stack():
    """A stack of its own, the construct under the id `Payments`, prefix `pay`: one queue pair,
    one guarded table and one worker of that prefix; the exposed queue, table and function are
    the ones in the template, and the worker's role may put items into that table only."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Match, Template

    from stacks.config import StackConfig
    from stacks.consumer import IdempotentConsumer

    app = cdk.App()
    stack = cdk.Stack(app, "payments")
    config = StackConfig.from_context({"prefix": "pay", "removal": "destroy"})
    consumer = IdempotentConsumer(stack, "Payments", config=config)
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
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Action": "dynamodb:PutItem",
                                "Resource": [{"Fn::GetAtt": [next(iter(tables)), "Arn"]}],
                            }
                        )
                    ]
                )
            }
        },
    )
