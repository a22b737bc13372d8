"""The operator's managed policy, statement by statement, and the audit log group its discards go to."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.conftest import synth_stack
from tests.infra import assertions

if TYPE_CHECKING:
    from aws_cdk.assertions import Template

pytestmark = pytest.mark.jsii  # run in one worker with the other synthesizing modules (conftest.py)

PREFIX = "labex-q05"


def arn_of(template: Template, resource_type: str, properties: dict) -> dict:
    found = template.find_resources(resource_type, {"Properties": assertions.Match.object_like(properties)})
    assert len(found) == 1, found
    return {"Fn::GetAtt": [next(iter(found)), "Arn"]}


def test_operator_policy_is_exactly_what_the_tools_need(template):
    """Read the state (stack, queues, mapping, worker function, tables, worker log, alarms,
    metrics), classify the DLQ (BatchGetItem on orders), hold and remove DLQ messages, send to the
    jobs queue, write and read audit records, writing to the one audit stream. Nothing else: no
    writes to tables, no queue changes, no deletes of logs, no other log stream."""
    (policy,) = template.find_resources(
        "AWS::IAM::ManagedPolicy", {"Properties": {"ManagedPolicyName": f"{PREFIX}-operator"}}
    ).values()
    jobs = arn_of(template, "AWS::SQS::Queue", {"QueueName": f"{PREFIX}-jobs"})
    dlq = arn_of(template, "AWS::SQS::Queue", {"QueueName": f"{PREFIX}-jobs-dlq"})
    orders = arn_of(template, "AWS::DynamoDB::Table", {"TableName": f"{PREFIX}-orders"})
    reference = arn_of(template, "AWS::DynamoDB::Table", {"TableName": f"{PREFIX}-reference"})
    worker_log = arn_of(template, "AWS::Logs::LogGroup", {"LogGroupName": f"/aws/lambda/{PREFIX}-worker"})
    worker = arn_of(template, "AWS::Lambda::Function", {"FunctionName": f"{PREFIX}-worker"})
    audit_log = arn_of(template, "AWS::Logs::LogGroup", {"LogGroupName": f"{PREFIX}-dlq-audit"})

    def joined(suffix: str) -> dict:
        return {
            "Fn::Join": [
                "",
                [
                    "arn:",
                    {"Ref": "AWS::Partition"},
                    suffix.split("|")[0],
                    {"Ref": "AWS::Region"},
                    ":",
                    {"Ref": "AWS::AccountId"},
                    suffix.split("|")[1],
                ],
            ]
        }

    statements = {
        s["Sid"]: (sorted([s["Action"]] if isinstance(s["Action"], str) else s["Action"]), s["Resource"])
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
    }
    assert all(s["Effect"] == "Allow" for s in policy["Properties"]["PolicyDocument"]["Statement"])
    assert statements == {
        "ReadStack": (
            ["cloudformation:DescribeStacks", "cloudformation:GetTemplate"],
            joined(f":cloudformation:|:stack/{PREFIX}-consumer/*"),
        ),
        "ReadQueues": (["sqs:GetQueueAttributes", "sqs:GetQueueUrl"], [dlq, jobs]),
        "ReadMappingsMetricsAlarms": (
            ["cloudwatch:DescribeAlarms", "cloudwatch:GetMetricData", "lambda:ListEventSourceMappings"],
            "*",
        ),
        "ReadWorker": (["lambda:GetFunctionConfiguration"], worker),
        "ReadTables": (["dynamodb:Scan"], [orders, reference]),
        "ClassifyDeadLetters": (["dynamodb:BatchGetItem"], orders),
        "ReadWorkerLog": (["logs:FilterLogEvents"], worker_log),
        "HoldAndRemoveDeadLetters": (
            ["sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:ReceiveMessage"],
            dlq,
        ),
        "SendBackToJobs": (["sqs:SendMessage"], jobs),
        "AuditDiscards": (
            ["logs:CreateLogStream", "logs:PutLogEvents"],
            joined(f":logs:|:log-group:{PREFIX}-dlq-audit:log-stream:discards"),
        ),
        "ReadAudit": (["logs:FilterLogEvents"], audit_log),
    }


def test_audit_log_group_keeps_two_years_and_follows_the_removal_policy(template):
    template.has_resource(
        "AWS::Logs::LogGroup",
        {
            "Properties": {"LogGroupName": f"{PREFIX}-dlq-audit", "RetentionInDays": 731},
            "DeletionPolicy": "Retain",
        },
    )
    _, stack = synth_stack({"removal": "destroy"})
    assertions.Template.from_stack(stack).has_resource(
        "AWS::Logs::LogGroup",
        {"Properties": {"LogGroupName": f"{PREFIX}-dlq-audit"}, "DeletionPolicy": "Delete"},
    )
