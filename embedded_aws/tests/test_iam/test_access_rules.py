"""Which IAM checks a DynamoDB, Logs or Lambda request gets (moto checked '*')."""

from __future__ import annotations

import pytest

from embedded_aws.services.iam.access_control import (
    dynamodb_permissions,
    lambda_function_arn,
    logs_resource_arn,
)

ORDERS = "arn:aws:dynamodb:us-east-1:123456789012:table/orders"


@pytest.mark.parametrize(
    "action,params,expected",
    [
        ("PutItem", {"TableName": "orders"}, [("PutItem", ORDERS)]),
        ("Query", {"TableName": "orders", "IndexName": "by-x"}, [("Query", f"{ORDERS}/index/by-x")]),
        (
            "BatchWriteItem",
            {"RequestItems": {"orders": [], "other": []}},
            [("BatchWriteItem", ORDERS), ("BatchWriteItem", ORDERS.replace("orders", "other"))],
        ),
        (
            "TransactWriteItems",
            {"TransactItems": [{"Put": {"TableName": "orders"}}, {"Update": {"TableName": "orders"}}]},
            [("PutItem", ORDERS), ("UpdateItem", ORDERS)],
        ),
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
        (
            {"logGroupName": "/aws/lambda/w", "logStreamName": "s"},
            "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/w:log-stream:s",
        ),
        ({"logGroupName": "/aws/lambda/w"}, "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/w:*"),
        (
            {"logGroupIdentifier": "arn:aws:logs:us-east-1:1:log-group:g"},
            "arn:aws:logs:us-east-1:1:log-group:g:*",
        ),
        (
            {"logGroupIdentifier": "arn:aws:logs:us-east-1:1:log-group:g:*"},
            "arn:aws:logs:us-east-1:1:log-group:g:*",
        ),
        ({}, "*"),
    ],
)
def test_logs_requests_name_their_group_or_stream(params, expected):
    """A Logs request is checked against its log stream ARN, or its log group's ARN with the
    trailing `:*` that CloudWatch Logs evaluates group actions against (so a policy on
    `log-group:name:*`, as CDK's grants write it, allows FilterLogEvents on that group)."""
    assert logs_resource_arn(params, "us-east-1", "123456789012") == expected


WORKER = "arn:aws:lambda:us-east-1:123456789012:function:worker"


@pytest.mark.parametrize(
    "name,qualifier,expected",
    [
        ("worker", None, WORKER),
        ("worker", "7", f"{WORKER}:7"),
        (WORKER, None, WORKER),
        (f"{WORKER}:live", "ignored", f"{WORKER}:live"),
        ("123456789012:function:worker", None, WORKER),
        (None, None, "*"),
    ],
)
def test_lambda_requests_name_their_function(name, qualifier, expected):
    """A Lambda request is checked against the function its path names, a version or alias as a
    qualified ARN, so a policy on one function (as the operator's GetFunctionConfiguration is)
    allows that one; the list calls take `*`, as IAM documents them."""
    assert lambda_function_arn(name, qualifier, "us-east-1", "123456789012") == expected
