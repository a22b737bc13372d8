"""AWS::SQS::QueuePolicy, which moto's CloudFormation skips: the policy is set on each queue it
names (GetQueueAttributes shows it, services/iam/queue_access.py enforces it) and removed on
delete."""

from __future__ import annotations

from typing import Any

from moto.core.common_models import CloudFormationModel

from embedded_aws.services.cloudformation.policies import PolicyOnTargets
from embedded_aws.services.cloudformation.properties import json_text


class SqsQueuePolicy(PolicyOnTargets, CloudFormationModel):
    TARGETS = "Queues"  # queue URLs

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SQS::QueuePolicy"

    @classmethod
    def _apply(cls, targets: list[str], document: Any, account_id: str, region_name: str) -> None:
        from moto.sqs.models import sqs_backends

        for url in targets:
            queue = sqs_backends[account_id][region_name].queues.get(url.rstrip("/").split("/")[-1])
            if queue is not None:  # a queue already gone is skipped
                queue.policy = json_text(document) if document is not None else None
