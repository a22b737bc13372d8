"""AWS/DynamoDB ConsumedWriteCapacityUnits and ConsumedReadCapacityUnits as the embedded AWS
publishes them (services/dynamodb/capacity.py): DynamoDB's unit rules, and the metrics of a table
after writes, a failed conditional write and reads."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError
from test_cloudwatch.metric_sums import recent_sum

from embedded_aws.services.dynamodb.capacity import read_units, write_units


def test_write_units_follow_the_larger_item_and_never_go_below_one():
    """One unit per started 1 KB of the larger of the item before and after; a write of nothing
    (a failed condition on an absent item, a delete of nothing) still costs one."""
    assert write_units(None, 100) == 1
    assert write_units(None, None) == 1
    assert write_units(1024, None) == 1
    assert write_units(1025, 10) == 2
    assert write_units(200, 2500) == 3


def test_read_units_are_per_4_kb_and_halved_when_eventually_consistent():
    """One unit per started 4 KB for a strongly consistent GetItem, half of it otherwise, and
    half a unit for an item that is not there."""
    assert read_units(None, consistent=False) == 0.5
    assert read_units(4096, consistent=True) == 1
    assert read_units(4097, consistent=True) == 2
    assert read_units(9000, consistent=False) == 1.5


def test_a_tables_consumed_units_count_writes_failed_conditions_and_reads(emulator):
    """Two new items (1 and 3 units), a rejected conditional PutItem (1 unit, as AWS counts it),
    a delete (1), an eventually consistent and a strongly consistent GetItem (0.5 and 1) show in
    the table's AWS/DynamoDB sums; another table's do not mix in."""
    dynamodb, name = emulator.client("dynamodb"), "capacity-e2e"
    dynamodb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    dynamodb.put_item(TableName=name, Item={"id": {"S": "small"}})
    dynamodb.put_item(TableName=name, Item={"id": {"S": "large"}, "blob": {"S": "x" * 2500}})
    with pytest.raises(ClientError) as refused:
        dynamodb.put_item(
            TableName=name, Item={"id": {"S": "small"}}, ConditionExpression="attribute_not_exists(id)"
        )
    assert refused.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    dynamodb.delete_item(TableName=name, Key={"id": {"S": "small"}})
    dynamodb.get_item(TableName=name, Key={"id": {"S": "large"}})
    dynamodb.get_item(TableName=name, Key={"id": {"S": "large"}}, ConsistentRead=True)
    cloudwatch = emulator.client("cloudwatch")

    def total(metric: str, table: str) -> float:
        return recent_sum(cloudwatch, "AWS/DynamoDB", metric, {"TableName": table})

    assert total("ConsumedWriteCapacityUnits", name) == 1 + 3 + 1 + 1
    assert total("ConsumedReadCapacityUnits", name) == 0.5 + 1
    assert total("ConsumedWriteCapacityUnits", "capacity-e2e-other") == 0
