"""AWS::CloudWatch::Alarm, which moto's CloudFormation skips (with only a warning: the deploy
"succeeds" and the alarm is absent): moto's CloudWatch alarm; Ref is the name, GetAtt Arn."""

from __future__ import annotations

from typing import Any

from moto.core.common_models import CloudFormationModel

from embedded_aws.services.cloudformation.properties import boolean, integer


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
                Metric(
                    metric["MetricName"],
                    metric.get("Namespace"),
                    [Dimension(d["Name"], d["Value"]) for d in metric.get("Dimensions", [])],
                ),
                stat.get("Period"),
                stat.get("Stat"),
                stat.get("Unit"),
            )
        queries.append(
            # moto annotates these str, yet each is optional in the API and stored as given.
            MetricDataQuery(
                query["Id"],
                query.get("Label"),  # type: ignore[arg-type]
                query.get("Period"),  # type: ignore[arg-type]
                query.get("ReturnData"),  # type: ignore[arg-type]
                query.get("Expression"),
                metric_stat,
            )
        )
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
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> CloudWatchAlarm:
        from moto.cloudwatch.models import cloudwatch_backends

        props = cloudformation_json["Properties"]
        cloudwatch_backends[account_id][region_name].put_metric_alarm(
            name=resource_name,
            namespace=props.get("Namespace"),
            metric_name=props.get("MetricName"),
            metric_data_queries=_metric_data_queries(props.get("Metrics")),
            comparison_operator=props["ComparisonOperator"],
            evaluation_periods=int(props["EvaluationPeriods"]),
            datapoints_to_alarm=integer(props.get("DatapointsToAlarm")),
            # moto annotates both required, yet an alarm on metric queries has neither.
            period=integer(props.get("Period")),  # type: ignore[arg-type]
            threshold=float(props["Threshold"]) if "Threshold" in props else None,  # type: ignore[arg-type]
            statistic=props.get("Statistic"),
            extended_statistic=props.get("ExtendedStatistic"),
            description=props.get("AlarmDescription"),
            dimensions=props.get("Dimensions", []),
            alarm_actions=props.get("AlarmActions", []),
            ok_actions=props.get("OKActions", []),
            insufficient_data_actions=props.get("InsufficientDataActions", []),
            unit=props.get("Unit"),
            actions_enabled=boolean(props.get("ActionsEnabled"), default=True),
            treat_missing_data=props.get("TreatMissingData"),
            evaluate_low_sample_count_percentile=props.get("EvaluateLowSampleCountPercentile"),
            threshold_metric_id=props.get("ThresholdMetricId"),
            tags=props.get("Tags"),
        )
        return cls(resource_name, account_id, region_name)

    @classmethod
    def update_from_cloudformation_json(
        cls,
        original_resource: CloudWatchAlarm,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> CloudWatchAlarm:
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
