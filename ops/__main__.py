"""`python -m ops status [--json]`, `python -m ops view [--port N]`, `python -m ops dlq ...`,
`python -m ops prove-alarms --yes` and `python -m ops deploy [--adopt]`: the state of a deployed
consumer in a terminal or as a live web page, its dead-letter queue's tools, a proof that its
alarms notify, and a deploy that keeps the duplicate guard. See docs/operations.md.

All read the standard AWS environment (AWS_PROFILE or keys, AWS_REGION, AWS_ENDPOINT_URL). For
the local stack, `eval "$(make -s up)"` sets it; `make view` (python -m local view) finds the
view `make up` started.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from ops import cost, dlq_cli
from ops.aws import Clients, Endpoint
from ops.history import History, scope_of
from ops.snapshot import DEFAULT_SINCE_MINUTES, TargetError, format_text, resolve_target, take_snapshot
from ops.terminal import safe, safe_lines
from stacks.config import DEFAULT_PREFIX


class UsageError(RuntimeError):
    pass


def view_is_up(url: str) -> bool:
    """The view at `url` (a page URL with its token) is up."""
    try:
        with urllib.request.urlopen(urlsplit(url)._replace(path="/healthz").geturl(), timeout=2) as response:  # noqa: S310  the view's own http URL
            status: int = response.status
            return status == 200
    except OSError:
        return False


def _has_display() -> bool:
    return sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def open_page(url: str) -> None:
    # Without a display, webbrowser could pick a console browser and take over the terminal.
    if _has_display():
        import webbrowser

        webbrowser.open(url)


def status(args: argparse.Namespace, endpoint: Endpoint) -> int:
    """Exit 1 when something could not be read (a resource AWS says is gone is no error); with
    --cleanup, 0 only when every check of the lab's end state holds."""
    snapshot = take_snapshot(Clients(endpoint), args.prefix, args.stack, args.since, History())
    if args.cleanup:
        from ops import cleanup_check

        checks = cleanup_check.checks(snapshot)
        if args.json:
            print(
                json.dumps(
                    {"ok": all(c.ok for c in checks), "checks": [c.as_json() for c in checks]}, indent=2
                )
            )
        else:
            print(safe_lines(cleanup_check.format_lines(checks)))
        return 0 if all(c.ok for c in checks) else 1
    if args.json:
        print(json.dumps(snapshot, indent=2, sort_keys=True, default=str))
    else:
        print(format_text(snapshot))
    failed = snapshot["error"] or snapshot["errors"]
    if failed and not args.json:
        print(
            safe(
                f"error: {snapshot['error'] or '; '.join(f'{k}: {v}' for k, v in snapshot['errors'].items())}"
            ),
            file=sys.stderr,
        )
    return 1 if failed else 0


def history(args: argparse.Namespace, endpoint: Endpoint) -> int:
    """Where the kept decisions of this deployment are, how many lines, or --clear them."""
    clients = Clients(endpoint)
    target = resolve_target(clients, args.prefix, args.stack)
    kept = History()
    scope = scope_of(clients.describe(), clients.region, target.stack, target.log_group)
    if args.clear:
        print(f"forgot {kept.clear(scope)} kept line(s) of {target.stack} in {kept.path}")
    else:
        print(f"{len(kept.records(scope))} kept line(s) of {target.stack} in {kept.path}")
    return 0


def deploy(args: argparse.Namespace, endpoint: Endpoint) -> int:
    """Exit 2 when kept resources would collide (nothing was changed), 1 when a step failed."""
    from ops import deploy as deploying

    try:
        done = deploying.deploy(Clients(endpoint), args.context, args.adopt, app=args.app)
    except deploying.DeployError as error:
        print(safe(f"error: {error}"), file=sys.stderr)
        for line in error.lines:  # a drift: one line per difference
            print(safe(f"  {line}"), file=sys.stderr)
        return 2 if isinstance(error, deploying.KeptResourcesError) else 1
    if args.json:
        print(json.dumps(done, sort_keys=True))
    else:
        adopted = f"; adopted {', '.join(done['adopted'])}" if done["adopted"] else ""
        print(f"deployed {done['stack']}{adopted}")
    return 0


