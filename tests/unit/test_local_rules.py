"""The local host's and emulator's pure rules: which messages the Lambda service deletes, the
event record it builds, and which IAM checks a DynamoDB or Logs request gets."""

from __future__ import annotations

import json

import pytest

from embedded_aws.services.iam.access_control import dynamodb_permissions, logs_resource_arn
from embedded_aws.lambda_host.event_source_mappings.records import acknowledged_ids, sqs_record

IDS = ["m1", "m2", "m3"]
ORDERS = "arn:aws:dynamodb:us-east-1:123456789012:table/orders"


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
        "MessageId": "m1", "ReceiptHandle": "rh", "Body": '{"id": "a", "quantity": 1}', "MD5OfBody": "x",
        "Attributes": {"ApproximateReceiveCount": "2", "SentTimestamp": "1", "SenderId": "s",
                       "ApproximateFirstReceiveTimestamp": "2", "Unrelated": "no"},
        "MessageAttributes": {"kind": {"StringValue": "order", "DataType": "String"}},
    }
    record = sqs_record(message, "arn:aws:sqs:us-east-1:123456789012:jobs", "us-east-1")
    assert record["eventSource"] == "aws:sqs" and record["eventSourceARN"].endswith(":jobs")
    assert record["attributes"] == {"ApproximateReceiveCount": "2", "SentTimestamp": "1", "SenderId": "s",
                                    "ApproximateFirstReceiveTimestamp": "2"}
    assert record["messageAttributes"]["kind"]["stringValue"] == "order"
    assert json.loads(record["body"]) == {"id": "a", "quantity": 1}


@pytest.mark.parametrize(
    "action,params,expected",
    [
        ("PutItem", {"TableName": "orders"}, [("PutItem", ORDERS)]),
        ("Query", {"TableName": "orders", "IndexName": "by-x"}, [("Query", f"{ORDERS}/index/by-x")]),
        ("BatchWriteItem", {"RequestItems": {"orders": [], "other": []}},
         [("BatchWriteItem", ORDERS), ("BatchWriteItem", ORDERS.replace("orders", "other"))]),
        ("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": "orders"}},
                                                  {"Update": {"TableName": "orders"}}]},
         [("PutItem", ORDERS), ("UpdateItem", ORDERS)]),
        ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "orders"}}]}, [("GetItem", ORDERS)]),
        ("ListTables", {}, [("ListTables", "*")]),
    ],
)
def test_dynamodb_requests_are_checked_per_table_and_per_operation(action, params, expected):
    """IAM sees the table (or index) ARN of each request, and a transaction's operations as
    their single-item actions, so policies scoped to one table mean what they say on AWS."""
    assert dynamodb_permissions(action, params, "us-east-1", "123456789012") == expected


@pytest.mark.parametrize(
    "params,expected",
    [
        ({"logGroupName": "/aws/lambda/w", "logStreamName": "s"},
         "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/w:log-stream:s"),
        ({"logGroupName": "/aws/lambda/w"}, "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/w:*"),
        ({"logGroupIdentifier": "arn:aws:logs:us-east-1:1:log-group:g"}, "arn:aws:logs:us-east-1:1:log-group:g:*"),
        ({"logGroupIdentifier": "arn:aws:logs:us-east-1:1:log-group:g:*"}, "arn:aws:logs:us-east-1:1:log-group:g:*"),
        ({}, "*"),
    ],
)
def test_logs_requests_name_their_group_or_stream(params, expected):
    """A Logs request is checked against its log stream ARN, or its log group's ARN with the
    trailing `:*` that CloudWatch Logs evaluates group actions against (so a policy on
    `log-group:name:*`, as CDK's grants write it, allows FilterLogEvents on that group)."""
    assert logs_resource_arn(params, "us-east-1", "123456789012") == expected


@pytest.mark.parametrize("error, gone", [
    (KeyError("queue"), True),
    (RuntimeError("An error occurred (QueueDoesNotExist): The specified queue does not exist"), True),
    (RuntimeError("ResourceNotFoundException: log group not found"), True),
    (RuntimeError("NoSuchEntity: role"), True),
    (RuntimeError("DependencyViolation: still in use"), False),
    (RuntimeError("InternalFailure"), False),
])
def test_a_delete_of_a_resource_already_gone_counts_as_deleted(error, gone):
    """CloudFormation treats a resource deleted out of band as deleted; nothing else is swallowed."""
    from embedded_aws.services.cloudformation.stack_delete import resource_already_gone

    assert resource_already_gone(error) is gone


def test_down_stops_everything_even_when_the_destroy_fails(tmp_path):
    """A failed destroy still stops the emulator, then says what failed and what was left."""
    from local.session import LocalError, LocalSession

    stopped = []

    class FailingDestroy(LocalSession):
        state = {"pid": 1, "port": 1}

        def destroy(self):
            raise LocalError("cdk destroy failed (1): queue busy")

        def leftovers(self):
            return {"queues": ["http://localhost:1/123456789012/p-jobs"], "tables": []}

        def stop_emulator(self, timeout=30):
            stopped.append(True)

    session = FailingDestroy(tmp_path)
    session.outputs_path.write_text("{}")
    with pytest.raises(LocalError) as raised:
        session.down()
    assert stopped == [True]
    assert str(raised.value) == ("destroy failed, everything stopped anyway: cdk destroy failed (1): queue busy; "
                                 "still there when the emulator stopped: queues: http://localhost:1/123456789012/p-jobs")


def test_queue_counters_follow_motos_rules_in_one_pass():
    """Visible: past its visibility timeout and not delayed; in flight and delayed apart."""
    from types import SimpleNamespace

    from embedded_aws.services.sqs.backend import queue_counters

    now = 1_000_000
    messages = [SimpleNamespace(visible_at=now - 1, delayed_until=0),        # visible
                SimpleNamespace(visible_at=now - 1, delayed_until=0),        # visible
                SimpleNamespace(visible_at=now + 5000, delayed_until=0),     # in flight
                SimpleNamespace(visible_at=now - 1, delayed_until=now + 60)]  # delayed
    assert queue_counters(messages, now) == {"ApproximateNumberOfMessages": 2,
                                             "ApproximateNumberOfMessagesNotVisible": 1,
                                             "ApproximateNumberOfMessagesDelayed": 1}
