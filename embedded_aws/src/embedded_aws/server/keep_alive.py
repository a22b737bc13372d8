"""HTTP keep-alive for the embedded AWS's server (werkzeug closes every connection)."""

from __future__ import annotations

import threading
from typing import Any

from embedded_aws.compat.registry import T, declare


@declare(
    "server.keep-alive",
    "HTTP/1.1 connections stay open between requests, as AWS endpoints keep them",
    T("moto.moto_server.werkzeug_app:MotoRequestHandler.make_environ", "self"),
    T("moto.moto_server.werkzeug_app:MotoRequestHandler.send_header", "self", "keyword", "value"),
    T("moto.moto_server.werkzeug_app:MotoRequestHandler.end_headers", "self"),
    T("moto.moto_server.werkzeug_app:MotoRequestHandler.run_wsgi", "self"),
    T("moto.moto_server.werkzeug_app:MotoRequestHandler.disable_nagle_algorithm"),
    T("werkzeug.serving:selectors"),
)
def patch_keep_alive() -> None:
    """Keep HTTP/1.1 connections open between requests, as AWS endpoints do.

    werkzeug's development server answers every request with `Connection: close`, because
    http.server cannot tell where an unread request body ends; after the response it also
    waits up to 10 ms for leftover body bytes. So every SDK call paid a new TCP connection, a
    new server thread and that wait. Here each request body is read through a stream limited
    to its Content-Length, and whatever the application left unread is consumed before the
    next request is read, so the connection can stay open; a chunked request (no length) and a
    client that asks for `Connection: close` still get the old behaviour. A kept connection
    ends when its client closes it (its thread waits for the next request until then).
    """
    import selectors

    from moto.moto_server.werkzeug_app import MotoRequestHandler
    from werkzeug import serving
    from werkzeug.wsgi import LimitedStream

    state = threading.local()  # per connection thread: the current request's body stream

    make_environ = MotoRequestHandler.make_environ

    def make_environ_with_limit(self: Any) -> dict[str, Any]:
        environ = make_environ(self)
        state.body = None
        if environ.get("wsgi.input_terminated"):  # chunked: werkzeug dechunks, no keep-alive
            return environ
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return environ
        if length < 0:
            return environ
        state.body = LimitedStream(self.rfile, length)
        environ["wsgi.input"] = state.body
        environ["wsgi.input_terminated"] = True  # the limited stream ends at Content-Length
        return environ

    send_header = MotoRequestHandler.send_header
    end_headers = MotoRequestHandler.end_headers

    def send_header_keeping_alive(self: Any, keyword: str, value: str) -> None:
        if getattr(state, "in_wsgi", False) and keyword.lower() == "connection" and value.lower() == "close":
            state.closes += 1  # decided in end_headers: werkzeug's own comes last
            return
        send_header(self, keyword, value)

    def end_headers_keeping_alive(self: Any) -> None:
        if getattr(state, "in_wsgi", False) and state.closes:
            # One `Connection: close` is werkzeug's (added to every response); a second one is
            # the application's (e.g. the guard's refusals) and is honoured, as is a client that
            # asked for close or a body that cannot be delimited.
            if state.closes == 1 and state.body is not None and not self.close_connection:
                state.keep = True
            else:
                send_header(self, "Connection", "close")
            state.closes = 0
        end_headers(self)

    run_wsgi = MotoRequestHandler.run_wsgi

    def run_wsgi_keeping_alive(self: Any) -> None:
        state.keep, state.body, state.closes, state.in_wsgi = False, None, 0, True
        try:
            run_wsgi(self)
        finally:
            keep, body = state.keep, state.body
            state.keep, state.body, state.closes, state.in_wsgi = False, None, 0, False
        if keep and body is not None:
            try:
                body.exhaust()  # the unread rest of this request's body, not the next request
            except Exception:  # noqa: BLE001 - a broken body ends the connection
                self.close_connection = True
        else:
            self.close_connection = True

    class _Selectors:
        """werkzeug.serving's view of `selectors`: after a kept-alive response there is no
        leftover body to wait for (it was read up to Content-Length)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(selectors, name)

        @staticmethod
        def DefaultSelector() -> Any:  # the name werkzeug calls
            return _NoLeftovers() if getattr(state, "keep", False) else selectors.DefaultSelector()

    class _NoLeftovers:
        def register(self, *args: Any, **kwargs: Any) -> None:
            pass

        def select(self, timeout: float | None = None) -> list:
            return []

        def close(self) -> None:
            pass

    # werkzeug writes a response's headers and its body separately; on a kept-alive connection
    # Nagle's algorithm holds the body back until the client ACKs the headers, which the client
    # delays (about 40 ms on Linux). Small writes go out at once instead.
    MotoRequestHandler.disable_nagle_algorithm = True
    MotoRequestHandler.make_environ = make_environ_with_limit
    MotoRequestHandler.send_header = send_header_keeping_alive
    MotoRequestHandler.end_headers = end_headers_keeping_alive
    MotoRequestHandler.run_wsgi = run_wsgi_keeping_alive
    serving.selectors = _Selectors()
