"""Every operation of the services the stack uses, called with no parameters against the embedded
AWS: each answers normally or with a 4xx carrying an AWS error code, never a 5xx or an HTML page.
An action moto lacks is refused as AWS refuses a call it does not know (server/unimplemented.py), a
call missing a required member as AWS's request validation refuses it (server/missing_members.py).
The walk runs against the run's shared emulator, so also with the roles, stacks and tables the
other modules made (a role CloudFormation made once broke GetAccountAuthorizationDetails)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

pytestmark = [pytest.mark.e2e]

SERVICES = ("sqs", "dynamodb", "lambda", "logs", "cloudwatch", "cloudformation", "iam", "sts", "sns", "s3")
# Operations taking no required member would act on the shared emulator: only readers are called.
READERS = ("Describe", "List", "Get")


def _client(emulator, service: str):
    return emulator.new_client(
        service,
        parameter_validation=False,
        retries={"max_attempts": 1},
        connect_timeout=5,
        read_timeout=15,
    )


def _call(client, operation: str) -> str | None:
    """The problem with `operation`'s answer, or None when it is a normal answer or an AWS 4xx."""
    method = getattr(client, _snake(client, operation))
    try:
        method()
    except ClientError as error:
        status = error.response["ResponseMetadata"].get("HTTPStatusCode", 0)
        code = error.response.get("Error", {}).get("Code", "")
        if status >= 500 or not code or not (400 <= status < 500):
            return f"{operation}: {status} {code or error.response}"
    except BotoCoreError as error:
        # A request botocore could not build (a URI member missing) never reached the server;
        # a timeout or an unparseable body did.
        if "ReadTimeout" in type(error).__name__ or "Parse" in type(error).__name__:
            return f"{operation}: {type(error).__name__} {error}"
    except ResponseParserError as error:
        return f"{operation}: unparseable {str(error)[:80]}"
    except (KeyError, ValueError, TypeError):
        pass  # botocore's serializer refused the empty parameters before sending
    return None


def _snake(client, operation: str) -> str:
    return str(next(name for name, api in client.meta.method_to_api_mapping.items() if api == operation))


def _operations(client) -> list[str]:
    model = client.meta.service_model
    picked = []
    for name in model.operation_names:
        shape = model.operation_model(name).input_shape
        required = shape.required_members if shape is not None else []
        if required or name.startswith(READERS):
            picked.append(name)
    return picked


@pytest.mark.parametrize("service", SERVICES)
def test_no_operation_answers_5xx(emulator, service):
    client = _client(emulator, service)
    operations = _operations(client)
    with ThreadPoolExecutor(max_workers=8) as pool:
        problems = [p for p in pool.map(lambda op: _call(client, op), operations) if p]
    assert problems == [], f"{service}: {len(problems)} of {len(operations)} operations: {problems}"


def test_unimplemented_dynamodb_action_is_unknown_operation(emulator):
    client = _client(emulator, "dynamodb")
    with pytest.raises(ClientError) as caught:
        client.describe_contributor_insights(TableName="no500-absent")
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert caught.value.response["Error"]["Code"] == "UnknownOperationException"


@pytest.mark.parametrize(
    ("service", "operation", "code", "message"),
    [
        ("sns", "create_topic", "ValidationError", "Value null at 'name' failed to satisfy constraint"),
        ("logs", "create_log_group", "ValidationException", "Value null at 'logGroupName'"),
        ("sqs", "create_queue", "ValidationException", "Value null at 'queueName'"),
        (
            "lambda",
            "create_function",
            "ValidationException",
            "validation errors detected: Value null at 'functionName'",
        ),
        (
            "cloudformation",
            "get_template_summary",
            "ValidationError",
            "Either Template URL or Template Body must be specified.",
        ),
    ],
)
def test_a_call_missing_a_required_member_is_a_400_naming_it(emulator, service, operation, code, message):
    """One of each protocol (query, JSON, SQS's query-compatible JSON, REST-JSON) and an operation
    that needs one of several members: AWS's code and words, a 400, not moto's 500 page."""
    with pytest.raises(ClientError) as caught:
        getattr(_client(emulator, service), operation)()
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert caught.value.response["Error"]["Code"] == code
    assert message in caught.value.response["Error"]["Message"]


def test_list_exports_without_a_table_lists_every_export(emulator):
    """TableArn is optional: without it DynamoDB lists the account's exports (none here)."""
    answer = _client(emulator, "dynamodb").list_exports()
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert answer["ExportSummaries"] == []


def test_a_server_error_with_every_member_given_stays_a_server_error(emulator):
    """The validation answers only for what is missing: a PutItem carrying every required member
    that meets a 500 (an injected fault, as the worker's retry test uses) is still that 500."""
    table = f"no500-{uuid.uuid4().hex[:8]}"
    dynamodb = _client(emulator, "dynamodb")
    dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    emulator.inject_fault(action="PutItem", table=table, code="InternalServerError", status=500, count=5)
    try:
        with pytest.raises(ClientError) as caught:
            dynamodb.put_item(TableName=table, Item={"id": {"S": "x"}})
    finally:
        emulator.clear_faults(table)
        dynamodb.delete_table(TableName=table)
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert caught.value.response["Error"]["Code"] == "InternalServerError"
