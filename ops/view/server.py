"""The live view's HTTP server: one static page that polls a JSON snapshot.

Standard library only (ThreadingHTTPServer). Routes:
  GET  /?token=T        the page (static/index.html with its token, app.js, style.css)
  GET  /api/snapshot    `ops.snapshot.take_snapshot` as JSON; AWS problems are in its error fields
  POST /api/dlq         every dead-letter message, classified (ops/dlq/)
  POST /api/dlq/redrive {"classes": [...]}: send the pending and stored messages back
  POST /api/dlq/discard {"message_id", "reason"}: remove one conflict or malformed message, audited
  GET  /healthz         "ok"
Every route but /healthz needs the per-run token (header X-View-Token, or ?token= for the page
and its assets); beyond loopback, /healthz too. See docs/security.md.
Every AWS call happens inside a request and every error becomes JSON, so a bad or unreachable
endpoint shows on the page and never stops the server.
"""

from __future__ import annotations

import base64
import hmac
import json
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ops import cleanup_check, dlq
from ops.aws import Clients, Endpoint, error_line
from ops.dlq import DlqError
from ops.guard import LOOPBACK_NAMES, refusal
from ops.history import History
from ops.snapshot import DEFAULT_SINCE_MINUTES, Snapshot, TargetError, resolve_target, take_snapshot
from stacks.config import DEFAULT_PREFIX

STATIC = Path(__file__).resolve().parent / "static"
ASSET_TYPES = {"app.js": "text/javascript", "style.css": "text/css"}
DEFAULT_POLL_MS = 2000
MAX_BODY_BYTES = 4096

log = logging.getLogger("ops.view")


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    return str(value)


def to_json(value: Any) -> bytes:
    return json.dumps(value, default=_json_default, sort_keys=True).encode()


class ViewSnapshot(Snapshot):
    """A snapshot as the page gets it: with the lab's clean-up check and the view's settings."""

    cleanup: list[dict[str, Any]]
    cleanup_started: bool
    view: dict[str, Any]


class View:
    """What the pages ask for, against one AWS endpoint and one deployed consumer."""

    def __init__(
        self,
        clients: Clients,
        prefix: str = DEFAULT_PREFIX,
        stack: str | None = None,
        since_minutes: float = DEFAULT_SINCE_MINUTES,
        poll_ms: int = DEFAULT_POLL_MS,
        cache_seconds: float = 0.5,
        history: History | None = None,
    ) -> None:
        self.clients, self.prefix, self.stack = clients, prefix, stack
        self.history = history if history is not None else History()
        self.since_minutes, self.poll_ms, self.cache_seconds = since_minutes, poll_ms, cache_seconds
        self._lock = threading.Lock()
        self._cached: tuple[float, ViewSnapshot] | None = None

    def snapshot(self) -> ViewSnapshot:
        # Several open tabs share one round of AWS reads.
        with self._lock:
            if self._cached and time.monotonic() - self._cached[0] < self.cache_seconds:
                return self._cached[1]
            taken = take_snapshot(self.clients, self.prefix, self.stack, self.since_minutes, self.history)
            snapshot = ViewSnapshot(
                **taken,
                cleanup=[check.as_json() for check in cleanup_check.checks(taken)],
                cleanup_started=cleanup_check.started(taken),
                view={"poll_ms": self.poll_ms, "prefix": self.prefix},
            )
            self._cached = (time.monotonic(), snapshot)
            return snapshot

    def _dlq_action(self, action: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        """Run one DLQ operation (ops/dlq/); any failure becomes the answer's `error`."""
        try:
            target = resolve_target(self.clients, self.prefix, self.stack)
            result = action(target)
        except (DlqError, TargetError) as error:
            return {"error": str(error)}
        except Exception as error:  # noqa: BLE001 - shown on the page
            return {"error": error_line(error)}
        return {"error": None, "queue": target.dead_letter_queue, "jobs_queue": target.jobs_queue, **result}

    def dlq(self) -> dict[str, Any]:
        """Every DLQ message, classified (a receive: each look adds one to the receive counts)."""
        return self._dlq_action(lambda target: dlq.listing(self.clients, target.queues()))

    def redrive(self, classes: list[str] | None = None) -> dict[str, Any]:
        """Send the safe messages (pending and stored) back; never a conflict or a malformed body."""
        result = self._dlq_action(
            lambda target: dlq.redrive(self.clients, target.queues(), classes or dlq.SAFE_CLASSES)
        )
        self._forget_snapshot()
        if result["error"] is None:
            log.info(
                "redrive from %s: %s", result["queue"], {k: v["moved"] for k, v in result["counts"].items()}
            )
        return result

    def discard(self, message_id: str, reason: str) -> dict[str, Any]:
        result = self._dlq_action(
            lambda target: {"discarded": dlq.discard(self.clients, target.queues(), message_id, reason)}
        )
        self._forget_snapshot()
        if result["error"] is None:
            log.info("discarded %s from %s: %s", message_id, result["queue"], reason)
        return result

    def _forget_snapshot(self) -> None:
        with self._lock:
            self._cached = None


def is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "::1", "localhost")