def view(args: argparse.Namespace, endpoint: Endpoint) -> int:
    from ops.view.server import View, is_loopback, make_server

    try:
        server = make_server(
            View(Clients(endpoint), args.prefix, args.stack, args.since, args.poll_ms), args.host, args.port
        )
    except OSError as error:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port}: {error.strerror or error}; pass another --port"
        ) from None
    if not is_loopback(args.host):
        print(
            f"warning: the live view listens on {args.host}:{server.port}, reachable from other machines; "
            "anyone with its URL (it carries the token) can read the consumer and redrive messages with "
            "your AWS credentials",
            file=sys.stderr,
        )
    print(f"live view on {server.url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    if args.open:
        open_page(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def parser() -> argparse.ArgumentParser:
    """Every command and its options; each command's own module adds its part."""
    top = argparse.ArgumentParser(
        prog="python -m ops", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = top.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser, since: str = "read worker log lines this far back") -> None:
        sub.add_argument(
            "--prefix", default=DEFAULT_PREFIX, help=f"name prefix of the stack (default {DEFAULT_PREFIX})"
        )
        sub.add_argument("--stack", help="stack name (default <prefix>-consumer)")
        sub.add_argument(
            "--since",
            type=float,
            default=DEFAULT_SINCE_MINUTES,
            metavar="MINUTES",
            help=f"{since} (default {DEFAULT_SINCE_MINUTES:g})",
        )

    status_parser = commands.add_parser(
        "status", help="print one snapshot (exit 1 if anything could not be read)"
    )
    common(status_parser)
    status_parser.add_argument(
        "--json", action="store_true", help="the snapshot as JSON, as the page receives it"
    )
    status_parser.add_argument(
        "--cleanup",
        action="store_true",
        help="check the lab's end state after its clean-up, one line per check (exit 0 only if all hold)",
    )
    history_parser = commands.add_parser(
        "history", help="the write decisions kept after the worker's log is gone (ops/history.py)"
    )
    common(history_parser)
    history_parser.add_argument("--clear", action="store_true", help="forget this deployment's kept lines")
    view_parser = commands.add_parser("view", help="serve the live web page until Ctrl-C")
    common(view_parser)
    view_parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    view_parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; any other needs care: see docs/security.md)",
    )
    view_parser.add_argument(
        "--poll-ms", type=int, default=2000, help="how often the page refreshes (default 2000)"
    )
    view_parser.add_argument(
        "--open", action="store_true", help="open the page in a browser if there is a display"
    )
    dlq_cli.add_commands(commands, common)
    prove_parser = commands.add_parser(
        "prove-alarms",
        help="notify the alarm topics once per alarm, put every alarm back, and report what CloudWatch "
        "delivered and who is subscribed (exit 3: nobody would be reached; 1: not proven)",
    )
    common(prove_parser)
    prove_parser.add_argument(
        "--yes", action="store_true", help="go ahead: every subscriber gets the test notifications"
    )
    prove_parser.add_argument(
        "--json", action="store_true", help="alarms, topics with their subscriptions, and the verdict"
    )
    prove_parser.add_argument(
        "--timeout", type=float, default=60, help="seconds to wait for CloudWatch's records (default 60)"
    )
    deploy_parser = commands.add_parser(
        "deploy",
        help="npx cdk deploy, stopped with one line if resources a destroy kept would collide; "
        "--adopt imports them (the stored orders stay the duplicate guard)",
    )
    deploy_parser.add_argument(
        "--adopt", action="store_true", help="import the kept tables and DLQ into the stack, then deploy"
    )
    deploy_parser.add_argument(
        "-c",
        "--context",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="CDK context, as for cdk deploy (repeatable)",
    )
    deploy_parser.add_argument(
        "--app",
        type=Path,
        metavar="DIR",
        help="a synthesized cloud assembly to deploy instead of synthesizing",
    )
    deploy_parser.add_argument("--json", action="store_true", help="what was done, as one JSON object")
    cost.add_command(commands, common)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)

    try:
        endpoint = Endpoint.from_env(os.environ)
        if args.command == "status":
            return status(args, endpoint)
        if args.command == "history":
            return history(args, endpoint)
        if args.command == "dlq":
            return dlq_cli.run(args, Clients(endpoint))
        if args.command == "deploy":
            return deploy(args, endpoint)
        if args.command == "prove-alarms":
            from ops import prove_alarms

            return prove_alarms.run(args, Clients(endpoint))
        if args.command == "cost":
            return cost.run(args, Clients(endpoint))
        return view(args, endpoint)
    except (UsageError, TargetError) as error:
        print(safe(f"error: {error}"), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
