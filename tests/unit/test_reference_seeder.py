"""The custom resource that seeds the reference item: it writes the item and always answers
CloudFormation, with SUCCESS or with FAILED and a one-line reason."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import boto3
import pytest

from tests.unit.conftest import create_table, mocked_aws


@pytest.fixture
def response_url():
    """A local stand-in for CloudFormation's pre-signed response URL; collects PUT bodies."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self):  # http.server API
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/response", received
    server.shutdown()


def event(url: str, request_type: str, item: str) -> dict:
    return {
        "RequestType": request_type,
        "ResponseURL": url,
        "StackId": "stack-1",
        "RequestId": "req-1",
        "LogicalResourceId": "ReferenceItem",
        "ResourceType": "Custom::SeededItem",
        "ResourceProperties": {"ServiceToken": "arn", "TableName": "reference", "Item": item},
    }


@pytest.fixture
def table(monkeypatch, seeder):
    with mocked_aws():
        client = boto3.client("dynamodb")
        create_table(client, "reference")
        monkeypatch.setattr(seeder, "_CLIENT", None)
        yield client


def test_create_writes_item_and_reports_success(seeder, table, response_url):
    """Create puts the item and answers SUCCESS with physical id `<table>/<id>`."""
    url, received = response_url
    seeder.handler(event(url, "Create", '{"id": "reference", "note": "keep unchanged"}'), None)
    stored = table.get_item(TableName="reference", Key={"id": {"S": "reference"}})["Item"]
    assert stored == {"id": {"S": "reference"}, "note": {"S": "keep unchanged"}}
    assert received[0]["Status"] == "SUCCESS"
    assert received[0]["PhysicalResourceId"] == "reference/reference"
    assert received[0]["RequestId"] == "req-1" and received[0]["StackId"] == "stack-1"


def test_bad_item_reports_failed_with_reason(seeder, table, response_url):
    """An item that is not a JSON object of strings fails the resource with a clear reason."""
    url, received = response_url
    seeder.handler(event(url, "Create", '["not", "an", "object"]'), None)
    assert received[0]["Status"] == "FAILED"
    assert "Item must be a JSON object of strings" in received[0]["Reason"]
    assert table.scan(TableName="reference")["Items"] == []


def test_delete_leaves_item_to_the_table_removal_policy(seeder, table, response_url):
    """Delete answers SUCCESS without touching the table."""
    url, received = response_url
    seeder.handler(event(url, "Create", '{"id": "reference", "note": "keep unchanged"}'), None)
    delete = dict(
        event(url, "Delete", '{"id": "reference", "note": "keep unchanged"}'),
        PhysicalResourceId="reference/reference",
    )
    seeder.handler(delete, None)
    assert [r["Status"] for r in received] == ["SUCCESS", "SUCCESS"]
    assert received[1]["PhysicalResourceId"] == "reference/reference"
    assert len(table.scan(TableName="reference")["Items"]) == 1
