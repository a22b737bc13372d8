"""A table's point-in-time recovery and time to live come from its template, as CloudFormation
applies them (services/dynamodb/cloudformation.py): moto left both disabled, so the orders table
read as unprotected and `ops deploy --adopt` would have reported drift where there is none."""

from __future__ import annotations

import json
import uuid

import pytest

from local.polling import wait_for

pytestmark = [pytest.mark.e2e]


def _table(name: str, **properties: object) -> dict:
    return {
        "Type": "AWS::DynamoDB::Table",
        "Properties": {
            "TableName": name,
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            **properties,
        },
    }


def test_a_templates_recovery_and_time_to_live_reach_the_table(emulator):
    """The guarded table: recovery and time to live on, from the template; a table whose
    template says nothing of them: both off, as on AWS."""
    name = f"settings-{uuid.uuid4().hex[:8]}"
    template = {
        "Resources": {
            "Guarded": _table(
                f"{name}-guarded",
                PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True},
                TimeToLiveSpecification={"AttributeName": "expires_at", "Enabled": True},
            ),
            "Plain": _table(f"{name}-plain"),
        }
    }
    cloudformation, dynamodb = emulator.client("cloudformation"), emulator.client("dynamodb")
    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))
    wait_for(
        lambda: (
            not cloudformation.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"].endswith(
                "IN_PROGRESS"
            )
        ),
        timeout=30,
        what=f"stack {name} created",
    )
    try:

        def settings(table: str) -> tuple[str, str, str | None]:
            backups = dynamodb.describe_continuous_backups(TableName=table)["ContinuousBackupsDescription"]
            ttl = dynamodb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
            recovery = backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"]
            return recovery, ttl["TimeToLiveStatus"], ttl.get("AttributeName")

        assert settings(f"{name}-guarded") == ("ENABLED", "ENABLED", "expires_at")
        assert settings(f"{name}-plain") == ("DISABLED", "DISABLED", None)
    finally:
        cloudformation.delete_stack(StackName=name)
