"""The idempotent order consumer: SQS jobs queue -> Lambda worker -> DynamoDB orders table."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import CfnOutput, Stack, Tags
from constructs import Construct

from idempotent_consumer import IdempotentConsumer
from stacks.config import REFERENCE_ITEM, StackConfig
from stacks.reference import ReferenceStorage, SeededItem


class ConsumerStack(Stack):
    """The lab's stack: the idempotent consumer (lib/src/idempotent_consumer/consumer.py), the lab's reference table
    with its seeded item, and every name a user needs as an output."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        names = config.names
        props = config.props()
        # The lab's reference table and its seeded item, beside the consumer (its id `Storage`
        # under the stack, as before the consumer construct: the same logical id).
        storage = ReferenceStorage(
            self, "Storage", table_name=names.reference_table, removal_policy=props.removal_policy
        )
        # `Default`: the consumer's resources keep the logical ids they had when this stack
        # built them itself (IdempotentConsumer).
        consumer = IdempotentConsumer(self, "Default", props=props, also_scanned=[storage.reference_table])
        reference = SeededItem(
            self,
            "ReferenceItem",
            table=storage.reference_table,
            item=REFERENCE_ITEM,
            function_name=names.seeder_function,
        )

        # The consumer's outputs (what `ops` reads), with the lab's own among them in the order the
        # template has always listed them.
        consumer.add_outputs()
        lab_outputs = {
            "ReferenceTableName": storage.reference_table.table_name,
            "SeederFunctionName": reference.seeder.function.function_name,
            # What `ops status` and the live view show as the deployment's options.
            "Options": json.dumps(config.options(), separators=(",", ":")),
        }
        for key, value in lab_outputs.items():
            CfnOutput(self, key, value=value)
        # Every taggable resource below the stack (the stack's own tags stay explicit:
        # @aws-cdk/core:explicitStackTags).
        for key, value in config.tags:
            Tags.of(self).add(key, value)
