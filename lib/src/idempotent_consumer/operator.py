"""What a human operator of the consumer may do, as one managed policy to attach to their role or
group, and the audit log group their dead-letter discards are recorded in.

The policy is exactly what `python -m ops status|view|dlq` use: read the consumer's state,
classify the dead-letter queue against the orders table, send safe messages back to the jobs
queue, discard a message with an audit record. It cannot write to a table, change a table or a
queue, or delete an audit record; sending to the jobs queue (a redrive) lets it have the worker
write an order, as any producer can (docs/operations.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import ArnFormat, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .nag import acknowledge
from .rules import DLQ_AUDIT_STREAM, ConsumerNames


class OperatorAccess(Construct):
    """The operator's managed policy (`<prefix>-operator`) and the audit log group of dead-letter
    discards (`<prefix>-dlq-audit`)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        names: ConsumerNames,
        queue: sqs.IQueue,
        dead_letter_queue: sqs.IQueue,
        orders_table: dynamodb.ITable,
        also_scanned: Sequence[dynamodb.ITable] = (),
        worker_function: lambda_.IFunction,
        worker_log_group: logs.ILogGroup,
        audit_removal: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        # Discards are decisions about orders: kept two years, and with the orders when retained.
        self.audit_log_group = logs.LogGroup(
            self,
            "DlqAudit",
            log_group_name=names.dlq_audit_log_group,
            retention=logs.RetentionDays.TWO_YEARS,
            removal_policy=audit_removal,
        )
        # A given name is written out; CloudFormation's own is a reference to the group.
        audit_group_name = names.dlq_audit_log_group or self.audit_log_group.log_group_name
        stack = Stack.of(self)
        stack_name = stack.stack_name
        stack_arn = stack.format_arn(
            service="cloudformation", resource="stack", resource_name=f"{stack_name}/*"
        )

        def allow(sid: str, actions: list[str], resources: list[str]) -> iam.PolicyStatement:
            return iam.PolicyStatement(sid=sid, actions=actions, resources=resources)

        self.policy = iam.ManagedPolicy(
            self,
            "Policy",
            managed_policy_name=names.operator_policy,
            description=f"Operate {stack_name}: status, live view, dead-letter list/redrive/discard/audit",
            statements=[
                # GetTemplate: `ops cost` counts the alarms and dashboard the deployed stack bills monthly.
                allow(
                    "ReadStack", ["cloudformation:DescribeStacks", "cloudformation:GetTemplate"], [stack_arn]
                ),
                allow(
                    "ReadQueues",
                    ["sqs:GetQueueAttributes", "sqs:GetQueueUrl"],
                    [queue.queue_arn, dead_letter_queue.queue_arn],
                ),
                # ListEventSourceMappings and GetMetricData take no resource (IAM allows only "*");
                # DescribeAlarms by name prefix is a list call, authorized on "*" too.
                allow(
                    "ReadMappingsMetricsAlarms",
                    [
                        "lambda:ListEventSourceMappings",
                        "cloudwatch:GetMetricData",
                        "cloudwatch:DescribeAlarms",
                    ],
                    ["*"],
                ),
                # Whether the worker is still deployed (`ops status --cleanup`), not its code.
                allow("ReadWorker", ["lambda:GetFunctionConfiguration"], [worker_function.function_arn]),
                allow(
                    "ReadTables",
                    ["dynamodb:Scan"],
                    [orders_table.table_arn, *(t.table_arn for t in also_scanned)],
                ),
                allow("ClassifyDeadLetters", ["dynamodb:BatchGetItem"], [orders_table.table_arn]),
                allow("ReadWorkerLog", ["logs:FilterLogEvents"], [worker_log_group.log_group_arn]),
                allow(
                    "HoldAndRemoveDeadLetters",
                    ["sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage"],
                    [dead_letter_queue.queue_arn],
                ),
                allow("SendBackToJobs", ["sqs:SendMessage"], [queue.queue_arn]),
                # Records go to one stream; the group is read whole. Nothing here deletes either.
                allow(
                    "AuditDiscards",
                    ["logs:CreateLogStream", "logs:PutLogEvents"],
                    [
                        stack.format_arn(
                            service="logs",
                            resource="log-group",
                            arn_format=ArnFormat.COLON_RESOURCE_NAME,
                            resource_name=f"{audit_group_name}:log-stream:{DLQ_AUDIT_STREAM}",
                        )
                    ],
                ),
                allow("ReadAudit", ["logs:FilterLogEvents"], [self.audit_log_group.log_group_arn]),
            ],
        )
        self._acknowledge_wildcards(stack_name)

    def _acknowledge_wildcards(self, stack_name: str) -> None:
        # cdk-nag 3 acknowledges each wildcard finding on its own, named by the resource it found.
        acknowledge(
            self.policy,
            rule="AwsSolutions-IAM5[Resource::*]",
            reason="lambda:ListEventSourceMappings and cloudwatch:GetMetricData support no resource-level "
            "permissions and DescribeAlarms by prefix is a list call; all three only read.",
        )
        acknowledge(
            self.policy,
            rule=f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:cloudformation:<AWS::Region>:"
            f"<AWS::AccountId>:stack/{stack_name}/*]",
            reason="A stack's ARN ends in an id CloudFormation assigns at creation; the wildcard matches "
            "only that id under this stack's own name, for DescribeStacks and GetTemplate (read only).",
        )
