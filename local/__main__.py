"""`python -m local demo|up|down|status|view|serve|faults`: see docs/local.md."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from local.session import DEFAULT_PORT, DEFAULT_STATE_DIR, LocalError, LocalSession, parse_context
from ops.terminal import safe


def view(session: LocalSession, port: int | None, open_it: bool) -> int:
    """The view `make up` started (its URL carries the token), or a new one on `port` for the
    local stack's endpoint and keys."""
    from ops.__main__ import main as ops_main
    from ops.__main__ import open_page, view_is_up

    url = session.require_state().get("view_url")
    if url and port is None and view_is_up(url):
        print(f"live view: {url}", file=sys.stderr)
        if open_it:
            open_page(url)
        return 0
    os.environ.update(session.aws_env())
    return ops_main(["view", "--port", str(port or 0), *(["--open"] if open_it else [])])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["faults"]:
        from local.faults_cli import main as faults_main

        return faults_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m local", description=__doc__)
    parser.add_argument("command", choices=["demo", "up", "down", "status", "view", "serve"])
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"emulator port (default {DEFAULT_PORT}); for view: the view's port (default: the running one)",
    )
    parser.add_argument("--open", action="store_true", help="view: open the page if there is a display")
    parser.add_argument(
        "--context",
        default="",
        help="up/demo: the stack's context values, `key=value key2=value2` (README's table), e.g. "
        "`fifo=true batch_size=10`",
    )
    parser.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR)
    parser.add_argument(
        "--leases", type=Path, help=argparse.SUPPRESS
    )  # serve: stop when their holders are gone
    args = parser.parse_args(argv)

    port = DEFAULT_PORT if args.port is None else args.port
    if args.command == "serve":
        from local.emulator_main import serve

        serve(port, args.state_dir, leases=args.leases)
        return 0

    try:
        context = parse_context(args.context)
        if args.command == "demo" and context.get("removal") == "retain":
            raise LocalError(
                "make demo ends by destroying what it deployed and checking nothing is left, which "
                "removal=retain prevents by design (it keeps the tables and queues, and protects the "
                'stack): try it with make up CONTEXT="removal=retain"'
            )
        session = LocalSession(args.state_dir, context)
    except LocalError as error:
        print(safe(f"error: {error}"), file=sys.stderr)
        return 2
    try:
        if args.command == "up":
            session.up(args.port)
            print(session.exports())
        elif args.command == "down":
            session.down()
        elif args.command == "status":
            print(session.status())
        elif args.command == "demo":
            from local.scenario import run_demo

            return run_demo(session, port)
        elif args.command == "view":
            return view(session, args.port, args.open)
    except LocalError as error:
        print(safe(f"error: {error}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        print(safe(session.interrupted(f"`{args.command}`")), file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
