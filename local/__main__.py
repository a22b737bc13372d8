"""`python -m local demo|up|down|status|serve`: see README, "Run it locally"."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from local.session import DEFAULT_PORT, DEFAULT_STATE_DIR, LocalError, LocalSession
from ops.terminal import safe


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local", description=__doc__)
    parser.add_argument("command", choices=["demo", "up", "down", "status", "serve"])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"emulator port (default {DEFAULT_PORT})")
    parser.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR)
    args = parser.parse_args(argv)

    if args.command == "serve":
        from local.server import serve

        serve(args.port, args.state_dir)
        return 0

    session = LocalSession(args.state_dir)
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

            return run_demo(session, args.port)
    except LocalError as error:
        print(safe(f"error: {error}"), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
