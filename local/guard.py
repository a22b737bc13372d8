"""The embedded AWS's front door: a WSGI layer in front of moto's application that answers only
clients on this machine that are not web pages of another site.

- Host must be a loopback name with the emulator's port (`localhost`, `127.0.0.1`, `[::1]`, or
  `<bucket>.localhost` for S3 virtual-host requests): DNS rebinding sends the attacker's name.
- An `Origin` other than the emulator's own, or `Sec-Fetch-Site` other than same-origin, is a
  browser page of another site: refused. SDKs, the AWS CLI and the CDK CLI send neither.
- `/moto-api/*` (reset everything, switch IAM enforcement off, dump every backend) is off. The
  project needs none of it over HTTP; what the local run needs it does in-process.
- moto's global CORS (which approves any origin's preflight) is switched off before moto loads.

A refusal is answered before moto sees the request, with `Connection: close`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ops.guard import refusal

MOTO_API_PREFIX = "/moto-api"

StartResponse = Callable[..., Any]


class LoopbackOnly:
    """Wraps a WSGI application; `port` is the port the emulator listens on."""

    def __init__(self, app: Callable[[dict, StartResponse], Iterable[bytes]], port: int) -> None:
        self.app = app
        self.port = port

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        refused = refusal(environ.get("HTTP_HOST"), environ.get("HTTP_ORIGIN"),
                          environ.get("HTTP_SEC_FETCH_SITE"), self.port, localhost_subdomains=True)
        if refused is None and str(environ.get("PATH_INFO", "")).startswith(MOTO_API_PREFIX):
            refused = 403, "refused: the moto API (/moto-api) is switched off in the embedded AWS"
        if refused is None:
            return self.app(environ, start_response)
        status, reason = refused
        body = (reason + "\n").encode()
        phrase = {403: "Forbidden", 421: "Misdirected Request"}[status]
        start_response(f"{status} {phrase}", [("Content-Type", "text/plain; charset=utf-8"),
                                              ("Content-Length", str(len(body))), ("Connection", "close")])
        return [body]
