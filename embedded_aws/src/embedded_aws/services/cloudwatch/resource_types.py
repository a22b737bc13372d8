"""CloudFormation resource types moto skips (with only a warning: the deploy "succeeds" and the
resource is absent), registered for the embedded AWS:

- AWS::CloudWatch::Alarm: moto's CloudWatch alarm; Ref is the name, GetAtt Arn.
- AWS::Logs::QueryDefinition: the local store (query_definitions.py); Ref is the id.
- AWS::Logs::MetricFilter: stored in moto's Logs backend (nothing is extracted from it).
- AWS::SNS::Subscription: a subscription of moto's SNS (delivers to SQS; email is only stored).
- AWS::SNS::TopicPolicy: the policy is stored on each topic (GetTopicAttributes shows it) and
  the default policy is restored on delete; SNS does not enforce it locally.
- AWS::IAM::ManagedPolicy (moto has it): deleting the stack now deletes it too.

Each resource remembers what it created and removes exactly that when the stack deletes it.
moto finds resource types among the direct subclasses of CloudFormationModel, in caches filled
on first use: `register` must run before the first stack is parsed.
"""

from __future__ import annotations

import json
from typing import Any

from moto.core.common_models import CloudFormationModel

from embedded_aws.services.logs.query_definitions import STORE


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _bool(value: Any, default: bool = False) -> bool:
    if value is None:
        return default
    return value if isinstance(value, bool) else str(value).lower() == "true"


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _metric_data_queries(metrics: list[dict[str, Any]] | None) -> list[Any] | None:
    """The `Metrics` property as moto's MetricDataQuery objects (stored, not evaluated)."""
    from moto.cloudwatch.models import Dimension, Metric, MetricDataQuery, MetricStat

    if not metrics:
        return None
    queries = []
    for query in metrics:
        stat = query.get("MetricStat")
        metric_stat = None
        if stat:
            metric = stat["Metric"]
            metric_stat = MetricStat(
                Metric(metric["MetricName"], metric.get("Namespace"),
                       [Dimension(d["Name"], d["Value"]) for d in metric.get("Dimensions", [])]),
                stat.get("Period"), stat.get("Stat"), stat.get("Unit"))
        queries.append(MetricDataQuery(query["Id"], query.get("Label"), query.get("Period"),
                                       query.get("ReturnData"), query.get("Expression"), metric_stat))
    return queries


class CloudWatchAlarm(CloudFormationModel):
    def __init__(self, name: str, account_id: str, region: str) -> None:
        self.name, self.account_id, self.region = name, account_id, region

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::CloudWatch::Alarm"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "AlarmName"

    @classmethod
    def create_from_cloudformation_json(cls, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, **kwargs: Any) -> CloudWatchAlarm:
        from moto.cloudwatch.models import cloudwatch_backends

        props = cloudformation_json["Properties"]
        cloudwatch_backends[account_id][region_name].put_metric_alarm(
            name=resource_name, namespace=props.get("Namespace"), metric_name=props.get("MetricName"),
            metric_data_queries=_metric_data_queries(props.get("Metrics")),
            comparison_operator=props["ComparisonOperator"], evaluation_periods=int(props["EvaluationPeriods"]),
            datapoints_to_alarm=_int(props.get("DatapointsToAlarm")), period=_int(props.get("Period")),
            threshold=float(props["Threshold"]) if "Threshold" in props else None,
            statistic=props.get("Statistic"), extended_statistic=props.get("ExtendedStatistic"),
            description=props.get("AlarmDescription"), dimensions=props.get("Dimensions", []),
            alarm_actions=props.get("AlarmActions", []), ok_actions=props.get("OKActions", []),
            insufficient_data_actions=props.get("InsufficientDataActions", []), unit=props.get("Unit"),
            actions_enabled=_bool(props.get("ActionsEnabled"), default=True),
            treat_missing_data=props.get("TreatMissingData"),
            evaluate_low_sample_count_percentile=props.get("EvaluateLowSampleCountPercentile"),
            threshold_metric_id=props.get("ThresholdMetricId"), tags=props.get("Tags"),
        )
        return cls(resource_name, account_id, region_name)

    @classmethod
    def update_from_cloudformation_json(cls, original_resource: CloudWatchAlarm, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str,
                                        region_name: str) -> CloudWatchAlarm:
        # A generated name is regenerated on every update; only a new AlarmName replaces the alarm.
        name = cloudformation_json["Properties"].get("AlarmName") or original_resource.name
        if name != original_resource.name:
            original_resource.delete(account_id, region_name)
        return cls.create_from_cloudformation_json(name, cloudformation_json, account_id, region_name)

    def delete(self, account_id: str, region_name: str) -> None:
        from moto.cloudwatch.models import cloudwatch_backends

        cloudwatch_backends[self.account_id][self.region].delete_alarms([self.name])

    @property
    def physical_resource_id(self) -> str:
        return self.name

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException
        from moto.cloudwatch.utils import make_arn_for_alarm

        if attribute_name == "Arn":
            return make_arn_for_alarm(self.region, self.account_id, self.name)
        raise UnformattedGetAttTemplateException()


