"""The CloudFormation resource types moto skips, made known to moto's template parser. moto finds
resource types among the direct subclasses of CloudFormationModel, in caches filled on first use,
so `patch_resource_types` must run before the first stack is parsed."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat import new_objects
from embedded_aws.compat.registry import declare, reads, state


def added_types() -> list[type[Any]]:  # CloudFormationModel subclasses (abstract to mypy)
    """The models of cloudwatch/, logs/, sns/ and sqs/ (importing them defines the subclasses)."""
    from embedded_aws.services.cloudwatch.resource_types import CloudWatchAlarm
    from embedded_aws.services.logs.resource_types import LogsMetricFilter, LogsQueryDefinition
    from embedded_aws.services.sns.resource_types import SnsSubscription, SnsTopicPolicy
    from embedded_aws.services.sqs.resource_types import SqsQueuePolicy

    return [
        CloudWatchAlarm,
        LogsQueryDefinition,
        LogsMetricFilter,
        SnsSubscription,
        SnsTopicPolicy,
        SqsQueuePolicy,
    ]


@declare(
    "cloudformation.resource-types",
    (
        "alarms, query definitions, metric filters, SNS subscriptions, topic policies and queue policies "
        "created by CloudFormation (moto skips them)"
    ),
    reads("moto.cloudformation.parsing:get_model_map"),
    reads("moto.cloudformation.parsing:get_model_list"),
    reads("moto.cloudformation.parsing:get_name_type_map"),
    # a topic policy's delete puts back the topic's default policy (sns/resource_types.py)
    state("moto.sns.models:Topic._policy_json", new_objects.topic),
    reads("moto.sns.models:Topic.policy"),  # a property: the policies set it
    reads("moto.sqs.models:Queue.policy"),
    reads("moto.sns.models:Topic._create_default_topic_policy", "self", "region_name", "account_id", "name"),
    fixes_moto=(
        "CloudFormation skips AWS::CloudWatch::Alarm, AWS::Logs::QueryDefinition, "
        "AWS::Logs::MetricFilter, AWS::SNS::Subscription, AWS::SNS::TopicPolicy, AWS::SQS::QueuePolicy "
        "with only a warning"
    ),
)
def patch_resource_types() -> None:
    """Make moto's CloudFormation see the added types (its lookups are cached on first use)."""
    from moto.cloudformation import parsing

    types = added_types()
    for cache in (parsing.get_model_list, parsing.get_model_map, parsing.get_name_type_map):
        cache.cache_clear()
    missing = {cls.cloudformation_type() for cls in types} - set(parsing.get_model_map())
    if missing:
        raise RuntimeError(f"not registered with moto's CloudFormation: {missing}")
