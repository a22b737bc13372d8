"""The event a mapping hands its function, and what it deletes afterwards: SQS messages as Lambda
records, and the Lambda service's reading of a partial batch response (ReportBatchItemFailures)."""

from __future__ import annotations

import base64
import json
from typing import Any


def sqs_record(
    message: dict[str, Any], queue_arn: str, region: str, *, batching_window: bool = False
) -> dict[str, Any]:
    """An SQS message as the Lambda service hands it to a function (the example event of "Using
    Lambda with Amazon SQS"): a message attribute has `stringValue` or `binaryValue` (whichever
    it has), both list fields, empty, and `dataType`. A message without attributes has no
    `md5OfMessageAttributes` key, or the key with null when the mapping has a batching window
    (`batching_window`): so AWS answered in LocalStack's recordings (test_conformance cites them;
    the documented example shows the key with null)."""
    attributes = message.get("Attributes", {})
    message_attributes = {}
    for name, value in message.get("MessageAttributes", {}).items():
        attribute: dict[str, Any] = {}
        if "StringValue" in value:
            attribute["stringValue"] = value["StringValue"]
        if "BinaryValue" in value:
            attribute["binaryValue"] = base64.b64encode(value["BinaryValue"]).decode()
        attribute["stringListValues"] = value.get("StringListValues", [])
        attribute["binaryListValues"] = value.get("BinaryListValues", [])
        attribute["dataType"] = value["DataType"]
        message_attributes[name] = attribute
    record = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {
            key: attributes[key]
            for key in (
                "ApproximateReceiveCount",
                "SentTimestamp",
                "SenderId",
                "ApproximateFirstReceiveTimestamp",
                "SequenceNumber",
                "MessageGroupId",
                "MessageDeduplicationId",
                "AWSTraceHeader",
            )
            if key in attributes
        },
        "messageAttributes": message_attributes,
        "md5OfMessageAttributes": message.get("MD5OfMessageAttributes"),
        "md5OfBody": message.get("MD5OfBody"),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }
    if record["md5OfMessageAttributes"] is None and not batching_window:
        del record["md5OfMessageAttributes"]
    return record


def acknowledged_ids(
    message_ids: list[str], function_error: str | None, payload: bytes, report_batch_item_failures: bool
) -> set[str]:
    """Which messages of a batch the Lambda service deletes after an invocation.

    A function error fails the whole batch. With ReportBatchItemFailures, the listed ids stay;
    a malformed response (not an object, an id that is empty or not in the batch) fails the
    whole batch, as the Lambda service does.
    """
    if function_error:
        return set()
    if not report_batch_item_failures:
        return set(message_ids)
    try:
        response = json.loads(payload) if payload and payload.strip() else None
    except ValueError:
        return set()
    if response is None:
        return set(message_ids)
    if not isinstance(response, dict):
        return set()
    failures = response.get("batchItemFailures")
    if failures is None:
        return set(message_ids)
    if not isinstance(failures, list):
        return set()
    failed = set()
    for failure in failures:
        identifier = failure.get("itemIdentifier") if isinstance(failure, dict) else None
        if not isinstance(identifier, str) or identifier not in message_ids:
            return set()
        failed.add(identifier)
    return set(message_ids) - failed
