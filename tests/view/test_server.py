"""The live view's HTTP server without a browser: routes, JSON errors, and who may call the API."""

from __future__ import annotations

import http.client
import json

import pytest

from local.session import free_port
from ops.aws import Clients, Endpoint
from ops.view.server import View, start_in_thread


@pytest.fixture
def unreachable_view():
    """A view of an endpoint where nothing listens."""
    running = start_in_thread(View(Clients(Endpoint(f"http://127.0.0.1:{free_port()}", "us-east-1", "a", "b"))))
    yield running
    running.stop()


def request(running, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    connection = http.client.HTTPConnection("127.0.0.1", running.server.server_address[1], timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        connection.close()


def test_page_and_assets_are_served(unreachable_view):
    status, content_type, body = request(unreachable_view, "GET", "/")
    assert status == 200 and content_type.startswith("text/html") and b"live view" in body
    assert request(unreachable_view, "GET", "/app.js")[0] == 200
    assert request(unreachable_view, "GET", "/style.css")[0] == 200
    assert request(unreachable_view, "GET", "/../server.py")[0] == 404


def test_aws_errors_are_json_and_the_server_stays_up(unreachable_view):
    """Every API answer carries the error line; the server keeps answering afterwards."""
    for _ in range(2):
        status, content_type, body = request(unreachable_view, "GET", "/api/snapshot")
        assert status == 200 and content_type.startswith("application/json")
        assert json.loads(body)["error"].startswith("cannot reach AWS at http://127.0.0.1:")
        status, _, body = request(unreachable_view, "GET", "/api/dlq")
        assert status == 200 and json.loads(body)["error"].startswith("cannot reach AWS")
    status, _, body = request(unreachable_view, "POST", "/api/redrive", json.dumps({"message_id": "m"}).encode(),
                              {"Content-Type": "application/json"})
    assert status == 409 and json.loads(body)["error"].startswith("cannot reach AWS")
    assert request(unreachable_view, "GET", "/healthz")[2] == b"ok\n"


def test_redrive_needs_a_json_request_from_the_page_itself(unreachable_view):
    """A form post from another site, or a request naming another host (DNS rebinding), is refused
    before any AWS call; a request without a message id is a 400."""
    form = request(unreachable_view, "POST", "/api/redrive", b"message_id=m",
                   {"Content-Type": "application/x-www-form-urlencoded"})
    other_site = request(unreachable_view, "POST", "/api/redrive", b'{"message_id": "m"}',
                         {"Content-Type": "application/json", "Origin": "https://evil.example"})
    rebound = request(unreachable_view, "GET", "/api/snapshot", headers={"Host": "evil.example"})
    assert [form[0], other_site[0], rebound[0]] == [403, 403, 403]
    missing = request(unreachable_view, "POST", "/api/redrive", b"{}", {"Content-Type": "application/json"})
    assert missing[0] == 400 and "message_id" in json.loads(missing[2])["error"]
