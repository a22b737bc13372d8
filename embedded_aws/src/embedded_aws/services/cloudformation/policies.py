"""A CloudFormation resource that sets one policy on a list of other resources (AWS::SNS::TopicPolicy
on topics, AWS::SQS::QueuePolicy on queues): created, updated (targets no longer named get their
policy removed) and deleted alike. A mixin, not a CloudFormationModel: moto takes every direct
subclass of that for a resource type, so each type subclasses both."""

from __future__ import annotations

from typing import Any


class PolicyOnTargets:
    """Subclasses name the property listing the targets (`TARGETS`) and `_apply` the policy
    document (None: remove it) to targets of the stack's account and region."""

    TARGETS = ""

    def __init__(self, name: str, targets: list[str]) -> None:
        self.name, self.targets = name, targets

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @classmethod
    def _apply(cls, targets: list[str], document: Any, account_id: str, region_name: str) -> None:
        raise NotImplementedError

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> Any:
        props = cloudformation_json["Properties"]
        targets = list(props[cls.TARGETS])
        cls._apply(targets, props["PolicyDocument"], account_id, region_name)
        return cls(resource_name, targets)

    @classmethod
    def update_from_cloudformation_json(
        cls,
        original_resource: Any,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> Any:
        props = cloudformation_json["Properties"]
        targets = list(props[cls.TARGETS])
        cls._apply([t for t in original_resource.targets if t not in targets], None, account_id, region_name)
        cls._apply(targets, props["PolicyDocument"], account_id, region_name)
        return cls(original_resource.name, targets)

    def delete(self, account_id: str, region_name: str) -> None:
        self._apply(self.targets, None, account_id, region_name)

    @property
    def physical_resource_id(self) -> str:
        return self.name
