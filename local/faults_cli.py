"""`python -m local faults throttle|fail|slow|list|clear`: make the local stack's DynamoDB throttle,
fail or slow down, and watch the worker's retries, the alarms and the DLQ answer (docs/local.md).
Only the embedded AWS honours these (embedded_aws/faults.py); AWS has no such switch."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from local.session import DEFAULT_STATE_DIR, LocalError, LocalSession
from ops.terminal import safe
from stacks.config import DEFAULT_PREFIX, Names

THROTTLED = ("ProvisionedThroughputExceededException", 400)
FAILED = ("InternalServerError", 500)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m local faults", description=__doc__)
    top.add_argument("--state-dir", default=DEFAULT_STATE_DIR)
    actions = top.add_subparsers(dest="action", required=True)
    table = Names(DEFAULT_PREFIX).orders_table

    def target(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--table", default=table, help=f"default {table}")
        sub.add_argument("--operation", default="PutItem", help="the DynamoDB action (default PutItem)")

    for name, (code, status), what in (
        ("throttle", THROTTLED, "throttled (400 " + THROTTLED[0] + ")"),
        ("fail", FAILED, "failed (500 " + FAILED[0] + ")"),
    ):
        sub = actions.add_parser(name, help=f"the next --count requests are {what}")
        target(sub)
        sub.add_argument("--count", type=int, required=True)
        sub.set_defaults(code=code, status=status)
    slow = actions.add_parser(
        "slow", help="every request waits --ms first, until cleared (a network round trip)"
    )
    target(slow)
    slow.add_argument("--ms", type=float, required=True)
    listing = actions.add_parser("list", help="the rules, with what each has served")
    listing.add_argument("--json", action="store_true")
    clear = actions.add_parser("clear", help="remove every rule (of --table only, if given)")
    clear.add_argument("--table", default=None)
    return top


def describe(rule: dict[str, Any]) -> str:
    where = f"{rule['action']} on {rule['table']}"
    if "latency_ms" in rule:
        return f"{where}: each waits {rule['latency_ms']:g} ms"
    return f"{where}: {rule['remaining']} more fail with {rule['status']} {rule['code']} ({rule['served']} served)"


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    session = LocalSession(args.state_dir)
    try:
        if args.action in ("throttle", "fail"):
            if args.count < 1:
                raise ValueError(f"--count must be at least 1, got {args.count}")
            session.inject_fault(
                action=args.operation, table=args.table, code=args.code, status=args.status, count=args.count
            )
            print(
                f"the next {args.count} {args.operation} on {args.table} fail with {args.status} {args.code}"
            )
        elif args.action == "slow":
            session.slow_down(action=args.operation, table=args.table, latency_ms=args.ms)
            print(
                f"every {args.operation} on {args.table} waits {args.ms:g} ms"
                if args.ms
                else f"{args.operation} on {args.table} no longer waits"
            )
        elif args.action == "list":
            session.require_state()
            rules = session.faults()
            print(
                json.dumps(rules, indent=2, sort_keys=True)
                if args.json
                else "\n".join(safe(describe(rule)) for rule in rules) or "no faults"
            )
        else:
            removed = session.clear_faults(args.table)
            print(f"cleared {removed} rule(s)")
        return 0
    except (LocalError, ValueError) as error:
        print(safe(f"error: {error}"), file=sys.stderr)
        return 1
