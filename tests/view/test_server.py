"""The live view's HTTP server without a browser: its routes, and every way a web page in the
user's browser (or another client on the machine) could try to read or change something through
it. Each attack is refused before the view does anything, and the connection is closed after it."""

from __future__ import annotations

import http.client
import json
import logging
import socket
from typing import cast

import pytest

from local.session import free_port
from ops.aws import Clients, Endpoint
from ops.view.server import MAX_BODY_BYTES, View, start_in_thread

TOKEN = "t0ken-for-tests"


class RecordingView:
    """Stands in for the AWS side: records what the server asked of it."""

    poll_ms = 2000

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def snapshot(self) -> dict:
        self.calls.append(("snapshot",))
        return {"error": None, "orders": [{"id": "secret-order"}]}

    def dlq(self) -> dict:
        self.calls.append(("dlq",))
        return {"error": None, "messages": [{"message_id": "m-1", "body": "secret-body"}]}

    def redrive(self, classes: list[str] | None = None) -> dict:
        self.calls.append(("redrive", classes))
        return {"error": None, "counts": {}}

    def discard(self, message_id: str, reason: str) -> dict:
        self.calls.append(("discard", message_id, reason))
        return {"error": None, "discarded": {"message_id": message_id}}


@pytest.fixture(scope="module")
def server():
    view = RecordingView()
    running = start_in_thread(cast(View, view), token=TOKEN)  # a stand-in with View's methods
    yield running, view
    running.stop()


@pytest.fixture
def served(server):
    """The module's server, with a fresh record of calls."""
    server[1].calls.clear()
    return server


@pytest.fixture
def unreachable_view():
    """A real view of an endpoint where nothing listens."""
    running = start_in_thread(
        View(Clients(Endpoint(f"http://127.0.0.1:{free_port()}", "us-east-1", "a", "b"))), token=TOKEN
    )
    yield running
    running.stop()


def request(
    running,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict | None = None,
    token: bool = True,
):
    """One request; returns (status, headers, body). `token` adds the view's token header."""
    port = running.server.port
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": f"localhost:{port}", **({"X-View-Token": TOKEN} if token else {}), **(headers or {})}
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def raw(running, data: bytes) -> bytes:
    """Send raw bytes and read until the server closes the connection. A server that keeps the
    connection open fails the test (a read timeout), rather than hanging it."""
    with socket.create_connection(("127.0.0.1", running.server.port), timeout=5) as connection:
        connection.sendall(data)
        received = b""
        while True:
            try:
                chunk = connection.recv(65536)
            except TimeoutError:
                pytest.fail(f"the server left the connection open after: {received[:200]!r}")
            if not chunk:
                return received
            received += chunk


def statuses(answer: bytes) -> list[int]:
    return [int(line.split()[1]) for line in answer.split(b"\r\n") if line.startswith(b"HTTP/1.")]


def json_post(running, path: str, body: object, headers: dict | None = None, token: bool = True):
    return request(
        running,
        "POST",
        path,
        json.dumps(body).encode(),
        {"Content-Type": "application/json", **(headers or {})},
        token=token,
    )


# --- the positive path -------------------------------------------------------------------------


def test_the_page_carries_its_token_and_the_api_works_with_it(served):
    """The URL a user opens has the token; the page it returns carries it (for its assets and
    API calls); with it, the snapshot, the DLQ read and the redrive reach the view."""
    running, view = served
    assert running.url == f"http://localhost:{running.server.port}/?token={TOKEN}"
    status, headers, page = request(running, "GET", f"/?token={TOKEN}", token=False)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert f'<meta name="view-token" content="{TOKEN}">'.encode() in page
    assert f'src="/app.js?token={TOKEN}"'.encode() in page
    assert request(running, "GET", f"/app.js?token={TOKEN}", token=False)[0] == 200
    assert request(running, "GET", f"/style.css?token={TOKEN}", token=False)[0] == 200
    assert json.loads(request(running, "GET", "/api/snapshot")[2])["orders"] == [{"id": "secret-order"}]
    assert json.loads(json_post(running, "/api/dlq", {})[2])["messages"][0]["body"] == "secret-body"
    assert json.loads(json_post(running, "/api/dlq/redrive", {"classes": ["pending"]})[2])["error"] is None
    assert json.loads(json_post(running, "/api/dlq/discard", {"message_id": "m-1", "reason": "checked"})[2])[
        "discarded"
    ] == {"message_id": "m-1"}
    assert json_post(running, "/api/dlq/discard", {"message_id": "m-1"})[0] == 400
    assert json_post(running, "/api/dlq/redrive", {"classes": "pending"})[0] == 400
    assert view.calls == [("snapshot",), ("dlq",), ("redrive", ["pending"]), ("discard", "m-1", "checked")]


