"""Least privilege, enforced: a probe function deployed with the worker's own role (credentials
from the local Lambda host, IAM enforcement on) makes every call the worker and its poller make,
which succeed, and a matrix of calls the role must not make, each of which is denied. Every
forbidden call that would not damage the stack is then replayed with admin credentials and
succeeds, so each denial is about permission, not about a bad parameter."""

from __future__ import annotations

import json

import pytest

from local.session import LocalSession, wait_for
from ops import observe
from tests.e2e.conftest import ACCOUNT, function_zip
from tests.shared_aws import FAST_TIMEOUTS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(20)]

PREFIX = "lpriv"  # this module's stack in the shared embedded AWS
WORKER = f"{PREFIX}-worker"
PROBE_NAME = f"{PREFIX}-least-privilege-probe"
SHADOW_LOG_GROUP = f"/aws/lambda/{WORKER}-shadow"  # a look-alike of the worker's own group name
ADMIN_ONLY_ROLE = f"{PREFIX}-admin-only"

# Runs inside the local Lambda host with the worker role's credentials; the test also execs it
# to build the same forbidden calls for the admin replay.
PROBE = r'''
import time

import boto3
from botocore.exceptions import ClientError

DENIED_CODES = ("AccessDenied", "AccessDeniedException")


def attempt(name, call):
    """Run one call: (record, response). A denial is an IAM refusal, nothing else."""
    try:
        return {"name": name, "outcome": "succeeded"}, call()
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        denied = code in DENIED_CODES or (status == 403 and "not authorized to perform" in str(error))
        return {"name": name, "outcome": "denied" if denied else "error", "code": code, "status": status,
                "message": str(error).splitlines()[0][:300]}, None


def forbidden_calls(n):
    """(name, service, operation, params, replayable) for calls the worker role must not make.
    Each uses real names and valid parameters; replayable ones do the stack no harm when
    replayed with admin credentials."""
    order_key = {"id": {"S": n["order_id"]}}
    reference_key = {"id": {"S": "reference"}}
    calls = []
    for table, key in ((n["orders"], order_key), (n["reference"], reference_key)):
        calls += [
            (f"dynamodb:GetItem {table}", "dynamodb", "get_item", {"TableName": table, "Key": key}, True),
            (f"dynamodb:Scan {table}", "dynamodb", "scan", {"TableName": table}, True),
            (f"dynamodb:Query {table}", "dynamodb", "query", {
                "TableName": table, "KeyConditionExpression": "id = :id",
                "ExpressionAttributeValues": {":id": key["id"]}}, True),
            (f"dynamodb:BatchGetItem {table}", "dynamodb", "batch_get_item",
             {"RequestItems": {table: {"Keys": [key]}}}, True),
            (f"dynamodb:DescribeTable {table}", "dynamodb", "describe_table", {"TableName": table}, True),
            (f"dynamodb:UpdateItem {table}", "dynamodb", "update_item", {
                "TableName": table, "Key": key, "UpdateExpression": "SET probe = :p",
                "ExpressionAttributeValues": {":p": {"S": "touched"}}}, True),
            (f"dynamodb:BatchWriteItem {table}", "dynamodb", "batch_write_item", {"RequestItems": {table: [
                {"PutRequest": {"Item": {"id": {"S": "probe-batch"}, "quantity": {"N": "1"}}}}]}}, True),
            (f"dynamodb:TransactWriteItems(Update) {table}", "dynamodb", "transact_write_items", {"TransactItems": [
                {"Update": {"TableName": table, "Key": key, "UpdateExpression": "SET probe = :p",
                            "ExpressionAttributeValues": {":p": {"S": "transacted"}}}}]}, True),
        ]
    calls += [
        # The worker's exact write, aimed at the reference table.
        (f"dynamodb:PutItem {n['reference']}", "dynamodb", "put_item", {
            "TableName": n["reference"], "Item": {"id": {"S": "probe-reference"}, "note": {"S": "x"}},
            "ConditionExpression": "attribute_not_exists(id)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
         True),
        ("dynamodb:ListTables", "dynamodb", "list_tables", {}, True),
        ("dynamodb:CreateTable", "dynamodb", "create_table", {
            "TableName": n["orders"] + "-probe-created", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}, True),
        ("sqs:SendMessage jobs", "sqs", "send_message",
         {"QueueUrl": n["queue_url"], "MessageBody": '{"id": "probe-sent", "quantity": 1}'}, True),
        ("sqs:SendMessageBatch jobs", "sqs", "send_message_batch", {"QueueUrl": n["queue_url"], "Entries": [
            {"Id": "1", "MessageBody": '{"id": "probe-batch-sent", "quantity": 1}'}]}, True),
        ("sqs:ChangeMessageVisibility jobs", "sqs", "change_message_visibility", {
            "QueueUrl": n["queue_url"], "ReceiptHandle": n["jobs_receipt_handle"], "VisibilityTimeout": 0}, True),
        ("sqs:SetQueueAttributes jobs", "sqs", "set_queue_attributes",
         {"QueueUrl": n["queue_url"], "Attributes": {"DelaySeconds": "0"}}, True),
        ("sqs:GetQueueUrl jobs", "sqs", "get_queue_url", {"QueueName": n["queue_url"].rsplit("/", 1)[-1]}, True),
        ("sqs:ListQueues", "sqs", "list_queues", {}, True),
        ("sqs:SendMessage dlq", "sqs", "send_message", {"QueueUrl": n["dlq_url"], "MessageBody": "probe"}, True),
        ("sqs:ReceiveMessage dlq", "sqs", "receive_message", {"QueueUrl": n["dlq_url"], "WaitTimeSeconds": 0}, True),
        ("sqs:DeleteMessage dlq", "sqs", "delete_message",
         {"QueueUrl": n["dlq_url"], "ReceiptHandle": n["dlq_receipt_handle"]}, True),
        ("sqs:GetQueueAttributes dlq", "sqs", "get_queue_attributes",
         {"QueueUrl": n["dlq_url"], "AttributeNames": ["All"]}, True),
        ("sqs:PurgeQueue dlq", "sqs", "purge_queue", {"QueueUrl": n["dlq_url"]}, True),
        ("sqs:PurgeQueue jobs", "sqs", "purge_queue", {"QueueUrl": n["queue_url"]}, True),
        ("logs:CreateLogStream other group", "logs", "create_log_stream",
         {"logGroupName": n["other_log_group"], "logStreamName": "probe-created"}, True),
        ("logs:PutLogEvents other group", "logs", "put_log_events", {
            "logGroupName": n["other_log_group"], "logStreamName": n["other_log_stream"],
            "logEvents": [{"timestamp": int(time.time() * 1000), "message": "probe"}]}, True),
        ("logs:CreateLogStream look-alike group", "logs", "create_log_stream",
         {"logGroupName": n["shadow_log_group"], "logStreamName": "probe-created"}, True),
        ("logs:FilterLogEvents own group", "logs", "filter_log_events", {"logGroupName": n["log_group"]}, True),
        ("logs:DescribeLogGroups", "logs", "describe_log_groups", {}, True),
        ("logs:CreateLogGroup", "logs", "create_log_group", {"logGroupName": n["log_group"] + "-probe-created"}, True),
        ("iam:GetRole own role", "iam", "get_role", {"RoleName": n["role_name"]}, True),
        ("iam:ListRoles", "iam", "list_roles", {}, True),
        ("sts:AssumeRole", "sts", "assume_role",
         {"RoleArn": n["admin_only_role_arn"], "RoleSessionName": "probe"}, True),
        ("lambda:GetFunction worker", "lambda", "get_function", {"FunctionName": n["function"]}, True),
        ("lambda:InvokeFunction worker", "lambda", "invoke",
         {"FunctionName": n["function"], "Payload": b'{"Records": []}'}, True),
        # Last: these would change the stack for good if they went through.
        ("iam:PutRolePolicy own role", "iam", "put_role_policy", {
            "RoleName": n["role_name"], "PolicyName": "escalate", "PolicyDocument":
            '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'},
         False),
        ("iam:CreateAccessKey admin user", "iam", "create_access_key", {"UserName": n["admin_user"]}, False),
        ("logs:DeleteLogGroup own group", "logs", "delete_log_group", {"logGroupName": n["log_group"]}, False),
        ("sqs:DeleteQueue dlq", "sqs", "delete_queue", {"QueueUrl": n["dlq_url"]}, False),
        ("sqs:DeleteQueue jobs", "sqs", "delete_queue", {"QueueUrl": n["queue_url"]}, False),
        (f"dynamodb:DeleteItem {n['reference']}", "dynamodb", "delete_item",
         {"TableName": n["reference"], "Key": reference_key}, False),
        (f"dynamodb:DeleteItem {n['orders']}", "dynamodb", "delete_item",
         {"TableName": n["orders"], "Key": order_key}, False),
        (f"dynamodb:DeleteTable {n['reference']}", "dynamodb", "delete_table", {"TableName": n["reference"]}, False),
        (f"dynamodb:DeleteTable {n['orders']}", "dynamodb", "delete_table", {"TableName": n["orders"]}, False),
    ]
    return calls


def run_calls(calls, client):
    return [attempt(name, lambda: getattr(client(service), operation)(**params))[0]
            for name, service, operation, params, _ in calls]


def handler(event, context):
    n = event
    clients = {}

    def client(service):
        # No explicit credentials: the sandbox's environment carries the role's and the endpoint.
        return clients.setdefault(service, boto3.client(service))

    sqs, dynamodb, logs = client("sqs"), client("dynamodb"), client("logs")
    allowed = []
    identity = client("sts").get_caller_identity()["Arn"]  # needs no permission, as on AWS

    # Receive as the poller does until both messages the test sent are in hand.
    messages, deadline = {}, time.time() + 20
    record = {"name": "sqs:ReceiveMessage jobs", "outcome": "succeeded"}
    while set(n["message_ids"]) - messages.keys() and time.time() < deadline and record["outcome"] == "succeeded":
        record, response = attempt("sqs:ReceiveMessage jobs", lambda: sqs.receive_message(
            QueueUrl=n["queue_url"], MaxNumberOfMessages=10, WaitTimeSeconds=1,
            AttributeNames=["All"], MessageAttributeNames=["All"]))
        for message in (response or {}).get("Messages", []):
            messages[message["MessageId"]] = message
    if set(n["message_ids"]) - messages.keys() and record["outcome"] == "succeeded":
        record = {"name": "sqs:ReceiveMessage jobs", "outcome": "error", "message": "test messages not received"}
    allowed.append(record)
    first, second = (messages.get(i, {}).get("ReceiptHandle", "missing") for i in n["message_ids"])

    # Forbidden calls run while the first message is still held, so its receipt handle is valid.
    forbidden = run_calls(forbidden_calls({**n, "jobs_receipt_handle": first}), client)

    for name, call in [
        ("sqs:DeleteMessage jobs", lambda: sqs.delete_message(QueueUrl=n["queue_url"], ReceiptHandle=first)),
        ("sqs:DeleteMessageBatch jobs", lambda: sqs.delete_message_batch(
            QueueUrl=n["queue_url"], Entries=[{"Id": "0", "ReceiptHandle": second}])),
        ("sqs:GetQueueAttributes jobs", lambda: sqs.get_queue_attributes(
            QueueUrl=n["queue_url"], AttributeNames=["ApproximateNumberOfMessages"])),
        ("dynamodb:PutItem orders (conditional)", lambda: dynamodb.put_item(
            TableName=n["orders"], Item={"id": {"S": n["order_id"]}, "quantity": {"N": "3"},
                                         "total_cents": {"N": "850"}},
            ConditionExpression="attribute_not_exists(id)", ReturnValuesOnConditionCheckFailure="ALL_OLD")),
        ("logs:CreateLogStream own group", lambda: logs.create_log_stream(
            logGroupName=n["log_group"], logStreamName="least-privilege-probe")),
        ("logs:PutLogEvents own group", lambda: logs.put_log_events(
            logGroupName=n["log_group"], logStreamName="least-privilege-probe",
            logEvents=[{"timestamp": int(time.time() * 1000), "message": "PROBE written by the worker role"}])),
    ]:
        allowed.append(attempt(name, call)[0])
    return {"identity": identity, "allowed": allowed, "forbidden": forbidden}
'''


