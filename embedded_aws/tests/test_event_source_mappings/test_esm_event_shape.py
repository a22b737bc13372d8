"""The SQS event a mapping's function receives has the shape of the documented example ("Using
Lambda with Amazon SQS", with-sqs.html): message attributes carry only the value they have, the
two list fields as empty lists and dataType; without attributes and without a batching window
there is no md5OfMessageAttributes key (as AWS answered in LocalStack's recordings)."""

from __future__ import annotations

import hashlib

import pytest

from test_event_source_mappings.support import make, queue_arn, wait_for_bodies
from tests.e2e.conftest import REGION, emulator  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_records_carry_message_attributes_as_lambda_does(emulator):
    """A string attribute has stringValue and no binaryValue key; a binary one binaryValue
    (base64) and no stringValue key; a message without attributes has {} and no
    md5OfMessageAttributes (the mapping has no batching window); the other record fields are there."""
    p = make(emulator, "esm-shape", batch_size=2)
    sqs = emulator.client("sqs")
    sqs.send_message(
        QueueUrl=p.queue_url,
        MessageBody="with",
        MessageAttributes={
            "kind": {"DataType": "String", "StringValue": "order"},
            "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
        },
    )
    sqs.send_message(QueueUrl=p.queue_url, MessageBody="without")
    records = {r["body"]: r for i in wait_for_bodies(emulator, p.name, 2) for r in i["records"]}

    with_attributes = records["with"]
    assert with_attributes["messageAttributes"] == {
        "kind": {
            "stringValue": "order",
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "String",
        },
        "blob": {"binaryValue": "AAE=", "stringListValues": [], "binaryListValues": [], "dataType": "Binary"},
    }
    assert len(with_attributes["md5OfMessageAttributes"]) == 32
    without = records["without"]
    assert without["messageAttributes"] == {}
    assert "md5OfMessageAttributes" not in without
    assert without["md5OfBody"] == hashlib.md5(b"without").hexdigest()
    assert (without["eventSource"], without["eventSourceARN"], without["awsRegion"]) == (
        "aws:sqs",
        queue_arn(p),
        REGION,
    )
    assert set(without["attributes"]) >= {
        "ApproximateReceiveCount",
        "SentTimestamp",
        "SenderId",
        "ApproximateFirstReceiveTimestamp",
    }
