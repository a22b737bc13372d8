"""Generated malformed bodies: none is written, none acknowledged, each gets one clear line."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest
from hypothesis import HealthCheck, given, settings

from tests.strategies import ERROR_LINE, malformed_bodies
from tests.unit.conftest import create_table, mocked_aws

EXAMPLES = 1000


@pytest.fixture(scope="module")
def orders(worker):
    with mocked_aws():
        client = boto3.client("dynamodb")
        create_table(client, "orders")
        writes = []
        client.meta.events.register("before-call.dynamodb.PutItem", lambda **kwargs: writes.append(1))
        yield client, writes


def test_generated_malformed_bodies_are_rejected(worker, orders, capsys, figure):
    """1,000 generated malformed bodies (non-JSON, non-objects, missing/extra/duplicate keys,
    wrong types, bool/float/huge/negative quantities, empty/long/non-string ids, nested values,
    oversize bodies): 0 writes attempted, 0 acknowledged, every error one line naming the problem."""
    client, writes = orders
    seen = {"bodies": 0, "reported": 0, "one_line": 0}

    @settings(
        max_examples=EXAMPLES,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(body=malformed_bodies())
    def check(body):
        message_id = str(uuid.uuid4())
        capsys.readouterr()
        response = worker.handle_event(
            {"Records": [{"messageId": message_id, "body": body}]}, client, "orders"
        )
        assert response == {"batchItemFailures": [{"itemIdentifier": message_id}]}
        lines = capsys.readouterr().out.splitlines()
        assert [line.split(" ", 1)[0] for line in lines[:-1]] == ["ERROR"]
        assert json.loads(lines[-1])["Malformed"] == 1  # the batch's metrics line
        error = json.loads(lines[0][len("ERROR ") :])
        assert error["error"] == "JobError"
        assert ERROR_LINE.match(error["message"]), error["message"]
        seen["bodies"] += 1
        seen["reported"] += 1
        seen["one_line"] += 1

    check()
    assert seen["bodies"] >= EXAMPLES
    assert writes == []
    assert client.scan(TableName="orders")["Count"] == 0
    figure(
        "bad input (handler)",
        f"{seen['bodies']} malformed bodies: {len(writes)} writes, 0 acknowledged, "
        f"{seen['one_line']} one-line errors naming the problem",
    )
