"""DynamoDB against AWS's recorded answers (recordings_dynamodb.py): a table's life (created
CREATING, described ACTIVE, deleted DELETING, refusals naming it), the worker's conditional write,
reads, batches and transactions without capacity members nobody asked for, and refusals of a
missing table or a malformed request."""

from __future__ import annotations

import uuid

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from test_conformance.recorded import answer
from test_conformance.recordings import check

pytestmark = [pytest.mark.e2e]

ID_TABLE = {
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
}


def refused(call) -> ClientError:
    with pytest.raises(ClientError) as error:
        call()
    return error.value


def new_table(dynamodb, stem: str, key: str = "id") -> str:
    name = f"{stem}-{uuid.uuid4().hex[:6]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
    )
    return name


def test_a_tables_life(emulator):
    """CreateTable answers CREATING, a waiter then sees ACTIVE; DeleteTable answers DELETING and a
    waiter sees it gone; a second CreateTable and a DeleteTable of a missing table are refused."""
    dynamodb = emulator.client("dynamodb")
    name = f"rec-ddb-crud-{uuid.uuid4().hex[:6]}"
    check("dynamodb.create-table", answer(dynamodb.create_table(TableName=name, **ID_TABLE)))
    dynamodb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    check("dynamodb.describe-table", answer(dynamodb.describe_table(TableName=name)))
    duplicate = refused(lambda: dynamodb.create_table(TableName=name, **ID_TABLE))
    check("dynamodb.duplicate-table", str(duplicate).replace(name, "<test-table>"))
    check("dynamodb.delete-table", answer(dynamodb.delete_table(TableName=name)))
    dynamodb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    missing = refused(lambda: dynamodb.delete_table(TableName="non-existent"))
    check("dynamodb.delete-missing-table", answer(missing.response))


