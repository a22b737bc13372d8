"""The records an SQS mapping hands its function, and which messages the Lambda service deletes after a batch."""

from __future__ import annotations

import json

import pytest

from embedded_aws.lambda_host.event_source_mappings.records import acknowledged_ids, sqs_record

IDS = ["m1", "m2", "m3"]


@pytest.mark.parametrize(
    "function_error,payload,report,expected",
    [
        ("Unhandled", b'{"batchItemFailures": []}', True, set()),  # a function error fails the batch
        (None, b'{"batchItemFailures": [{"itemIdentifier": "m2"}]}', False, set(IDS)),  # not reporting
        (None, b"", True, set(IDS)),
        (None, b"null", True, set(IDS)),
        (None, b"{}", True, set(IDS)),
        (None, b'{"batchItemFailures": []}', True, set(IDS)),
        (None, b'{"batchItemFailures": [{"itemIdentifier": "m2"}]}', True, {"m1", "m3"}),
        (None, b'{"batchItemFailures": [{"itemIdentifier": "other"}]}', True, set()),  # unknown id
        (None, b'{"batchItemFailures": [{"itemIdentifier": ""}]}', True, set()),
        (None, b'{"batchItemFailures": [{}]}', True, set()),
        (None, b'{"batchItemFailures": "m2"}', True, set()),
        (None, b'["m2"]', True, set()),
        (None, b"not json", True, set()),
    ],
)
def test_acknowledged_ids_follow_the_partial_batch_rules(function_error, payload, report, expected):
    """Only successfully processed messages are deleted; any malformed partial batch response
    fails the whole batch, as the Lambda service does."""
    assert acknowledged_ids(IDS, function_error, payload, report) == expected


def test_sqs_record_has_the_lambda_event_shape():
    """A received message becomes the record shape Lambda hands to functions."""
    message = {
        "MessageId": "m1",
        "ReceiptHandle": "rh",
        "Body": '{"id": "a", "quantity": 1}',
        "MD5OfBody": "x",
        "Attributes": {
            "ApproximateReceiveCount": "2",
            "SentTimestamp": "1",
            "SenderId": "s",
            "ApproximateFirstReceiveTimestamp": "2",
            "Unrelated": "no",
        },
        "MessageAttributes": {"kind": {"StringValue": "order", "DataType": "String"}},
    }
    record = sqs_record(message, "arn:aws:sqs:us-east-1:123456789012:jobs", "us-east-1")
    assert record["eventSource"] == "aws:sqs" and record["eventSourceARN"].endswith(":jobs")
    assert record["attributes"] == {
        "ApproximateReceiveCount": "2",
        "SentTimestamp": "1",
        "SenderId": "s",
        "ApproximateFirstReceiveTimestamp": "2",
    }
    assert record["messageAttributes"]["kind"]["stringValue"] == "order"
    assert json.loads(record["body"]) == {"id": "a", "quantity": 1}


def test_md5_of_message_attributes_is_absent_or_null_without_attributes_by_the_batching_window():
    """Without attributes: no key when the mapping has no batching window, null when it has one;
    with attributes: the digest SQS gave, either way (LocalStack's recordings of AWS)."""
    bare = {"MessageId": "m1", "ReceiptHandle": "rh", "Body": "b", "MD5OfBody": "x", "Attributes": {}}
    assert "md5OfMessageAttributes" not in sqs_record(bare, "arn:aws:sqs:us-east-1:1:q", "us-east-1")
    assert (
        sqs_record(bare, "arn:aws:sqs:us-east-1:1:q", "us-east-1", batching_window=True)[
            "md5OfMessageAttributes"
        ]
        is None
    )
    with_attributes = {
        **bare,
        "MD5OfMessageAttributes": "d" * 32,
        "MessageAttributes": {"k": {"StringValue": "v", "DataType": "String"}},
    }
    for window in (False, True):
        assert (
            sqs_record(with_attributes, "arn:aws:sqs:us-east-1:1:q", "us-east-1", batching_window=window)[
                "md5OfMessageAttributes"
            ]
            == "d" * 32
        )
