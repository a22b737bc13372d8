"""The idempotent order consumer: SQS jobs queue -> Lambda worker -> DynamoDB orders table."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import CfnOutput, RemovalPolicy, Stack, Tags
from constructs import Construct

from stacks.config import REFERENCE_ITEM, StackConfig
from stacks.consumer import IdempotentConsumer
from stacks.storage import ReferenceStorage, SeededItem


class ConsumerStack(Stack):
    """The lab's stack: the idempotent consumer (stacks/consumer.py), the lab's reference table
    with its seeded item, and every name a user needs as an output."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        names = config.names
        retained = RemovalPolicy.DESTROY if config.destroy_on_removal else RemovalPolicy.RETAIN
        # The lab's reference table and its seeded item, beside the consumer (its id `Storage`
        # under the stack, as before the consumer construct: the same logical id).
        storage = ReferenceStorage(self, "Storage", table_name=names.reference_table, removal_policy=retained)
        # `Default`: the consumer's resources keep the logical ids they had when this stack
        # built them itself (IdempotentConsumer).
        consumer = IdempotentConsumer(self, "Default", config=config, also_scanned=[storage.reference_table])
        reference = SeededItem(
            self,
            "ReferenceItem",
            table=storage.reference_table,
            item=REFERENCE_ITEM,
            function_name=names.seeder_function,
        )

        outputs = {
            "QueueUrl": consumer.queue.queue_url,
            "QueueArn": consumer.queue.queue_arn,
            "DeadLetterQueueUrl": consumer.dead_letter_queue.queue_url,
            "OrdersTableName": consumer.table.table_name,
            "ReferenceTableName": storage.reference_table.table_name,
            "FunctionName": consumer.function.function_name,
            "LogGroupName": consumer.log_group.log_group_name,
            "EventSourceMappingId": consumer.mapping.event_source_mapping_id,
            "SeederFunctionName": reference.seeder.function.function_name,
            "AlarmTopicArn": consumer.topic.topic_arn,
            "DashboardName": consumer.dashboard.dashboard_name,
            "DlqAuditLogGroupName": consumer.audit_log_group.log_group_name,
            "OperatorPolicyArn": consumer.operator_policy.managed_policy_arn,
            # What `ops status` and the live view show as the deployment's options.
            "Options": json.dumps(config.options(), separators=(",", ":")),
        }
        for key, value in outputs.items():
            CfnOutput(self, key, value=value)
        # Every taggable resource below the stack (the stack's own tags stay explicit:
        # @aws-cdk/core:explicitStackTags).
        for key, value in config.tags:
            Tags.of(self).add(key, value)
