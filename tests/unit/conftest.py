"""moto in-process for the handler tests: fake credentials, no endpoint, tables keyed on id."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from moto import mock_aws

FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


@contextmanager
def mocked_aws() -> Iterator[None]:
    """moto intercepts every boto3 call made inside; usable from fixtures of any scope."""
    with pytest.MonkeyPatch.context() as env:
        for key, value in FAKE_AWS_ENV.items():
            env.setenv(key, value)
        env.delenv("AWS_ENDPOINT_URL", raising=False)
        with mock_aws():
            yield


def create_table(client: Any, name: str) -> None:
    """An on-demand table with partition key id (S), like the stack's tables."""
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


ORDERS_TABLE = "orders"


@pytest.fixture
def client() -> Iterator[Any]:
    """A DynamoDB client on moto holding an empty orders table (ORDERS_TABLE): the worker's tests."""
    import boto3

    with mocked_aws():
        ddb = boto3.client("dynamodb")
        create_table(ddb, ORDERS_TABLE)
        yield ddb
