"""The idempotent order consumer: SQS jobs queue -> Lambda worker -> DynamoDB orders table."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import CfnOutput, Duration, RemovalPolicy, Stack, Tags
from constructs import Construct

from stacks.config import METRICS_NAMESPACE, ORDER_EXPIRY_ATTRIBUTE, REFERENCE_ITEM, StackConfig
from stacks.messaging import Messaging
from stacks.monitoring import Monitoring
from stacks.operator import OperatorAccess
from stacks.storage import SeededItem, Storage
from stacks.worker import Worker

# The worker's whole permission set; the infra tests pin the synthesized policy to exactly this.
WORKER_QUEUE_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
WORKER_TABLE_ACTIONS = ("dynamodb:PutItem",)


class ConsumerStack(Stack):
    """Composes messaging, storage and the worker, grants the worker its few permissions and
    exports every name a user needs."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        names = config.names
        retained = RemovalPolicy.DESTROY if config.destroy_on_removal else RemovalPolicy.RETAIN

        messaging = Messaging(
            self,
            "Messaging",
            queue_name=names.jobs_queue,
            dead_letter_queue_name=names.dead_letter_queue,
            visibility_timeout=Duration.seconds(config.visibility_timeout_seconds),
            max_receive_count=config.max_receive_count,
            removal=retained,
            job_retention=Duration.days(config.job_retention_days),
            dead_letter_retention=Duration.days(config.dead_letter_retention_days),
            fifo=config.fifo,
            content_based_deduplication=config.content_based_deduplication,
        )
        storage = Storage(
            self,
            "Storage",
            orders_table_name=names.orders_table,
            reference_table_name=names.reference_table,
            removal_policy=retained,
            order_expiry_attribute=None if config.order_retention_days is None else ORDER_EXPIRY_ATTRIBUTE,
        )
        reference = SeededItem(
            self,
            "ReferenceItem",
            table=storage.reference_table,
            item=REFERENCE_ITEM,
            function_name=names.seeder_function,
        )
        worker = Worker(
            self,
            "Worker",
            function_name=names.worker_function,
            table_name=storage.orders_table.table_name,
            metrics_namespace=METRICS_NAMESPACE,
            queue=messaging.queue,
            batch_size=config.batch_size,
            max_concurrency=config.max_concurrency,
            timeout=Duration.seconds(config.function_timeout_seconds),
            order_retention_seconds=config.order_retention_seconds,
            tracing=config.tracing,
        )
        messaging.queue.grant(worker.role, *WORKER_QUEUE_ACTIONS)
        storage.orders_table.grant(worker.role, *WORKER_TABLE_ACTIONS)
        monitoring = Monitoring(
            self,
            "Monitoring",
            names=names,
            metrics_namespace=METRICS_NAMESPACE,
            function=worker.function,
            log_group=worker.log_group,
            queue=messaging.queue,
            dead_letter_queue=messaging.dead_letter_queue,
            orders_table=storage.orders_table,
            alarm_settings=config.alarm_settings,
            alarm_email=config.alarm_email,
        )

        operator = OperatorAccess(
            self,
            "Operator",
            names=names,
            queue=messaging.queue,
            dead_letter_queue=messaging.dead_letter_queue,
            orders_table=storage.orders_table,
            reference_table=storage.reference_table,
            worker_function=worker.function,
            worker_log_group=worker.log_group,
            audit_removal=retained,
        )

        outputs = {
            "QueueUrl": messaging.queue.queue_url,
            "QueueArn": messaging.queue.queue_arn,
            "DeadLetterQueueUrl": messaging.dead_letter_queue.queue_url,
            "OrdersTableName": storage.orders_table.table_name,
            "ReferenceTableName": storage.reference_table.table_name,
            "FunctionName": worker.function.function_name,
            "LogGroupName": worker.log_group.log_group_name,
            "EventSourceMappingId": worker.mapping.event_source_mapping_id,
            "SeederFunctionName": reference.seeder.function.function_name,
            "AlarmTopicArn": monitoring.topic.topic_arn,
            "DashboardName": monitoring.dashboard.dashboard_name,
            "DlqAuditLogGroupName": operator.audit_log_group.log_group_name,
            "OperatorPolicyArn": operator.policy.managed_policy_arn,
            # What `ops status` and the live view show as the deployment's options.
            "Options": json.dumps(config.options(), separators=(",", ":")),
        }
        for key, value in outputs.items():
            CfnOutput(self, key, value=value)
        # Every taggable resource below the stack (the stack's own tags stay explicit:
        # @aws-cdk/core:explicitStackTags).
        for key, value in config.tags:
            Tags.of(self).add(key, value)
