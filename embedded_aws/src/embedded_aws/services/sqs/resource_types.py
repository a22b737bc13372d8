"""AWS::SQS::QueuePolicy, which moto's CloudFormation skips: the policy is set on each queue it
names (GetQueueAttributes shows it, services/iam/queue_access.py enforces it) and removed on
delete."""

from __future__ import annotations

from typing import Any

from moto.core.common_models import CloudFormationModel

from embedded_aws.services.cloudformation.properties import json_text


class SqsQueuePolicy(CloudFormationModel):
    def __init__(self, name: str, queues: list[str]) -> None:
        self.name, self.queues = name, queues

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SQS::QueuePolicy"

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @staticmethod
    def _apply(queue_urls: list[str], document: Any, account_id: str, region_name: str) -> None:
        """Set (or, with None, remove) the policy of each queue, named by URL, of the stack's
        account and region; a queue already gone is skipped."""
        from moto.sqs.models import sqs_backends

        for url in queue_urls:
            queue = sqs_backends[account_id][region_name].queues.get(url.rstrip("/").split("/")[-1])
            if queue is not None:
                queue.policy = json_text(document) if document is not None else None

    @classmethod
    def create_from_cloudformation_json(cls, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, **kwargs: Any) -> SqsQueuePolicy:
        props = cloudformation_json["Properties"]
        queues = list(props["Queues"])
        cls._apply(queues, props["PolicyDocument"], account_id, region_name)
        return cls(resource_name, queues)

    @classmethod
    def update_from_cloudformation_json(cls, original_resource: SqsQueuePolicy, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str,
                                        region_name: str) -> SqsQueuePolicy:
        props = cloudformation_json["Properties"]
        cls._apply([q for q in original_resource.queues if q not in props["Queues"]], None, account_id, region_name)
        cls._apply(list(props["Queues"]), props["PolicyDocument"], account_id, region_name)
        return cls(original_resource.name, list(props["Queues"]))

    def delete(self, account_id: str, region_name: str) -> None:
        self._apply(self.queues, None, account_id, region_name)

    @property
    def physical_resource_id(self) -> str:
        return self.name