class LogsQueryDefinition(CloudFormationModel):
    def __init__(self, definition_id: str, account_id: str, region: str) -> None:
        self.id, self.account_id, self.region = definition_id, account_id, region

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::Logs::QueryDefinition"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "Name"

    @classmethod
    def create_from_cloudformation_json(cls, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, definition_id: str | None = None,
                                        **kwargs: Any) -> LogsQueryDefinition:
        props = cloudformation_json["Properties"]
        definition_id = STORE.put(account_id, region_name, name=resource_name, query_string=props["QueryString"],
                                  log_group_names=props.get("LogGroupNames"), language=props.get("QueryLanguage"),
                                  definition_id=definition_id)
        return cls(definition_id, account_id, region_name)

    @classmethod
    def update_from_cloudformation_json(cls, original_resource: LogsQueryDefinition, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str,
                                        region_name: str) -> LogsQueryDefinition:
        return cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id,
                                                   region_name, definition_id=original_resource.id)

    def delete(self, account_id: str, region_name: str) -> None:
        from embedded_aws.services.logs.query_definitions import NotFound

        try:
            STORE.delete(self.account_id, self.region, self.id)
        except NotFound:
            pass  # deleted out of band: CloudFormation treats NotFound on delete as done

    @property
    def physical_resource_id(self) -> str:
        return self.id

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "QueryDefinitionId"

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        if attribute_name == "QueryDefinitionId":
            return self.id
        raise UnformattedGetAttTemplateException()


class LogsMetricFilter(CloudFormationModel):
    def __init__(self, name: str, log_group: str, account_id: str, region: str) -> None:
        self.name, self.log_group, self.account_id, self.region = name, log_group, account_id, region

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::Logs::MetricFilter"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "FilterName"

    @classmethod
    def create_from_cloudformation_json(cls, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, **kwargs: Any) -> LogsMetricFilter:
        from moto.logs.models import logs_backends

        props = cloudformation_json["Properties"]
        transformations = []
        for t in props["MetricTransformations"]:
            transformation = {"metricName": t["MetricName"], "metricNamespace": t["MetricNamespace"],
                              "metricValue": t["MetricValue"]}
            if "DefaultValue" in t:
                transformation["defaultValue"] = float(t["DefaultValue"])
            if t.get("Dimensions"):
                transformation["dimensions"] = {d["Key"]: d["Value"] for d in t["Dimensions"]}
            if t.get("Unit"):
                transformation["unit"] = t["Unit"]
            transformations.append(transformation)
        logs_backends[account_id][region_name].put_metric_filter(
            resource_name, props.get("FilterPattern", ""), props["LogGroupName"], transformations)
        return cls(resource_name, props["LogGroupName"], account_id, region_name)

    @classmethod
    def update_from_cloudformation_json(cls, original_resource: LogsMetricFilter, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str,
                                        region_name: str) -> LogsMetricFilter:
        name = cloudformation_json["Properties"].get("FilterName") or original_resource.name
        original_resource.delete(account_id, region_name)  # moto appends a second filter otherwise
        return cls.create_from_cloudformation_json(name, cloudformation_json, account_id, region_name)

    def delete(self, account_id: str, region_name: str) -> None:
        from moto.logs.models import logs_backends

        logs_backends[self.account_id][self.region].delete_metric_filter(self.name, self.log_group)

    @property
    def physical_resource_id(self) -> str:
        return self.name


