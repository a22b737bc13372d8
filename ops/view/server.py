"""The live view's HTTP server: one static page that polls a JSON snapshot.

Standard library only (ThreadingHTTPServer). Routes:
  GET  /                the page (static/index.html, app.js, style.css)
  GET  /api/snapshot    `ops.snapshot.take_snapshot` as JSON; AWS problems are in its error fields
  GET  /api/dlq         a peek at the dead-letter queue's messages (a receive with visibility 0)
  POST /api/redrive     {"message_id": ...}: move that one message back to the jobs queue
  GET  /healthz         "ok"
Every AWS call happens inside a request and every error becomes JSON, so a bad or unreachable
endpoint shows on the page and never stops the server.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from dataclasses import dataclass
from decimal import Decimal
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

from ops import observe
from ops.aws import Clients, Endpoint, error_line
from ops.redrive import RedriveError, redrive_message
from ops.snapshot import DEFAULT_SINCE_MINUTES, TargetError, resolve_target, take_snapshot
from stacks.config import DEFAULT_PREFIX

STATIC = Path(__file__).resolve().parent / "static"
PAGES = {"/": ("index.html", "text/html"), "/index.html": ("index.html", "text/html"),
         "/app.js": ("app.js", "text/javascript"), "/style.css": ("style.css", "text/css")}
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
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


class View:
    """What the pages ask for, against one AWS endpoint and one deployed consumer."""

    def __init__(self, clients: Clients, prefix: str = DEFAULT_PREFIX, stack: str | None = None,
                 since_minutes: float = DEFAULT_SINCE_MINUTES, poll_ms: int = DEFAULT_POLL_MS,
                 cache_seconds: float = 0.5) -> None:
        self.clients, self.prefix, self.stack = clients, prefix, stack
        self.since_minutes, self.poll_ms, self.cache_seconds = since_minutes, poll_ms, cache_seconds
        self._lock = threading.Lock()
        self._cached: tuple[float, dict[str, Any]] | None = None

    def snapshot(self) -> dict[str, Any]:
        # Several open tabs share one round of AWS reads.
        with self._lock:
            if self._cached and time.monotonic() - self._cached[0] < self.cache_seconds:
                return self._cached[1]
            snapshot = take_snapshot(self.clients, self.prefix, self.stack, self.since_minutes)
            snapshot["view"] = {"poll_ms": self.poll_ms, "prefix": self.prefix}
            self._cached = (time.monotonic(), snapshot)
            return snapshot

    def dlq(self) -> dict[str, Any]:
        try:
            target = resolve_target(self.clients, self.prefix, self.stack)
            messages = observe.peek_messages(self.clients.client("sqs"), target.dlq_url)
        except Exception as error:  # noqa: BLE001 - shown on the page
            return {"error": str(error) if isinstance(error, TargetError) else error_line(error), "messages": []}
        return {"error": None, "queue": target.dead_letter_queue, "messages": messages}

    def redrive(self, message_id: str) -> dict[str, Any]:
        try:
            target = resolve_target(self.clients, self.prefix, self.stack)
            moved = redrive_message(self.clients.client("sqs"), target.dlq_url, target.queue_url, message_id)
        except (RedriveError, TargetError) as error:
            return {"error": str(error)}
        except Exception as error:  # noqa: BLE001 - shown on the page
            return {"error": error_line(error)}
        with self._lock:
            self._cached = None
        log.info("redrove %s to %s as %s", message_id, target.jobs_queue, moved["new_message_id"])
        return {"error": None, "to": target.jobs_queue, **moved}


class ViewHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], view: View) -> None:
        super().__init__(address, ViewHandler)
        self.view = view

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{'localhost' if host in ('127.0.0.1', '0.0.0.0', '') else host}:{port}/"


class ViewHandler(BaseHTTPRequestHandler):
    server: ViewHTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("%s " + format, self.address_string(), *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, value: Any, status: int = HTTPStatus.OK) -> None:
        self._send(status, to_json(value), "application/json")

    def _local_caller(self) -> bool:
        """Refuse requests addressed to another host name (DNS rebinding) or sent from another
        site's page: only this page may call the API, and above all the redrive."""
        host = urlsplit(f"//{self.headers.get('Host', '')}").hostname or ""
        allowed = LOCAL_HOSTS | {self.server.server_address[0]}
        origin = self.headers.get("Origin")
        return host in allowed and (origin is None or urlsplit(origin).hostname in allowed)

    def _guarded(self, route: Any) -> None:
        try:
            route()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser went away mid-answer
        except Exception as error:  # noqa: BLE001 - a request may fail, the server may not
            log.exception("request %s failed", self.path)
            try:
                self._json({"error": f"view server error: {error_line(error)}"}, HTTPStatus.INTERNAL_SERVER_ERROR)
            except OSError:
                pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._guarded(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._guarded(self._post)

    def _get(self) -> None:
        path = urlsplit(self.path).path
        if path in PAGES:
            name, content_type = PAGES[path]
            self._send(HTTPStatus.OK, (STATIC / name).read_bytes(), content_type)
        elif path == "/healthz":
            self._send(HTTPStatus.OK, b"ok\n", "text/plain")
        elif not path.startswith("/api/"):
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")
        elif not self._local_caller():
            self._json({"error": "refused: the view answers only pages served from localhost"}, HTTPStatus.FORBIDDEN)
        elif path == "/api/snapshot":
            self._json(self.server.view.snapshot())
        elif path == "/api/dlq":
            self._json(self.server.view.dlq())
        else:
            self._json({"error": f"no such endpoint: {path}"}, HTTPStatus.NOT_FOUND)

    def _post(self) -> None:
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, MAX_BODY_BYTES)) if length else b""
        if path != "/api/redrive":
            self._json({"error": f"no such endpoint: {path}"}, HTTPStatus.NOT_FOUND)
            return
        # A JSON content type cannot be sent cross-site without a CORS preflight, which this
        # server never approves.
        if not self._local_caller() or not self.headers.get("Content-Type", "").startswith("application/json"):
            self._json({"error": "refused: redrive needs a JSON request from the view's own page"},
                       HTTPStatus.FORBIDDEN)
            return
        try:
            message_id = json.loads(body or b"{}").get("message_id")
        except (ValueError, AttributeError):
            message_id = None
        if not isinstance(message_id, str) or not message_id:
            self._json({"error": 'send {"message_id": "<id of a DLQ message>"}'}, HTTPStatus.BAD_REQUEST)
            return
        result = self.server.view.redrive(message_id)
        self._json(result, HTTPStatus.OK if result["error"] is None else HTTPStatus.CONFLICT)


def make_server(view: View, host: str = "127.0.0.1", port: int = 0) -> ViewHTTPServer:
    return ViewHTTPServer((host, port), view)


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


def start_in_thread(view: View, host: str = "127.0.0.1", port: int = 0) -> RunningView:
    server = make_server(view, host, port)
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
