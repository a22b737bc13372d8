"""CloudFormation custom resource: put one item into a table at create (and update) time.

Properties: TableName, Item (a JSON object of string attributes). Delete leaves the item: the
table's own removal policy decides whether it goes. Standard library and boto3 only, and no
provider framework, so any Python Lambda host (the AWS one or the project's local host) runs it.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping
from typing import Any

import boto3

_CLIENT = None


def _client() -> Any:
    global _CLIENT
    if _CLIENT is None:
        _CLIENT = boto3.client("dynamodb")
    return _CLIENT


def seed(properties: Mapping[str, Any], client: Any) -> str:
    """Put the item; returns the physical id `<table>/<id>`."""
    table = properties["TableName"]
    item = json.loads(properties["Item"])
    if not isinstance(item, dict) or not all(isinstance(v, str) for v in item.values()) or "id" not in item:
        raise ValueError(f"Item must be a JSON object of strings with an id, got {properties['Item']!r}")
    client.put_item(TableName=table, Item={key: {"S": value} for key, value in item.items()})
    return f"{table}/{item['id']}"


def _respond(event: Mapping[str, Any], status: str, physical_id: str, reason: str) -> None:
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason[:1000],
            "PhysicalResourceId": physical_id,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
        }
    ).encode()
    request = urllib.request.Request(  # noqa: S310  CloudFormation's pre-signed ResponseURL
        event["ResponseURL"],
        data=body,
        method="PUT",
        headers={"Content-Type": "", "Content-Length": str(len(body))},
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310  the same pre-signed ResponseURL
        response.read()


def handler(event: Mapping[str, Any], context: Any) -> None:
    physical_id = event.get("PhysicalResourceId") or event.get("LogicalResourceId", "seeded-item")
    try:
        if event["RequestType"] in ("Create", "Update"):
            physical_id = seed(event["ResourceProperties"], _client())
        print(json.dumps({"request": event["RequestType"], "physical_id": physical_id, "status": "SUCCESS"}))
        _respond(event, "SUCCESS", physical_id, "ok")
    except Exception as error:  # noqa: BLE001 - CloudFormation must hear of every failure
        reason = f"{type(error).__name__}: {error}".splitlines()[0]
        print(json.dumps({"request": event.get("RequestType"), "status": "FAILED", "reason": reason}))
        _respond(event, "FAILED", physical_id, reason)
