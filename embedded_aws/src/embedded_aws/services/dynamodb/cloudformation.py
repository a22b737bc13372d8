"""AWS::DynamoDB::Table's point-in-time recovery and time to live from its template, as on AWS."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.cloudformation_models import CREATE_PARAMETERS, after_create
from embedded_aws.compat.registry import T, declare


def _enabled(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _apply_table_settings(
    table: Any, cloudformation_json: dict[str, Any], account_id: str, region_name: str, _: dict[str, Any]
) -> None:
    from moto.dynamodb.models import dynamodb_backends

    properties = cloudformation_json.get("Properties") or {}
    backend = dynamodb_backends[account_id][region_name]
    recovery = properties.get("PointInTimeRecoverySpecification") or {}
    if _enabled(recovery.get("PointInTimeRecoveryEnabled")):
        backend.update_continuous_backups(table.name, {"PointInTimeRecoveryEnabled": True})
    time_to_live = properties.get("TimeToLiveSpecification") or {}
    if _enabled(time_to_live.get("Enabled")) and time_to_live.get("AttributeName"):
        backend.update_time_to_live(
            table.name, {"Enabled": True, "AttributeName": time_to_live["AttributeName"]}
        )


@declare(
    "dynamodb.cloudformation-settings",
    "a table's PointInTimeRecoverySpecification and TimeToLiveSpecification from its template at create",
    T("moto.dynamodb.models.table:Table.create_from_cloudformation_json", *CREATE_PARAMETERS),
    fixes_moto=(
        "AWS::DynamoDB::Table ignores PointInTimeRecoverySpecification and TimeToLiveSpecification: a "
        "table its template protects reads point-in-time recovery DISABLED and time to live DISABLED"
    ),
)
def patch_table_settings() -> None:
    """The template's point-in-time recovery and time to live reach the table at create, as
    CloudFormation applies them (moto left both disabled, so the table read as unprotected and
    `ops deploy --adopt` would have found drift where there is none)."""
    from moto.dynamodb.models.table import Table

    after_create(Table, _apply_table_settings)
