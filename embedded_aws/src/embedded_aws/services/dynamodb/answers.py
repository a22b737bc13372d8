"""DynamoDB's answers in AWS's shape: capacity members only when asked, a new table CREATING and a
deleted one DELETING, table descriptions with AWS's keys, a request missing a required member
refused as a 400 ValidationException, DeleteTable of a missing table naming it."""

from __future__ import annotations

import json
import uuid
from typing import Any

from embedded_aws.compat.internals import GET_ACTION
from embedded_aws.compat.registry import T, declare, install, reads
from embedded_aws.server.missing_members import validation_message

_TYPE_PREFIX = "com.amazonaws.dynamodb.v20120810#"
# Keys of DeleteTable's description, as AWS answered (test_dynamodb.snapshot.json, test_table_crud).
_DELETE_KEYS = frozenset(
    {
        "BillingModeSummary",
        "DeletionProtectionEnabled",
        "ItemCount",
        "ProvisionedThroughput",
        "TableArn",
        "TableId",
        "TableName",
        "TableSizeBytes",
        "TableStatus",
    }
)


def missing_members(action: str, params: dict[str, Any]) -> str | None:
    """AWS's ValidationException message for the required top-level members `params` lacks, or None."""
    from moto.core.responses import get_service_model  # type: ignore[attr-defined]  # not re-exported

    try:
        shape = get_service_model("dynamodb").operation_model(action).input_shape
    except Exception:  # noqa: BLE001 - an unknown action is moto's to refuse
        return None
    missing = [name for name in (shape.required_members if shape else []) if params.get(name) is None]
    return validation_message(missing) if missing else None


def _table_id(description: dict[str, Any]) -> str:
    """A stable id per table: its ARN and creation time (moto keeps no TableId)."""
    return str(
        uuid.uuid5(uuid.NAMESPACE_URL, f"{description.get('TableArn')}#{description.get('CreationDateTime')}")
    )


def _describe(description: dict[str, Any]) -> None:
    """A table description as AWS gives it: a TableId; no empty index lists; BillingModeSummary only
    for an on-demand table (AWS leaves it out for a provisioned one created without BillingMode)."""
    description.setdefault("TableId", _table_id(description))
    for key in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes"):
        if description.get(key) == []:
            del description[key]
    if description.get("BillingModeSummary", {}).get("BillingMode") == "PROVISIONED":
        del description["BillingModeSummary"]


def reshape(action: str, params: dict[str, Any], status: int, body: str) -> str:
    """The body AWS would send for this action's answer (unchanged when nothing differs)."""
    if status >= 400:
        if action == "DeleteTable" and status == 400 and '"Requested resource not found"' in body:
            error = json.loads(body)
            error["message"] = f"Requested resource not found: Table: {params.get('TableName')} not found"
            return json.dumps(error)
        return body
    if action in ("CreateTable", "DeleteTable", "DescribeTable", "UpdateTable"):
        answer = json.loads(body)
        description = answer.get("Table") or answer.get("TableDescription")
        if isinstance(description, dict):
            _describe(description)
            if action == "CreateTable":
                description["TableStatus"] = "CREATING"
                description.pop("WarmThroughput", None)
            elif action == "DeleteTable":
                description["TableStatus"] = "DELETING"
                for key in set(description) - _DELETE_KEYS:
                    del description[key]
        return json.dumps(answer)
    if '"ConsumedCapacity"' not in body and '"ItemCollectionMetrics"' not in body:
        return body
    answer = json.loads(body)
    if params.get("ReturnConsumedCapacity", "NONE") == "NONE":
        answer.pop("ConsumedCapacity", None)
    if params.get("ReturnItemCollectionMetrics", "NONE") == "NONE":
        answer.pop("ItemCollectionMetrics", None)
    return json.dumps(answer)


@declare(
    "dynamodb.answers",
    (
        "answers in AWS's shape: ConsumedCapacity and ItemCollectionMetrics only when asked, CreateTable "
        "CREATING and DeleteTable DELETING, descriptions with TableId and without empty index lists, a "
        "missing required member a 400 ValidationException, DeleteTable of a missing table naming it, "
        "ListExports without TableArn every export"
    ),
    T("moto.dynamodb.responses:DynamoHandler.call_action", "self"),
    GET_ACTION,
    reads("moto.core.responses:BaseResponse._enrich_response", "headers", "body"),
    fixes_moto=(
        "a request without a required member (PutItem without Item), or ListExports without its optional "
        "TableArn, fails with KeyError, a 500 HTML page,"
        " not a 400 ValidationException; BatchGetItem, BatchWriteItem, UpdateItem and TransactWriteItems "
        "return ConsumedCapacity (and ItemCollectionMetrics) nobody asked for; CreateTable and "
        "DeleteTable answer ACTIVE; descriptions lack TableId and carry empty index lists and a "
        "PROVISIONED BillingModeSummary; DeleteTable of a missing table does not name it"
    ),
)
def patch_dynamodb_answers() -> None:
    """Wrap DynamoHandler.call_action inside moto's CRC32 decorator, so the checksum DynamoDB
    clients verify is of the body sent."""
    from moto.core.responses import BaseResponse
    from moto.dynamodb.responses import DynamoHandler
    from moto.utilities.aws_headers import amz_crc32

    original = DynamoHandler.call_action.__wrapped__  # type: ignore[attr-defined]  # set by amz_crc32's wraps

    @amz_crc32
    def call_action(self: Any) -> Any:
        action = self._get_action()
        params = getattr(self, "params", None) or {}
        message = missing_members(action, params)
        if message is not None:
            body = json.dumps({"__type": _TYPE_PREFIX + "ValidationException", "message": message})
            headers, body = BaseResponse._enrich_response(
                # moto annotates the headers dict[str, str], and casts "status" to str itself.
                {**self.response_headers, "Content-Type": "application/x-amz-json-1.0", "status": 400},  # type: ignore[dict-item]
                body,
            )
            return 400, headers, body
        if action == "ListExports" and params.get("TableArn") is None:
            # TableArn is optional: without it AWS lists every export (moto read it unchecked).
            exports = self.dynamodb_backend.table_exports.values()
            summaries = [
                {"ExportArn": e.arn, "ExportStatus": e.status, "ExportType": e.export_type} for e in exports
            ]
            headers, body = BaseResponse._enrich_response(
                {**self.response_headers, "Content-Type": "application/x-amz-json-1.0"},
                json.dumps({"ExportSummaries": summaries}),
            )
            return 200, headers, body
        status, headers, body = original(self)
        if isinstance(body, str) and body:
            body = reshape(action, params, int(status), body)
        return status, headers, body

    install(DynamoHandler, "call_action", call_action)
