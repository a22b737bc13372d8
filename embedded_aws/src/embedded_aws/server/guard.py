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

Why these checks: a web page open in the user's browser can send requests to any port on
localhost (a form post, an image, a fetch) and can rebind its own host name to 127.0.0.1 (DNS
rebinding). `refusal` (also the live view's rule, through `ops/guard.py`) refuses both before a
request does anything:

- Host: the name the client addressed must be one of ours, with our port. A rebound page sends
  its own name (`Host: evil.example:5000`), which never matches.
- Origin: browsers attach it to cross-origin requests and to every POST; SDKs and CLIs never
  send it. When present it must be exactly this server's own origin (scheme, host and port).
- Sec-Fetch-Site: browsers say where a request came from; anything but the same origin, or a
  user typing the address (`none`), is refused. A page on another port of localhost is
  `same-site`, not `same-origin`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_HOST_RE = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$")


def parse_host(host_header: str | None) -> tuple[str, int | None] | None:
    """`name[:port]` as (lowercase name without IPv6 brackets, port or None); None if malformed."""
    match = _HOST_RE.match(host_header or "")
    if not match:
        return None
    name, port = match.groups()
    return name.strip("[]").lower(), int(port[1:]) if port else None


def host_allowed(
    host_header: str | None,
    port: int,
    names: frozenset[str] = LOOPBACK_NAMES,
    localhost_subdomains: bool = False,
) -> bool:
    """The request addressed one of `names` (or `*.localhost`, for S3 virtual-host requests) on
    exactly `port`."""
    parsed = parse_host(host_header)
    if parsed is None or parsed[1] != port:
        return False
    name = parsed[0]
    return name in names or (localhost_subdomains and name.endswith(".localhost"))


def origin_allowed(origin: str | None, host_header: str) -> bool:
    """No Origin (not a browser, or a same-origin GET), or exactly `http://<Host>`."""
    if origin is None:
        return True
    parts = urlsplit(origin)
    return (
        parts.scheme == "http"
        and not parts.path
        and not parts.query
        and not parts.username
        and parts.netloc.lower() == host_header.lower()
    )


def fetch_site_allowed(sec_fetch_site: str | None) -> bool:
    return sec_fetch_site is None or sec_fetch_site in ("same-origin", "none")


def refusal(
    host_header: str | None,
    origin: str | None,
    sec_fetch_site: str | None,
    port: int,
    names: frozenset[str] = LOOPBACK_NAMES,
    localhost_subdomains: bool = False,
) -> tuple[int, str] | None:
    """(HTTP status, one-line reason) if the request must be refused, else None."""
    if not host_allowed(host_header, port, names, localhost_subdomains):
        return 421, f"refused: Host {host_header!r} is not this server (use localhost:{port})"
    assert host_header is not None  # noqa: S101  host_allowed refuses a missing Host; narrows the type
    if not origin_allowed(origin, host_header):
        return 403, f"refused: requests from {origin!r} are not allowed (cross-origin)"
    if not fetch_site_allowed(sec_fetch_site):
        return 403, f"refused: a {sec_fetch_site} request from a web page is not allowed"
    return None


MOTO_API_PREFIX = "/moto-api"

StartResponse = Callable[..., Any]


class LoopbackOnly:
    """Wraps a WSGI application; `port` is the port the emulator listens on."""

    def __init__(self, app: Callable[[dict[str, Any], StartResponse], Iterable[bytes]], port: int) -> None:
        self.app = app
        self.port = port

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        refused = refusal(
            environ.get("HTTP_HOST"),
            environ.get("HTTP_ORIGIN"),
            environ.get("HTTP_SEC_FETCH_SITE"),
            self.port,
            localhost_subdomains=True,
        )
        if refused is None and str(environ.get("PATH_INFO", "")).startswith(MOTO_API_PREFIX):
            refused = 403, "refused: the moto API (/moto-api) is switched off in the embedded AWS"
        if refused is None:
            return self.app(environ, start_response)
        status, reason = refused
        body = (reason + "\n").encode()
        phrase = {403: "Forbidden", 421: "Misdirected Request"}[status]
        start_response(
            f"{status} {phrase}",
            [
                ("Content-Type", "text/plain; charset=utf-8"),
                ("Content-Length", str(len(body))),
                ("Connection", "close"),
            ],
        )
        return [body]