def test_the_page_cannot_be_framed_or_leak_its_url(served):
    """Clickjacking the redrive button needs a frame; the token in the URL must not leave in a
    Referer; the page may only load its own scripts."""
    running, _ = served
    _, headers, _ = request(running, "GET", f"/?token={TOKEN}", token=False)
    assert headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"] == "no-referrer"


def test_aws_errors_are_json_and_the_server_stays_up(unreachable_view):
    """Every API answer carries the error line; the server keeps answering afterwards."""
    for _ in range(2):
        status, headers, body = request(unreachable_view, "GET", "/api/snapshot")
        assert status == 200 and headers["Content-Type"].startswith("application/json")
        assert json.loads(body)["error"].startswith("cannot reach AWS at http://127.0.0.1:")
        status, _, body = json_post(unreachable_view, "/api/dlq", {})
        assert status == 200 and json.loads(body)["error"].startswith("cannot reach AWS")
    status, _, body = json_post(unreachable_view, "/api/dlq/redrive", {})
    assert status == 409 and json.loads(body)["error"].startswith("cannot reach AWS")
    assert request(unreachable_view, "GET", "/healthz", token=False)[2] == b"ok\n"


# --- attacks: each refused, nothing done -------------------------------------------------------


def test_without_the_token_nothing_is_served_but_health(served):
    """No token or a wrong one: the page, the snapshot, the DLQ and the redrive are refused."""
    running, view = served
    assert request(running, "GET", "/", token=False)[0] == 403
    assert request(running, "GET", "/?token=guess", token=False)[0] == 403
    assert request(running, "GET", "/api/snapshot", token=False)[0] == 403
    assert request(running, "GET", "/api/snapshot", headers={"X-View-Token": "guess"}, token=False)[0] == 403
    assert json_post(running, "/api/dlq", {}, token=False)[0] == 403
    status, _, body = json_post(running, "/api/dlq/redrive", {"message_id": "m-1"}, token=False)
    assert status == 403 and "token" in json.loads(body)["error"]
    assert request(running, "GET", "/healthz", token=False)[0] == 200
    assert view.calls == []