class SnsSubscription(CloudFormationModel):
    ATTRIBUTES = ("DeliveryPolicy", "FilterPolicyScope", "FilterPolicy", "RawMessageDelivery", "RedrivePolicy",
                  "SubscriptionRoleArn")  # FilterPolicyScope first: FilterPolicy is validated against it

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
                    value = _bool(value)
                elif name in ("DeliveryPolicy", "FilterPolicy", "RedrivePolicy"):
                    value = _json_text(value)
                backend.set_subscription_attributes(arn, name, value)

    @classmethod
    def create_from_cloudformation_json(cls, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, **kwargs: Any) -> SnsSubscription:
        props = cloudformation_json["Properties"]
        topic_arn, protocol, endpoint = props["TopicArn"], props["Protocol"], props.get("Endpoint")
        subscription = cls._backend(topic_arn).subscribe(topic_arn, endpoint, protocol)
        cls._set_attributes(subscription.arn, topic_arn, props)
        return cls(subscription.arn, topic_arn, protocol, endpoint)

    @classmethod
    def update_from_cloudformation_json(cls, original_resource: SnsSubscription, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str,
                                        region_name: str) -> SnsSubscription:
        props = cloudformation_json["Properties"]
        same = (props["TopicArn"], props["Protocol"], props.get("Endpoint")) == (
            original_resource.topic_arn, original_resource.protocol, original_resource.endpoint)
        if same:  # attributes change in place; a new topic, protocol or endpoint replaces it
            cls._set_attributes(original_resource.arn, original_resource.topic_arn, props)
            return original_resource
        original_resource.delete(account_id, region_name)
        return cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id, region_name)

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


class SnsTopicPolicy(CloudFormationModel):
    def __init__(self, name: str, topics: list[str]) -> None:
        self.name, self.topics = name, topics

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SNS::TopicPolicy"

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @staticmethod
    def _apply(topics: list[str], document: Any) -> None:
        from moto.sns.exceptions import TopicNotFound

        for topic_arn in topics:
            backend = SnsSubscription._backend(topic_arn)
            try:
                topic = backend.get_topic(topic_arn)
            except TopicNotFound:
                continue  # gone already; nothing to restore
            if document is None:
                topic._policy_json = topic._create_default_topic_policy(backend.region_name, topic.account_id,
                                                                        topic.name)
            else:
                topic.policy = _json_text(document)

    @classmethod
    def create_from_cloudformation_json(cls, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, **kwargs: Any) -> SnsTopicPolicy:
        props = cloudformation_json["Properties"]
        topics = list(props["Topics"])
        cls._apply(topics, props["PolicyDocument"])
        return cls(resource_name, topics)

    @classmethod
    def update_from_cloudformation_json(cls, original_resource: SnsTopicPolicy, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str,
                                        region_name: str) -> SnsTopicPolicy:
        props = cloudformation_json["Properties"]
        cls._apply([t for t in original_resource.topics if t not in props["Topics"]], None)
        cls._apply(list(props["Topics"]), props["PolicyDocument"])
        return cls(original_resource.name, list(props["Topics"]))

    def delete(self, account_id: str, region_name: str) -> None:
        self._apply(self.topics, None)

    @property
    def physical_resource_id(self) -> str:
        return self.name


def _delete_managed_policy(policy: Any, account_id: str, region_name: str) -> None:
    """moto's AWS::IAM::ManagedPolicy has no delete: a deleted stack left it behind. Detached
    from every role, user and group first, as CloudFormation does."""
    backend = policy.backend
    for holder in [*backend.roles.values(), *backend.users.values(), *backend.groups.values()]:
        if policy.arn in holder.managed_policies:
            policy.detach_from(holder)
    backend.delete_policy(policy.arn)


def register() -> None:
    """Make moto's CloudFormation see the types above (its lookups are cached on first use)."""
    from moto.cloudformation import parsing
    from moto.iam.models import ManagedPolicy

    ManagedPolicy.delete = _delete_managed_policy

    for cache in (parsing.get_model_list, parsing.get_model_map, parsing.get_name_type_map):
        cache.cache_clear()
    missing = {cls.cloudformation_type() for cls in (CloudWatchAlarm, LogsQueryDefinition, LogsMetricFilter,
                                                      SnsSubscription, SnsTopicPolicy)} - set(parsing.get_model_map())
    assert not missing, f"not registered with moto's CloudFormation: {missing}"
