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
        # moto replaces boto3's default session at every start, so each test's first client of a
        # service would parse botocore's models again (about a tenth of a second each, hundreds of
        # times a run); the credentials and region above are the same for every test.
        with mock_aws(config={"core": {"reset_boto3_session": False}}):
            yield


class MotoClients:
    """ops' `clients.client(service)` over moto in-process, one client per service as
    ops.aws.Clients keeps them: creating a boto3 client costs more than the calls most tests make
    with it (test_dlq.py made 560, 44% of its time)."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}

    def client(self, service: str) -> Any:
        import boto3

        if service not in self._clients:
            self._clients[service] = boto3.client(service)  # type: ignore[call-overload]
        return self._clients[service]


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
