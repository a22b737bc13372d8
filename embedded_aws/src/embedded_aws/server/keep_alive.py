"""HTTP keep-alive for the embedded AWS's server (werkzeug closes every connection)."""

from __future__ import annotations

import functools
import selectors
import threading
from typing import IO, TYPE_CHECKING, Any, cast

from embedded_aws.compat.registry import T, Target, declare

if TYPE_CHECKING:
    from werkzeug.serving import WSGIRequestHandler as _HandlerBase
else:
    _HandlerBase = object

# Per connection thread: the current request's body stream and what was decided about it.
_state = threading.local()
HANDLER = "moto.moto_server.werkzeug_app:MotoRequestHandler"


def delimited_length(environ: dict[str, Any]) -> int | None:
    """The length a request's body is read up to (its Content-Length, 0 when it has none), or
    None when it cannot be delimited (chunked, or a Content-Length that is no length)."""
    if environ.get("wsgi.input_terminated"):  # chunked: werkzeug dechunks, no keep-alive
        return None
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    return None if length < 0 else length


def keeps_connection(closes: int, body_delimited: bool, client_closes: bool) -> bool:
    """Whether a response whose headers asked `closes` times for `Connection: close` keeps the
    connection open: only werkzeug's own one (added to every response) is dropped; a second one
    is the application's (e.g. the guard's refusals) and is honoured, as is a client that asked
    for close or a body that cannot be delimited."""
    return closes == 1 and body_delimited and not client_closes


class KeepAliveMixin(_HandlerBase):
    """The keep-alive half of `keep_alive_handler`'s class, over werkzeug's request handler."""

    def make_environ(self) -> dict[str, Any]:
        from werkzeug.wsgi import LimitedStream

        environ: dict[str, Any] = super().make_environ()
        _state.body = None
        length = delimited_length(environ)
        if length is None:
            return environ
        _state.body = LimitedStream(cast(IO[bytes], self.rfile), length)  # a buffered socket file
        environ["wsgi.input"] = _state.body
        environ["wsgi.input_terminated"] = True  # the limited stream ends at Content-Length
        return environ

    def send_header(self, keyword: str, value: str) -> None:
        if getattr(_state, "in_wsgi", False) and keyword.lower() == "connection" and value.lower() == "close":
            _state.closes += 1  # decided in end_headers: werkzeug's own comes last
            return
        super().send_header(keyword, value)

    def end_headers(self) -> None:
        if getattr(_state, "in_wsgi", False) and _state.closes:
            if keeps_connection(_state.closes, _state.body is not None, bool(self.close_connection)):
                _state.keep = True
            else:
                super().send_header("Connection", "close")
            _state.closes = 0
        super().end_headers()

    def run_wsgi(self) -> None:
        _state.keep, _state.body, _state.closes, _state.in_wsgi = False, None, 0, True
        try:
            super().run_wsgi()
        finally:
            keep, body = _state.keep, _state.body
            _state.keep, _state.body, _state.closes, _state.in_wsgi = False, None, 0, False
        if keep and body is not None:
            try:
                body.exhaust()  # the unread rest of this request's body, not the next request
            except Exception:  # noqa: BLE001 - a broken body ends the connection
                self.close_connection = True
        else:
            self.close_connection = True


@functools.cache
def keep_alive_handler() -> type:
    """moto's request handler, subclassed to keep HTTP/1.1 connections open between requests, as
    AWS endpoints do (werkzeug's `make_server` takes it as `request_handler`).

    werkzeug's development server answers every request with `Connection: close`, because
    http.server cannot tell where an unread request body ends; after the response it also
    waits up to 10 ms for leftover body bytes. So every SDK call paid a new TCP connection, a
    new server thread and that wait. Here each request body is read through a stream limited
    to its Content-Length, and whatever the application left unread is consumed before the
    next request is read, so the connection can stay open; a chunked request (no length) and a
    client that asks for `Connection: close` still get the old behaviour. A kept connection
    ends when its client closes it (its thread waits for the next request until then). The
    10 ms wait is werkzeug's module's own: `patch_keep_alive` below.
    """
    from moto.moto_server.werkzeug_app import MotoRequestHandler

    class KeepAliveRequestHandler(KeepAliveMixin, MotoRequestHandler):
        # werkzeug writes a response's headers and its body separately; on a kept-alive
        # connection Nagle's algorithm holds the body back until the client ACKs the headers,
        # which the client delays (about 40 ms on Linux). Small writes go out at once instead.
        disable_nagle_algorithm = True

    return KeepAliveRequestHandler


class _NoLeftovers:
    """A selector that finds no leftover body bytes (after a kept-alive response there are none)."""

    def register(self, *args: Any, **kwargs: Any) -> None:
        pass

    def select(self, timeout: float | None = None) -> list[Any]:
        return []

    def close(self) -> None:
        pass


class _Selectors:
    """werkzeug.serving's view of `selectors`."""

    def __getattr__(self, name: str) -> Any:
        return getattr(selectors, name)

    @staticmethod
    def DefaultSelector() -> Any:  # the name werkzeug calls
        return _NoLeftovers() if getattr(_state, "keep", False) else selectors.DefaultSelector()


@declare(
    "server.keep-alive",
    "HTTP/1.1 connections stay open between requests, as AWS endpoints keep them: no wait for "
    "leftover body bytes after a kept-alive response (the handler is keep_alive_handler)",
    # What keep_alive_handler overrides, checked but not replaced (it is a subclass).
    Target(f"{HANDLER}.make_environ", ("self",), replaced=False),
    Target(f"{HANDLER}.send_header", ("self", "keyword", "value"), replaced=False),
    Target(f"{HANDLER}.end_headers", ("self",), replaced=False),
    Target(f"{HANDLER}.run_wsgi", ("self",), replaced=False),
    Target(f"{HANDLER}.disable_nagle_algorithm", replaced=False),
    T("werkzeug.serving:selectors"),
)
def patch_keep_alive() -> None:
    """werkzeug.serving waits up to 10 ms after each response for leftover request body bytes,
    through its module's `selectors`; after a kept-alive response there are none (the body was
    read up to Content-Length), so that wait is skipped."""
    from werkzeug import serving

    serving.selectors = _Selectors()  # type: ignore[attr-defined,assignment]  # a stand-in for the module it imported
