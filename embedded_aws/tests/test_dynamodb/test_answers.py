"""DynamoDB's answers reshaped to AWS's (services/dynamodb/answers.py), as pure functions: capacity
members kept when asked, refusals of missing required members in AWS's words."""

from __future__ import annotations

import json

from embedded_aws.services.dynamodb.answers import missing_members, reshape

CAPACITY = {"TableName": "t", "CapacityUnits": 1.0}


def test_capacity_members_are_kept_when_asked():
    """ReturnConsumedCapacity and ReturnItemCollectionMetrics keep what moto computed."""
    body = json.dumps({"ConsumedCapacity": [CAPACITY], "ItemCollectionMetrics": {}, "UnprocessedItems": {}})
    asked = {"ReturnConsumedCapacity": "TOTAL", "ReturnItemCollectionMetrics": "SIZE"}
    assert json.loads(reshape("BatchWriteItem", asked, 200, body)) == json.loads(body)
    assert json.loads(reshape("BatchWriteItem", {}, 200, body)) == {"UnprocessedItems": {}}


def test_an_answer_without_capacity_members_is_left_as_sent():
    """A read's body is not parsed and re-encoded when there is nothing to take out."""
    body = '{"Item": {"id": {"S": "1"}}}'
    assert reshape("GetItem", {}, 200, body) is body


def test_every_missing_required_member_is_named():
    """AWS's ValidationException lists each required member that is null, in lowerCamelCase."""
    assert missing_members("PutItem", {"TableName": "t", "Item": {}}) is None
    assert missing_members("PutItem", {"TableName": "t"}) == (
        "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null"
    )
    message = missing_members("PutItem", {})
    assert message is not None and message.startswith("2 validation errors detected: ")
    assert "'tableName'" in message and "'item'" in message
    assert missing_members("NoSuchAction", {}) is None