def probe_module() -> dict:
    namespace: dict = {}
    exec(compile(PROBE, "least_privilege_probe.py", "exec"), namespace)  # noqa: S102 - our own probe, above
    return namespace


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    with shared_aws.stack({**FAST_TIMEOUTS, "prefix": PREFIX}, tmp_path_factory.mktemp(PREFIX)) as session:
        yield session, session.outputs()


def held_receipt_handle(session: LocalSession, queue_url: str, body: str) -> str:
    """Send a message and receive it with the admin client: a valid handle for 5 minutes."""
    sqs = session.client("sqs")
    message_id = sqs.send_message(QueueUrl=queue_url, MessageBody=body)["MessageId"]

    def received() -> str | None:
        for message in sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, VisibilityTimeout=300, WaitTimeSeconds=1
        ).get("Messages", []):
            if message["MessageId"] == message_id:
                handle: str = message["ReceiptHandle"]
                return handle
        return None

    found = wait_for(received, timeout=30, what=f"message {message_id} on {queue_url}")
    assert found is not None  # wait_for returns only a truthy answer
    return found


def test_worker_role_can_do_its_job_and_nothing_else(stack, figure):
    """With the worker role's own credentials: receive, delete (single and batch) and read
    attributes on the jobs queue, the conditional PutItem on orders and log writes to its own
    group succeed; every other call tried (reads, updates, deletes and batch or transactional
    writes on orders, anything on the reference table, sends to any queue, anything on the DLQ,
    table and queue deletion, other or look-alike log groups, iam, sts, lambda) is denied.
    Replayed with admin credentials, every forbidden call that does no harm succeeds."""
    session, outputs = stack
    lambda_api, sqs, logs, iam = (session.client(s) for s in ("lambda", "sqs", "logs", "iam"))
    worker = lambda_api.get_function_configuration(FunctionName=WORKER)
    role_arn = worker["Role"]
    queue_url = session.local_queue_url(outputs["QueueUrl"])
    dlq_url = session.local_queue_url(outputs["DeadLetterQueueUrl"])

    # The worker's own poller must not take the messages the probe receives.
    (mapping,) = observe.mappings(lambda_api, WORKER)
    lambda_api.update_event_source_mapping(UUID=mapping["uuid"], Enabled=False)
    wait_for(
        lambda: observe.mappings(lambda_api, WORKER)[0]["state"] == "Disabled",
        timeout=10,
        what="the worker's mapping to be disabled",
    )

    other_log_group = f"/aws/lambda/{outputs['SeederFunctionName']}"
    logs.create_log_stream(logGroupName=other_log_group, logStreamName="existing")
    logs.create_log_group(logGroupName=SHADOW_LOG_GROUP)
    admin_arn = iam.get_user(UserName="local-admin")["User"]["Arn"]
    admin_only_role = iam.create_role(
        RoleName=ADMIN_ONLY_ROLE,
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Principal": {"AWS": admin_arn}, "Action": "sts:AssumeRole"}
                ],
            }
        ),
    )["Role"]["Arn"]
    message_ids = [
        sqs.send_message(QueueUrl=queue_url, MessageBody=f"least-privilege probe {i}")["MessageId"]
        for i in (1, 2)
    ]
    names = {
        "orders": outputs["OrdersTableName"],
        "reference": outputs["ReferenceTableName"],
        "queue_url": queue_url,
        "dlq_url": dlq_url,
        "log_group": outputs["LogGroupName"],
        "other_log_group": other_log_group,
        "other_log_stream": "existing",
        "shadow_log_group": SHADOW_LOG_GROUP,
        "role_name": role_arn.rsplit("/", 1)[-1],
        "admin_user": "local-admin",
        "admin_only_role_arn": admin_only_role,
        "function": WORKER,
        "order_id": "least-privilege-order",
        "message_ids": message_ids,
        "dlq_receipt_handle": held_receipt_handle(session, dlq_url, "held by the test"),
    }

    lambda_api.create_function(
        FunctionName=PROBE_NAME,
        Runtime="python3.12",
        Role=role_arn,
        Handler="app.handler",
        Code={"ZipFile": function_zip(PROBE)},
        Timeout=30,
    )
    response = lambda_api.invoke(FunctionName=PROBE_NAME, Payload=json.dumps(names).encode())
    payload = json.loads(response["Payload"].read())
    assert "FunctionError" not in response, payload

    assert payload["identity"].startswith(f"arn:aws:sts::{ACCOUNT}:assumed-role/{names['role_name']}/")
    allowed, forbidden = payload["allowed"], payload["forbidden"]
    unexpected = [r for r in allowed + forbidden if r["outcome"] == "error"]
    assert unexpected == [], "calls failed for a reason other than IAM"
    succeeded = [r["name"] for r in allowed if r["outcome"] == "succeeded"]
    denied = [r["name"] for r in forbidden if r["outcome"] == "denied"]
    figure(
        "least privilege",
        f"{len(forbidden)} forbidden calls tried, {len(denied)} denied; "
        f"{len(allowed)} allowed calls, {len(succeeded)} succeeded",
    )
    assert [r["name"] for r in forbidden if r["outcome"] != "denied"] == []
    assert [r["name"] for r in allowed if r["outcome"] != "succeeded"] == []
    assert len(forbidden) >= 40 and len(allowed) == 7

    # The allowed calls had their effect, the forbidden ones none.
    dynamodb = session.client("dynamodb")
    assert observe.scan_items(dynamodb, names["orders"]) == [
        {"id": "least-privilege-order", "quantity": 3, "total_cents": 850}
    ]
    assert observe.scan_items(dynamodb, names["reference"]) == [{"id": "reference", "note": "keep unchanged"}]
    assert observe.queue_counters(sqs, queue_url) == {"visible": 0, "in_flight": 0, "delayed": 0}
    assert observe.queue_counters(sqs, dlq_url)["in_flight"] == 1  # the test's own held message
    written = [
        e["message"]
        for e in observe.log_events(logs, names["log_group"])
        if e["logStreamName"] == "least-privilege-probe"
    ]
    assert written == ["PROBE written by the worker role"]

    # Each replayable forbidden call, made with admin credentials, goes through.
    replay_names = {
        **names,
        "jobs_receipt_handle": held_receipt_handle(session, queue_url, "replay"),
        "dlq_receipt_handle": held_receipt_handle(session, dlq_url, "replay"),
    }
    probe = probe_module()
    calls = [call for call in probe["forbidden_calls"](replay_names) if call[4]]
    replayed = probe["run_calls"](calls, session.client)
    replay_failed = [(r["name"], r.get("message")) for r in replayed if r["outcome"] != "succeeded"]
    figure(
        "least privilege (admin replay)",
        f"{len(replayed)} forbidden calls replayed as admin, {len(replayed) - len(replay_failed)} succeeded",
    )
    assert replay_failed == []