def _host_names(bound: str) -> frozenset[str]:
    """The names a client may address this server by: loopback names, and when it listens
    beyond loopback, the address it was given and this machine's own names and addresses."""
    names = set(LOOPBACK_NAMES)
    if not is_loopback(bound):
        if bound not in ("", "0.0.0.0", "::"):  # noqa: S104  names the wildcard address, binds nothing
            names.add(bound.lower())
        for name in {socket.gethostname(), socket.getfqdn()}:
            names.add(name.lower())
            try:
                names.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
            except OSError:
                pass
    return frozenset(names)


class ViewHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], view: View, token: str | None = None) -> None:
        super().__init__(address, ViewHandler)
        self.view = view
        # The per-run secret: every API call carries it, and so does the URL a user opens.
        self.token = token or secrets.token_urlsafe(32)
        self.loopback = is_loopback(address[0])
        self.host_names = _host_names(address[0])

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def base_url(self) -> str:
        host = self.server_address[0]
        if isinstance(host, bytes):
            host = host.decode()
        return (
            f"http://{'localhost' if self.loopback or host in ('0.0.0.0', '::', '') else host}:{self.port}/"  # noqa: S104  names the wildcard address, binds nothing
        )

    @property
    def url(self) -> str:
        """What a user opens: the page with its token."""
        return f"{self.base_url}?token={self.token}"


