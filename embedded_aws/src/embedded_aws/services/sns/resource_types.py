"""CloudFormation types of SNS that moto skips: AWS::SNS::Subscription (a subscription of moto's
SNS; delivers to SQS, email is only stored) and AWS::SNS::TopicPolicy (stored on each topic, as
GetTopicAttributes shows; the default policy is restored on delete; not enforced locally)."""

from __future__ import annotations

from typing import Any

from moto.core.common_models import CloudFormationModel

from embedded_aws.services.cloudformation.policies import PolicyOnTargets
from embedded_aws.services.cloudformation.properties import boolean, json_text


class SnsSubscription(CloudFormationModel):
    ATTRIBUTES = (
        "DeliveryPolicy",
        "FilterPolicyScope",
        "FilterPolicy",
        "RawMessageDelivery",
        "RedrivePolicy",
        "SubscriptionRoleArn",
    )  # FilterPolicyScope first: FilterPolicy is validated against it

    def __init__(self, arn: str, topic_arn: str, protocol: str, endpoint: str) -> None:
        self.arn, self.topic_arn, self.protocol, self.endpoint = arn, topic_arn, protocol, endpoint

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SNS::Subscription"

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @staticmethod
    def _backend(topic_arn: str) -> Any:
        from moto.sns.models import sns_backends

        _, _, _, region, account, _ = topic_arn.split(":", 5)
        return sns_backends[account][region]

    @classmethod
    def _set_attributes(cls, arn: str, topic_arn: str, props: dict[str, Any]) -> None:
        backend = cls._backend(topic_arn)
        for name in cls.ATTRIBUTES:
            if name in props:
                value = props[name]
                if name == "RawMessageDelivery":
                    value = boolean(value)
                elif name in ("DeliveryPolicy", "FilterPolicy", "RedrivePolicy"):
                    value = json_text(value)
                backend.set_subscription_attributes(arn, name, value)

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> SnsSubscription:
        props = cloudformation_json["Properties"]
        topic_arn, protocol, endpoint = props["TopicArn"], props["Protocol"], props.get("Endpoint")
        subscription = cls._backend(topic_arn).subscribe(topic_arn, endpoint, protocol)
        cls._set_attributes(subscription.arn, topic_arn, props)
        return cls(subscription.arn, topic_arn, protocol, endpoint)

    @classmethod
    def update_from_cloudformation_json(
        cls,
        original_resource: SnsSubscription,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> SnsSubscription:
        props = cloudformation_json["Properties"]
        same = (props["TopicArn"], props["Protocol"], props.get("Endpoint")) == (
            original_resource.topic_arn,
            original_resource.protocol,
            original_resource.endpoint,
        )
        if same:  # attributes change in place; a new topic, protocol or endpoint replaces it
            cls._set_attributes(original_resource.arn, original_resource.topic_arn, props)
            return original_resource
        original_resource.delete(account_id, region_name)
        return cls.create_from_cloudformation_json(
            new_resource_name, cloudformation_json, account_id, region_name
        )

    def delete(self, account_id: str, region_name: str) -> None:
        self._backend(self.topic_arn).unsubscribe(self.arn)

    @property
    def physical_resource_id(self) -> str:
        return self.arn

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        if attribute_name == "Arn":
            return self.arn
        raise UnformattedGetAttTemplateException()


class SnsTopicPolicy(PolicyOnTargets, CloudFormationModel):
    TARGETS = "Topics"  # topic ARNs

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SNS::TopicPolicy"

    @classmethod
    def _apply(cls, targets: list[str], document: Any, account_id: str, region_name: str) -> None:
        from moto.sns.exceptions import TopicNotFound

        for topic_arn in targets:
            backend = SnsSubscription._backend(topic_arn)
            try:
                topic = backend.get_topic(topic_arn)
            except TopicNotFound:
                continue  # gone already; nothing to restore
            if document is None:
                topic._policy_json = topic._create_default_topic_policy(
                    backend.region_name, topic.account_id, topic.name
                )
            else:
                topic.policy = json_text(document)