def test_a_cross_origin_read_is_refused(served):
    """A page of another site (or another port of localhost) reading the snapshot: refused,
    with no CORS header that would let its script read the answer."""
    running, view = served
    port = running.server.port
    for origin in (
        "https://evil.example",
        f"http://localhost:{port + 1}",
        f"https://localhost:{port}",
        "null",
    ):
        status, headers, _ = request(running, "GET", "/api/snapshot", headers={"Origin": origin})
        assert status == 403, origin
        assert not any(name.lower().startswith("access-control-") for name in headers)
    preflight = request(
        running,
        "OPTIONS",
        "/api/dlq/redrive",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight[0] == 405 and not any(
        name.lower().startswith("access-control-") for name in preflight[1]
    )
    for site in ("cross-site", "same-site"):
        assert request(running, "GET", "/api/snapshot", headers={"Sec-Fetch-Site": site})[0] == 403
    assert request(running, "GET", "/api/snapshot", headers={"Origin": f"http://localhost:{port}"})[0] == 200
    assert view.calls == [("snapshot",)]


def test_a_rebound_host_name_is_refused(served):
    """DNS rebinding: the browser sends the attacker's name (or the wrong port) as Host."""
    running, view = served
    port = running.server.port
    for host in (
        "evil.example",
        f"evil.example:{port}",
        f"localhost:{port + 1}",
        f"localhost.evil.example:{port}",
    ):
        assert request(running, "GET", "/api/snapshot", headers={"Host": host})[0] == 421, host
        assert (
            json_post(running, "/api/dlq/redrive", {"message_id": "m-1"}, headers={"Host": host})[0] == 421
        ), host
    assert view.calls == []


def test_reads_with_side_effects_are_post_only(served):
    """Reading the DLQ bumps each message's receive count: an <img> or link (a GET) cannot do it,
    nor the redrive; a form post (not JSON) cannot either."""
    running, view = served
    assert request(running, "GET", "/api/dlq", token=False)[0] == 405
    assert request(running, "GET", "/api/dlq")[0] == 405
    assert request(running, "GET", "/api/dlq/redrive")[0] == 405
    assert request(running, "GET", "/api/dlq/discard?message_id=m-1&reason=x")[0] == 405
    for content_type in (
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ):
        answer = request(
            running, "POST", "/api/dlq/redrive", b'{"message_id": "m-1"}', {"Content-Type": content_type}
        )
        assert answer[0] == 415, content_type
    assert view.calls == []


def test_a_request_smuggled_in_a_refused_body_is_never_run(served):
    """A cross-site text/plain POST carrying a whole JSON redrive request in its body: the outer
    request is refused before its body is read and the connection is closed, so the inner one is
    never parsed, even when it carries the right Host, content type and token."""
    running, view = served
    port = running.server.port
    inner = json.dumps({"message_id": "m-1"}).encode()
    smuggled = (
        f"POST /api/dlq/redrive HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: application/json\r\n"
        f"X-View-Token: {TOKEN}\r\nContent-Length: {len(inner)}\r\n\r\n"
    ).encode() + inner
    for outer_headers in (
        f"Content-Type: text/plain\r\nOrigin: https://evil.example\r\nContent-Length: {len(smuggled)}",
        f"Content-Type: text/plain\r\nContent-Length: {len(smuggled)}",
        f"Content-Type: application/json\r\nContent-Length: {len(smuggled)}",  # no token
        "Content-Type: text/plain\r\nContent-Length: 5",  # declares less than it sends
    ):
        answer = raw(
            running,
            f"POST /api/dlq/redrive HTTP/1.1\r\nHost: localhost:{port}\r\n{outer_headers}\r\n\r\n".encode()
            + smuggled,
        )
        assert len(statuses(answer)) == 1 and statuses(answer)[0] in (403, 415), answer
    assert view.calls == []


@pytest.mark.parametrize(
    "length, status",
    [
        ("-1", 400),
        ("abc", 400),
        ("1e3", 400),
        ("+5", 400),
        ("5, 5", 400),
        (str(MAX_BODY_BYTES + 1), 413),
        ("99999999999", 413),
    ],
)
def test_a_bad_content_length_is_refused_at_once(served, length, status):
    """Negative, not a number, repeated or over the limit: refused without reading the body (the
    answer comes although none is sent) and the connection closed."""
    running, view = served
    port = running.server.port
    answer = raw(
        running,
        (
            f"POST /api/dlq/redrive HTTP/1.1\r\nHost: localhost:{port}\r\nX-View-Token: {TOKEN}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        ).encode(),
    )
    assert statuses(answer) == [status]
    assert view.calls == []


def test_a_missing_length_or_chunked_body_is_refused(served):
    running, view = served
    port = running.server.port
    head = f"POST /api/dlq/redrive HTTP/1.1\r\nHost: localhost:{port}\r\nX-View-Token: {TOKEN}\r\nContent-Type: application/json\r\n"
    assert statuses(raw(running, (head + "\r\n").encode())) == [411]
    chunked = head + 'Transfer-Encoding: chunked\r\n\r\n14\r\n{"message_id": "m-1"}\r\n0\r\n\r\n'
    assert statuses(raw(running, chunked.encode())) == [411]
    get_with_body = (
        f"GET /api/snapshot HTTP/1.1\r\nHost: localhost:{port}\r\nX-View-Token: {TOKEN}\r\n"
        f"Content-Length: 5\r\n\r\nhello"
    )
    assert statuses(raw(running, get_with_body.encode())) == [400]
    assert view.calls == []


def test_unknown_routes_and_paths_outside_the_page(served):
    running, view = served
    assert request(running, "GET", "/../server.py")[0] == 404
    assert request(running, "GET", "/api/nothing")[0] == 404
    assert request(running, "DELETE", "/api/snapshot")[0] == 405
    assert view.calls == []


def test_beyond_loopback_every_request_needs_the_token(caplog):
    """Listening on an address that is not a loopback name (127.0.0.2 stands in for a LAN
    address): even /healthz and the assets need the token, and a warning is logged."""
    view = RecordingView()
    with caplog.at_level(logging.WARNING, logger="ops.view"):
        running = start_in_thread(cast(View, view), host="127.0.0.2", token=TOKEN)
    try:
        assert "beyond this machine" in caplog.text
        port = running.server.port
        connection = http.client.HTTPConnection("127.0.0.2", port, timeout=30)

        def get(path: str) -> int:
            connection.request("GET", path, headers={"Host": f"127.0.0.2:{port}"})
            response = connection.getresponse()
            response.read()
            if response.getheader("Connection") == "close":
                connection.close()
            return response.status

        assert [get("/healthz"), get("/app.js"), get("/api/snapshot")] == [403, 403, 403]
        assert [get(f"/healthz?token={TOKEN}"), get(f"/app.js?token={TOKEN}")] == [200, 200]
        assert view.calls == []
    finally:
        running.stop()
