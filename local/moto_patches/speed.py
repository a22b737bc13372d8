"""Speed with the same answers: work moto's server repeats per request cached, and HTTP
keep-alive (werkzeug closes every connection)."""

from __future__ import annotations

import json
import threading
from typing import Any


def patch_request_overhead() -> None:
    """Work moto's server repeats on every request although its answer never changes; each is
    cached here, with the same result as before.

    - `list_of_moto_modules` lists moto's package folder and stats every entry (about 150),
      twice per request, under the dispatcher's global lock.
    - `method_names_from_class` runs `inspect.getmembers` over the whole response class to find
      out whether the action has a handler method.
    - IAM policy documents are parsed from JSON for every request and every policy: parsed
      documents are kept per document text (a changed policy is a new text).
    """
    import functools
    import inspect

    from moto import backends
    from moto.core import responses
    from moto.iam import access_control

    modules = frozenset(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules

    @functools.lru_cache(maxsize=None)
    def method_names(clazz: type) -> frozenset[str]:
        return frozenset(name for name, _ in inspect.getmembers(clazz, predicate=inspect.isfunction))

    responses.method_names_from_class = method_names

    # IAMPolicy only reads its parsed document (access_control.py, policy_conditions.py).
    parse = functools.lru_cache(maxsize=1024)(json.loads)
    policy_init = access_control.IAMPolicy.__init__

    def iam_policy_init(self: Any, policy: Any) -> None:
        if isinstance(policy, str):
            self._policy_json = parse(policy)
        elif isinstance(policy, dict) and isinstance(policy.get("policy_document"), str):
            self._policy_json = parse(policy["policy_document"])
        else:
            policy_init(self, policy)

    access_control.IAMPolicy.__init__ = iam_policy_init

    # A pure string function moto calls for every action name and every queue attribute, one
    # character at a time; every module that imported it gets the cached one.
    import sys

    from moto.core import utils

    original = utils.camelcase_to_underscores
    cached = functools.lru_cache(maxsize=4096)(original)
    for module in list(sys.modules.values()):
        if (getattr(module, "__name__", "") or "").startswith("moto") and \
                getattr(module, "camelcase_to_underscores", None) is original:
            module.camelcase_to_underscores = cached

    # Request ids (52 characters) and SQS receipt handles (185) are drawn one random.choice
    # per character; one random.choices call draws the same strings from moto's (seedable)
    # random source.
    import string

    from moto.moto_api._internal import mock_random
    from moto.moto_api._internal.moto_random import MotoRandom
    from moto.sqs import models as sqs_models, utils as sqs_utils

    def get_random_string(self: Any, length: int = 20, include_digits: bool = True,
                          lower_case: bool = False) -> str:
        pool = string.ascii_letters + (string.digits if include_digits else "")
        text = "".join(self.choices(pool, k=length))
        return text.lower() if lower_case else text

    MotoRandom.get_random_string = get_random_string

    def generate_receipt_handle() -> str:
        return "".join(mock_random.choices(string.ascii_lowercase, k=185))

    sqs_utils.generate_receipt_handle = generate_receipt_handle
    if getattr(sqs_models, "generate_receipt_handle", None) is not None:
        sqs_models.generate_receipt_handle = generate_receipt_handle


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

    from werkzeug import serving
    from werkzeug.wsgi import LimitedStream

    from moto.moto_server.werkzeug_app import MotoRequestHandler

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
        def DefaultSelector() -> Any:  # noqa: N802 - the name werkzeug calls
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
