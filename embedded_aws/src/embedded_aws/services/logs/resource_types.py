"""CloudFormation types of CloudWatch Logs that moto skips: AWS::Logs::QueryDefinition (the local
store, query_definitions.py; Ref is the id) and AWS::Logs::MetricFilter (stored in moto's Logs
backend; nothing is extracted from it). Each removes exactly what it created when deleted."""

from __future__ import annotations

from typing import Any

from moto.core.common_models import CloudFormationModel

from embedded_aws.services.logs.query_definitions import STORE


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
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        definition_id: str | None = None,
        **kwargs: Any,
    ) -> LogsQueryDefinition:
        props = cloudformation_json["Properties"]
        definition_id = STORE.put(
            account_id,
            region_name,
            name=resource_name,
            query_string=props["QueryString"],
            log_group_names=props.get("LogGroupNames"),
            language=props.get("QueryLanguage"),
            definition_id=definition_id,
        )
        return cls(definition_id, account_id, region_name)

    @classmethod
    def update_from_cloudformation_json(
        cls,
        original_resource: LogsQueryDefinition,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> LogsQueryDefinition:
        return cls.create_from_cloudformation_json(
            new_resource_name,
            cloudformation_json,
            account_id,
            region_name,
            definition_id=original_resource.id,
        )

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
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> LogsMetricFilter:
        from moto.logs.models import logs_backends

        props = cloudformation_json["Properties"]
        transformations = []
        for t in props["MetricTransformations"]:
            transformation = {
                "metricName": t["MetricName"],
                "metricNamespace": t["MetricNamespace"],
                "metricValue": t["MetricValue"],
            }
            if "DefaultValue" in t:
                transformation["defaultValue"] = float(t["DefaultValue"])
            if t.get("Dimensions"):
                transformation["dimensions"] = {d["Key"]: d["Value"] for d in t["Dimensions"]}
            if t.get("Unit"):
                transformation["unit"] = t["Unit"]
            transformations.append(transformation)
        # moto annotates the transformations str, yet stores and answers the list it is given.
        logs_backends[account_id][region_name].put_metric_filter(
            resource_name,
            props.get("FilterPattern", ""),
            props["LogGroupName"],
            transformations,  # type: ignore[arg-type]
        )
        return cls(resource_name, props["LogGroupName"], account_id, region_name)

    @classmethod
    def update_from_cloudformation_json(
        cls,
        original_resource: LogsMetricFilter,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> LogsMetricFilter:
        name = cloudformation_json["Properties"].get("FilterName") or original_resource.name
        original_resource.delete(account_id, region_name)  # moto appends a second filter otherwise
        return cls.create_from_cloudformation_json(name, cloudformation_json, account_id, region_name)

    def delete(self, account_id: str, region_name: str) -> None:
        from moto.logs.models import logs_backends

        logs_backends[self.account_id][self.region].delete_metric_filter(self.name, self.log_group)

    @property
    def physical_resource_id(self) -> str:
        return self.name