class Refused(Exception):
    """A request answered with an error status before anything was done for it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Route:
    method: str
    action: str
    token: bool = True  # on a loopback address; beyond loopback every request needs it


ROUTES = {
    "/": Route("GET", "page"),
    "/index.html": Route("GET", "page"),
    "/app.js": Route("GET", "asset"),
    "/style.css": Route("GET", "asset"),
    "/healthz": Route("GET", "healthz", token=False),
    "/api/snapshot": Route("GET", "snapshot"),
    # Reading the DLQ receives its messages (each read adds to their receive count) and returns
    # their bodies: a side effect and message data, so a POST like the redrive.
    "/api/dlq": Route("POST", "dlq"),
    "/api/dlq/redrive": Route("POST", "redrive"),
    "/api/dlq/discard": Route("POST", "discard"),
}
SECURITY_HEADERS = (
    ("Cache-Control", "no-store"),
    ("Referrer-Policy", "no-referrer"),  # the page's URL carries the token
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),  # no framing: the redrive button cannot be clicked through another page
    (
        "Content-Security-Policy",
        (
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
            "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
    ),
)


class ViewHandler(BaseHTTPRequestHandler):
    """Every request is checked in this order before its body is read: route, method, Host,
    Origin and Sec-Fetch-Site, token, then the body's framing (a JSON POST with an exact
    Content-Length within the limit, or no body at all). A refusal closes the connection, so
    nothing after it on the same connection is read as another request."""

    server: ViewHTTPServer
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds a connection may sit idle or trickle its body; then it is dropped

    def log_message(self, format: str, *args: Any) -> None:  # the base class's name
        log.debug("%s " + format, self.address_string(), *args)

    def _send(self, status: int, body: bytes, content_type: str, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS:
            self.send_header(name, value)
        if close:
            self.send_header("Connection", "close")  # also sets close_connection
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, value: Any, status: int = HTTPStatus.OK) -> None:
        self._send(status, to_json(value), "application/json")

    # --- checks ---------------------------------------------------------------------------

    def _route(self) -> Route:
        path = urlsplit(self.path).path
        route = ROUTES.get(path)
        if route is None:
            raise Refused(HTTPStatus.NOT_FOUND, f"no such page: {path}")
        if self.command != route.method:
            raise Refused(HTTPStatus.METHOD_NOT_ALLOWED, f"{path} takes {route.method}, not {self.command}")
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1:
            raise Refused(HTTPStatus.BAD_REQUEST, "a request needs exactly one Host header")
        refused = refusal(
            hosts[0],
            self.headers.get("Origin"),
            self.headers.get("Sec-Fetch-Site"),
            self.server.port,
            self.server.host_names,
        )
        if refused:
            raise Refused(*refused)
        if route.token or not self.server.loopback:
            self._check_token()
        return route

    def _check_token(self) -> None:
        sent = self.headers.get("X-View-Token") or parse_qs(urlsplit(self.path).query).get("token", [""])[0]
        if not hmac.compare_digest(sent.encode(), self.server.token.encode()):
            raise Refused(
                HTTPStatus.FORBIDDEN,
                "refused: this needs the view's token; open the URL that "
                "`make up` or `make view` printed (it carries the token)",
            )

    def _body(self) -> bytes:
        """The request body, read only after every other check passed and only by exact length."""
        lengths = self.headers.get_all("Content-Length") or []
        if self.headers.get("Transfer-Encoding") is not None:
            raise Refused(HTTPStatus.LENGTH_REQUIRED, "refused: send a Content-Length, not Transfer-Encoding")
        if self.command != "POST":
            if lengths and lengths != ["0"]:
                raise Refused(HTTPStatus.BAD_REQUEST, f"refused: a {self.command} request carries no body")
            return b""
        media_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if media_type != "application/json":
            raise Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "refused: send Content-Type: application/json")
        if not lengths:
            raise Refused(HTTPStatus.LENGTH_REQUIRED, "refused: a POST needs a Content-Length")
        if len(lengths) > 1 or not lengths[0].isdigit() or not lengths[0].isascii():
            raise Refused(
                HTTPStatus.BAD_REQUEST, f"refused: Content-Length {', '.join(lengths)!r} is not a length"
            )
        length = int(lengths[0])
        if length > MAX_BODY_BYTES:
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"refused: a body over {MAX_BODY_BYTES} bytes")
        body = self.rfile.read(length)
        if len(body) != length:
            raise Refused(HTTPStatus.BAD_REQUEST, "refused: the body ended before its Content-Length")
        return body

    # --- dispatch ---------------------------------------------------------------------------

    def _dispatch(self) -> None:
        try:
            route = self._route()
            body = self._body()
            getattr(self, f"_do_{route.action}")(body)
        except Refused as refused:
            self._send(refused.status, to_json({"error": str(refused)}), "application/json", close=True)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser went away mid-answer
        except Exception as error:  # a request may fail, the server may not
            log.exception("request %s failed", urlsplit(self.path).path)
            try:
                self._send(
                    HTTPStatus.INTERNAL_SERVER_ERROR,
                    to_json({"error": f"view server error: {error_line(error)}"}),
                    "application/json",
                    close=True,
                )
            except OSError:
                pass

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch

    def _do_page(self, _: bytes) -> None:
        page = (STATIC / "index.html").read_text().replace("__VIEW_TOKEN__", self.server.token)
        self._send(HTTPStatus.OK, page.encode(), "text/html")

    def _do_asset(self, _: bytes) -> None:
        name = urlsplit(self.path).path.lstrip("/")
        self._send(HTTPStatus.OK, (STATIC / name).read_bytes(), ASSET_TYPES[name])

    def _do_healthz(self, _: bytes) -> None:
        self._send(HTTPStatus.OK, b"ok\n", "text/plain")

    def _do_snapshot(self, _: bytes) -> None:
        self._json(self.server.view.snapshot())

    def _do_dlq(self, body: bytes) -> None:
        self._request_object(body)
        self._json(self.server.view.dlq())

    def _do_redrive(self, body: bytes) -> None:
        classes = self._request_object(body).get("classes")
        if classes is not None and (
            not isinstance(classes, list) or not all(isinstance(c, str) for c in classes)
        ):
            raise Refused(HTTPStatus.BAD_REQUEST, 'send {"classes": ["pending", "stored"]} or {}')
        result = self.server.view.redrive(classes)
        self._json(result, HTTPStatus.OK if result["error"] is None else HTTPStatus.CONFLICT)

    def _do_discard(self, body: bytes) -> None:
        request = self._request_object(body)
        message_id, reason = request.get("message_id"), request.get("reason")
        if not isinstance(message_id, str) or not message_id or not isinstance(reason, str):
            raise Refused(
                HTTPStatus.BAD_REQUEST, 'send {"message_id": "<id of a DLQ message>", "reason": "<why>"}'
            )
        result = self.server.view.discard(message_id, reason)
        self._json(result, HTTPStatus.OK if result["error"] is None else HTTPStatus.CONFLICT)

    @staticmethod
    def _request_object(body: bytes) -> dict[str, Any]:
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = None
        if not isinstance(request, dict):
            raise Refused(HTTPStatus.BAD_REQUEST, "send a JSON object")
        return request


def make_server(
    view: View, host: str = "127.0.0.1", port: int = 0, token: str | None = None
) -> ViewHTTPServer:
    server = ViewHTTPServer((host, port), view, token)
    if not server.loopback:
        log.warning(
            "live view listens on %s:%s, beyond this machine: the token is required for every request",
            host,
            server.port,
        )
    return server


@dataclass
class RunningView:
    """A view served from a background thread."""

    server: ViewHTTPServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def start_in_thread(
    view: View, host: str = "127.0.0.1", port: int = 0, token: str | None = None
) -> RunningView:
    server = make_server(view, host, port, token)
    thread = threading.Thread(target=server.serve_forever, name="ops-view", daemon=True)
    thread.start()
    return RunningView(server, thread)


def start_for_env(env: Mapping[str, str], port: int = 0, **view_options: Any) -> RunningView | None:
    """A view of the stack at the endpoint and keys in `env` (AWS_* names), in a thread; for the
    local emulator process. None if it cannot start: the view is never worth failing a run for."""
    try:
        return start_in_thread(View(Clients(Endpoint.from_env(env)), **view_options), port=port)
    except OSError as error:
        log.warning("live view not started: %s", error)
        return None
