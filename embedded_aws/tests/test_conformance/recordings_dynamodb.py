"""The conformance cases of DynamoDB: AWS's answers as LocalStack recorded them in
`tests/aws/services/dynamodb/test_dynamodb.snapshot.json` and, for two refusals of PutItem, in the
Step Functions error-handling recordings (a state machine calling PutItem on AWS; the cause
carries DynamoDB's code, status and message), and for PutItem, UpdateItem and GetItem in its
DynamoDB task recordings (each task's output is the API's answer). Each case names its file,
snapshot key and validation date; recordings.py counts them with its own.

Chosen by who calls: the worker's conditional PutItem (ReturnValuesOnConditionCheckFailure=ALL_OLD),
`ops dlq` (BatchGetItem), `ops deploy` (DescribeTable of a kept table), the benchmarks (CreateTable,
PutItem, Scan with Select=COUNT, DescribeTable's ItemCount, DeleteTable) and anything that counts
capacity from responses (UpdateItem, BatchWriteItem, TransactWriteItems answer without capacity
members).
"""

from __future__ import annotations

from test_conformance.recorded import ANY, Case, Exactly, Like, Recording

DYNAMODB = "tests/aws/services/dynamodb/test_dynamodb.snapshot.json"
SFN_SDK = "tests/aws/services/stepfunctions/v2/error_handling/test_task_service_dynamodb.snapshot.json"
SFN_TASKS = "tests/aws/services/stepfunctions/v2/services/test_dynamodb_task_service.snapshot.json"
TEST = "TestDynamoDB::"
TABLE_ARN = Like(r"arn:aws:dynamodb:[a-z0-9-]+:\d{12}:table/[\w.-]+")
TABLE_ID = Like(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ID_KEY = {
    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
}
THROUGHPUT = {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
OK = Exactly({"HTTPStatusCode": 200})


def error(code: str, text: str, **members: object) -> dict:
    """A DynamoDB error (400) as boto3 shows it; a modeled error also carries a `message` member."""
    return {"Error": {"Code": code, "Message": text}, **members, "HTTPStatusCode": 400}


def table(status: str, **more: object) -> Exactly:
    """A provisioned table's description with the id key (5/5 capacity): exactly these keys."""
    return Exactly(
        {
            **ID_KEY,
            "CreationDateTime": ANY,
            "DeletionProtectionEnabled": False,
            "ItemCount": 0,
            "ProvisionedThroughput": THROUGHPUT,
            "TableArn": TABLE_ARN,
            "TableId": TABLE_ID,
            "TableName": ANY,
            "TableSizeBytes": 0,
            "TableStatus": status,
            **more,
        }
    )


DYNAMODB_CASES = [
    # --- tables: what CreateTable, DescribeTable and DeleteTable answer --------------------------
    Case(
        "dynamodb.create-table",
        Recording(DYNAMODB, TEST + "test_table_crud", "create-table", "2025-10-08"),
        Exactly({"TableDescription": table("CREATING"), "HTTPStatusCode": 200}),
        notes="AWS answers CREATING; the recorded run then waited for ACTIVE before DescribeTable",
    ),
    Case(
        "dynamodb.describe-table",
        Recording(DYNAMODB, TEST + "test_table_crud", "describe-table", "2025-10-08"),
        Exactly(
            {
                "Table": table(
                    "ACTIVE",
                    WarmThroughput={"ReadUnitsPerSecond": 5, "Status": "ACTIVE", "WriteUnitsPerSecond": 5},
                ),
                "HTTPStatusCode": 200,
            }
        ),
    ),
    Case(
        "dynamodb.delete-table",
        Recording(DYNAMODB, TEST + "test_table_crud", "delete-table", "2025-10-08"),
        Exactly(
            {
                "TableDescription": Exactly(
                    {
                        "DeletionProtectionEnabled": False,
                        "ItemCount": 0,
                        "ProvisionedThroughput": THROUGHPUT,
                        "TableArn": TABLE_ARN,
                        "TableId": TABLE_ID,
                        "TableName": ANY,
                        "TableSizeBytes": 0,
                        "TableStatus": "DELETING",
                    }
                ),
                "HTTPStatusCode": 200,
            }
        ),
    ),
    Case(
        "dynamodb.delete-missing-table",
        Recording(DYNAMODB, TEST + "test_table_crud", "delete-non-existent-table", "2025-10-08"),
        error(
            "ResourceNotFoundException",
            "Requested resource not found: Table: non-existent not found",
            message="Requested resource not found: Table: non-existent not found",
        ),
    ),
    Case(
        "dynamodb.duplicate-table",
        Recording(DYNAMODB, TEST + "test_create_duplicate_table", "Error", "2025-10-08"),
        "An error occurred (ResourceInUseException) when calling the CreateTable operation: "
        "Table already exists: <test-table>",
    ),
    # --- items: the worker's conditional write, reads, batches, transactions --------------------
    Case(
        "dynamodb.condition-failed-item",
        Recording(DYNAMODB, TEST + "test_return_values_on_conditions_check_failure", "items", "2025-10-08"),
        error(
            "ConditionalCheckFailedException",
            "The conditional request failed",
            message="The conditional request failed",
            Item={"id": {"S": "456"}, "price": {"N": "650"}, "product": {"S": "sporting goods"}},
        ),
        notes="recorded for DeleteItem; the worker's PutItem with ReturnValuesOnConditionCheckFailure=ALL_OLD "
        "is held to the same answer (the API reference gives both the same ConditionalCheckFailedException "
        "with Item)",
    ),
    Case(
        "dynamodb.put-return-values",
        Recording(
            DYNAMODB,
            TEST + "test_return_values_in_put_item",
            "PutFirstItem..PutSecondItemReturnNone",
            "2025-10-08",
        ),
        [
            OK,
            Exactly({"Attributes": {"data": {"S": "foobar"}, "id": {"S": "id1"}}, "HTTPStatusCode": 200}),
            Exactly({"Attributes": {"data": {"S": "foobar"}, "id": {"S": "id1"}}, "HTTPStatusCode": 200}),
            OK,
            OK,
        ],
    ),
    Case(
        "dynamodb.update-item",
        Recording(
            SFN_TASKS,
            "TestTaskServiceDynamoDB::test_base_integrations[DYNAMODB_PUT_UPDATE_GET_ITEM]",
            "get_execution_history (the putItem, updateItem and getItem tasks' outputs)",
            "2025-11-06",
        ),
        [
            OK,
            Exactly({"Attributes": {"S": {"S": "HelloWorldUpdated"}}, "HTTPStatusCode": 200}),
            Exactly(
                {
                    "Item": {
                        "S": {"S": "HelloWorldUpdated"},
                        "data": {"S": "HelloWorld"},
                        "id": {"S": "id1"},
                    },
                    "HTTPStatusCode": 200,
                }
            ),
        ],
        notes="a state machine's DynamoDB tasks: each output is the API's answer with the SDK's HTTP metadata "
        "(UpdateItem's body 46 bytes, PutItem's 2: no ConsumedCapacity)",
    ),
    Case(
        "dynamodb.get-item",
        Recording(
            DYNAMODB, TEST + "test_transaction_write_binary_data", "WriteResponse, GetItem", "2025-10-08"
        ),
        [OK, {"binaryData": {"B": b"foobar"}, "id": {"S": "someUser"}}],
    ),
    Case(
        "dynamodb.scan",
        Recording(DYNAMODB, TEST + "test_dynamodb_execute_transaction", "TableScan", "2025-10-08"),
        Exactly(
            {
                "Count": 2,
                "Items": [{"Username": {"S": "user01"}}, {"Username": {"S": "user02"}}],
                "ScannedCount": 2,
                "HTTPStatusCode": 200,
            }
        ),
        notes="the recorded run wrote the two items with ExecuteTransaction (PartiQL); ours with PutItem",
    ),
    Case(
        "dynamodb.batch-get",
        Recording(DYNAMODB, TEST + "test_dynamodb_get_batch_items", "Response", "2025-10-08"),
        Exactly({"Responses": {"<test-table>": []}, "UnprocessedKeys": {}, "HTTPStatusCode": 200}),
    ),
    Case(
        "dynamodb.batch-write",
        Recording(DYNAMODB, TEST + "test_batch_write_items", "BatchWriteResponse", "2025-10-08"),
        Exactly({"UnprocessedItems": {}, "HTTPStatusCode": 200}),
    ),
    Case(
        "dynamodb.transact-write",
        Recording(
            DYNAMODB,
            TEST + "test_transaction_write_items",
            "Response, Response_using_table_arn",
            "2026-01-07",
        ),
        [OK, OK],
    ),
    Case(
        "dynamodb.transaction-canceled",
        Recording(DYNAMODB, TEST + "test_transaction_write_canceled", "Error", "2025-10-08"),
        "An error occurred (TransactionCanceledException) when calling the TransactWriteItems operation: "
        "Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None]",
    ),
    # --- refusals: a missing table, a malformed request ------------------------------------------
    Case(
        "dynamodb.transact-missing-table",
        Recording(
            DYNAMODB,
            TEST + "test_batch_write_not_existing_table",
            "exc-not-found-transact-write-items",
            "2025-10-08",
        ),
        error(
            "ResourceNotFoundException",
            "Requested resource not found",
            message="Requested resource not found",
        ),
    ),
    Case(
        "dynamodb.put-missing-table",
        Recording(
            SFN_SDK,
            "TestTaskServiceDynamoDB::test_put_item_no_such_table",
            "get_execution_history",
            "2023-05-12",
        ),
        error(
            "ResourceNotFoundException",
            "Requested resource not found",
            message="Requested resource not found",
        ),
        notes="the cause of the recorded TaskFailed event: 'Requested resource not found (Service: "
        "AmazonDynamoDBv2; Status Code: 400; Error Code: ResourceNotFoundException; ...)': unlike "
        "DeleteTable and DescribeTable, an item operation does not name the table",
    ),
    Case(
        "dynamodb.put-without-item",
        Recording(
            SFN_SDK, "TestTaskServiceDynamoDB::test_invalid_param", "get_execution_history", "2023-05-16"
        ),
        error(
            "ValidationException",
            "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null",
        ),
        notes="the cause of the recorded TaskFailed event: '1 validation error detected: Value null at 'item' "
        "failed to satisfy constraint: Member must not be null (Service: AmazonDynamoDBv2; Status Code: 400; "
        "Error Code: ValidationException; ...)'",
    ),
]