def test_the_workers_conditional_write(emulator):
    """A failed condition answers ConditionalCheckFailedException with the stored item, for the
    recorded DeleteItem and for the worker's PutItem alike; PutItem's ReturnValues."""
    dynamodb = emulator.client("dynamodb")
    name = new_table(dynamodb, "rec-ddb-cond")
    item = {"id": {"S": "456"}, "price": {"N": "650"}, "product": {"S": "sporting goods"}}
    dynamodb.put_item(TableName=name, Item=item)
    delete = refused(
        lambda: dynamodb.delete_item(
            TableName=name,
            Key={"id": {"S": "456"}},
            ConditionExpression="price between :lo and :hi",
            ExpressionAttributeValues={":lo": {"N": "500"}, ":hi": {"N": "600"}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    )
    check("dynamodb.condition-failed-item", answer(delete.response))
    put = refused(
        lambda: dynamodb.put_item(
            TableName=name,
            Item={"id": {"S": "456"}, "price": {"N": "1"}},
            ConditionExpression="attribute_not_exists(id)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    )
    check("dynamodb.condition-failed-item", answer(put.response))
    first, changed = (
        {"id": {"S": "id1"}, "data": {"S": "foobar"}},
        {"id": {"S": "id1"}, "data": {"S": "barfoo"}},
    )
    check(
        "dynamodb.put-return-values",
        [
            answer(dynamodb.put_item(TableName=name, Item=first, ReturnValues="ALL_OLD")),
            answer(dynamodb.put_item(TableName=name, Item=first, ReturnValues="ALL_OLD")),
            answer(dynamodb.put_item(TableName=name, Item=changed, ReturnValues="ALL_OLD")),
            answer(dynamodb.put_item(TableName=name, Item=first)),
            answer(dynamodb.put_item(TableName=name, Item=first)),
        ],
    )


def test_put_update_get(emulator):
    """PutItem, UpdateItem with ReturnValues=UPDATED_NEW and GetItem, as a state machine's tasks
    called them: UpdateItem answers only the updated attributes, no ConsumedCapacity."""
    dynamodb = emulator.client("dynamodb")
    name = new_table(dynamodb, "rec-ddb-update")
    key = {"id": {"S": "id1"}}
    check(
        "dynamodb.update-item",
        [
            answer(dynamodb.put_item(TableName=name, Item={"data": {"S": "HelloWorld"}, **key})),
            answer(
                dynamodb.update_item(
                    TableName=name,
                    Key=key,
                    UpdateExpression="set S=:r",
                    ExpressionAttributeValues={":r": {"S": "HelloWorldUpdated"}},
                    ReturnValues="UPDATED_NEW",
                )
            ),
            answer(dynamodb.get_item(TableName=name, Key=key)),
        ],
    )


def test_reads_batches_and_transactions(emulator):
    """GetItem, Scan, BatchGetItem, BatchWriteItem and TransactWriteItems (by name and by ARN)
    answer without ConsumedCapacity or ItemCollectionMetrics when not asked; a failed condition
    cancels a transaction with AWS's reasons."""
    dynamodb = emulator.client("dynamodb")
    name = new_table(dynamodb, "rec-ddb-items")
    arn = dynamodb.describe_table(TableName=name)["Table"]["TableArn"]
    written = answer(
        dynamodb.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": name,
                        "Item": {"id": {"S": "someUser"}, "binaryData": {"B": b"foobar"}},
                    }
                }
            ]
        )
    )
    check(
        "dynamodb.get-item",
        [written, dynamodb.get_item(TableName=name, Key={"id": {"S": "someUser"}})["Item"]],
    )
    transactions = [
        answer(
            dynamodb.transact_write_items(
                TransactItems=[
                    {
                        "ConditionCheck": {
                            "TableName": table,
                            "ConditionExpression": "attribute_not_exists(id)",
                            "Key": {"id": {"S": "test1"}},
                        }
                    },
                    {"Put": {"TableName": table, "Item": {"id": {"S": "test2"}}}},
                    {
                        "Update": {
                            "TableName": table,
                            "Key": {"id": {"S": "test3"}},
                            "UpdateExpression": "SET attr1 = :v1, attr2 = :v2",
                            "ExpressionAttributeValues": {":v1": {"S": "value1"}, ":v2": {"S": "value2"}},
                        }
                    },
                    {"Delete": {"TableName": table, "Key": {"id": {"S": "test4"}}}},
                ]
            )
        )
        for table in (name, arn)
    ]
    check("dynamodb.transact-write", transactions)
    dynamodb.put_item(TableName=name, Item={"id": {"S": "Fred"}})
    canceled = refused(
        lambda: dynamodb.transact_write_items(
            TransactItems=[
                {
                    "ConditionCheck": {
                        "TableName": name,
                        "ConditionExpression": "attribute_not_exists(id)",
                        "Key": {"id": {"S": "Fred"}},
                    }
                },
                {"Delete": {"TableName": name, "Key": {"id": {"S": "Bert"}}}},
            ]
        )
    )
    check("dynamodb.transaction-canceled", str(canceled))
    batch = dynamodb.batch_write_item(
        RequestItems={
            name: [
                {"DeleteRequest": {"Key": {"id": {"S": "Fred"}}}},
                {"PutRequest": {"Item": {"id": {"S": "Bob"}}}},
            ]
        }
    )
    check("dynamodb.batch-write", answer(batch))
    empty = new_table(dynamodb, "rec-ddb-batch-get", key="PK")
    got = answer(dynamodb.batch_get_item(RequestItems={empty: {"Keys": [{"PK": {"S": "test-key"}}]}}))
    got["Responses"] = {
        ("<test-table>" if key == empty else key): value for key, value in got["Responses"].items()
    }
    check("dynamodb.batch-get", got)
    users = new_table(dynamodb, "rec-ddb-scan", key="Username")
    for user in ("user01", "user02"):
        dynamodb.put_item(TableName=users, Item={"Username": {"S": user}})
    scanned = answer(dynamodb.scan(TableName=users))
    scanned["Items"].sort(key=lambda item: item["Username"]["S"])
    check("dynamodb.scan", scanned)


def test_refusals_of_a_missing_table_or_item(emulator):
    """Item operations on a missing table: ResourceNotFoundException without the table's name; a
    PutItem without Item (sent past boto3's own validation): a 400 ValidationException."""
    dynamodb = emulator.client("dynamodb")
    transact = refused(
        lambda: dynamodb.transact_write_items(
            TransactItems=[{"Put": {"TableName": "non-existing-table", "Item": {}}}]
        )
    )
    check("dynamodb.transact-missing-table", answer(transact.response))
    put = refused(lambda: dynamodb.put_item(TableName="non-existing-table", Item={"id": {"S": "x"}}))
    check("dynamodb.put-missing-table", answer(put.response))
    env = emulator.aws_env()
    unvalidated = boto3.client(
        "dynamodb",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=env["AWS_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=env.get("AWS_SESSION_TOKEN"),
        config=Config(parameter_validation=False, retries={"max_attempts": 1}),
    )
    name = new_table(dynamodb, "rec-ddb-noitem")
    # no Item on purpose: the request DynamoDB refuses
    without_item = refused(lambda: unvalidated.put_item(TableName=name))  # type: ignore[call-arg]
    check("dynamodb.put-without-item", answer(without_item.response))
