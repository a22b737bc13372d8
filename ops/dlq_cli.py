"""`python -m ops dlq list|redrive|discard|audit`: the dead-letter queue tools in a terminal.
Text for people (every value from a message escaped), `--json` for scripts."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ops import dlq
from ops.aws import Clients, error_line
from ops.snapshot import TargetError, resolve_target
from ops.terminal import Progress, safe, safe_lines


def add_commands(commands: Any, common: Any) -> None:
    parser = commands.add_parser("dlq", help="list, redrive, discard and audit dead-letter messages")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser(
        "list", help="DLQ messages with their class, id, receive count, age and reason"
    )
    listing.add_argument(
        "--limit",
        type=int,
        default=dlq.LIST_LIMIT,
        help=f"read at most this many (default {dlq.LIST_LIMIT}); counts are exact when the whole "
        "queue was read, and say so",
    )
    listing.add_argument(
        "--json", action="store_true", help='{"messages": [...], "counts": {...}, "complete": ...}'
    )
    redrive = actions.add_parser(
        "redrive",
        help="send pending and stored messages back to the jobs queue, a page at a time (progress on stderr)",
    )
    redrive.add_argument("--dry-run", action="store_true", help="classify and count, move nothing")
    redrive.add_argument(
        "--class",
        dest="classes",
        default="pending,stored",
        metavar="CLASSES",
        type=_classes,
        help="pending,stored (default), or one of them; lapsing, conflicts and malformed bodies never",
    )
    redrive.add_argument(
        "--json",
        action="store_true",
        help=f"the counts, and the first {dlq.LISTED:,} moves (old and new message id) and failures, with how "
        "many more there were",
    )
    discard = actions.add_parser(
        "discard", help="remove one conflict, malformed or lapsing message, with an audit record"
    )
    discard.add_argument("--message-id", required=True)
    discard.add_argument("--reason", required=True, help="why it may go (kept in the audit record)")
    discard.add_argument("--json", action="store_true")
    audit = actions.add_parser(
        "audit", help="every discard: who, when, why, the body, and whether the delete was confirmed"
    )
    audit.add_argument("--json", action="store_true")
    for sub in (listing, redrive, discard, audit):
        common(sub)
    for sub in (listing, redrive, discard):
        sub.add_argument(
            "--handler",
            type=Path,
            help="the directory of the worker's handler (its app.py), to judge bodies as it does "
            "(default: the lab's lambda/worker)",
        )
        sub.add_argument(
            "--hold-seconds",
            type=int,
            default=dlq.HOLD_SECONDS,
            help=f"how long a message read stays hidden from others if this command dies (default "
            f"{dlq.HOLD_SECONDS}); extended while it works",
        )


def _classes(text: str) -> tuple[str, ...]:
    """--class, checked before anything is read."""
    try:
        return dlq.parse_classes(text)
    except dlq.DlqError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def redrive_progress(figures: dict[str, Any]) -> str:
    return (
        f"seen {figures['seen']}, moved {figures['moved']}, held {figures['held']}, "
        f"{figures['per_second']:g}/s"
    )


def _age(seconds: int | None) -> str:
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _counts(counts: dict[str, int]) -> str:
    # `lapsing` needs a stack with order_retention_days: named only when there is one.
    return ", ".join(f"{counts[kind]} {kind}" for kind in dlq.CLASSES if kind != dlq.LAPSING or counts[kind])


def _elsewhere(count: int) -> list[str]:
    return (
        [
            (
                f"{count} more message(s) are held by another reader (in flight): not seen; run again when they "
                "are released"
            )
        ]
        if count
        else []
    )


def format_listing(queue: str, result: dict[str, Any]) -> str:
    messages, totals = result["messages"], result["reading"]
    if result["complete"]:
        lines = [f"{queue}: {len(messages)} message(s): {_counts(result['counts'])}"]
    else:
        lines = [
            (
                f"{queue}: the first {len(messages)} message(s) read: {_counts(result['counts'])}; "
                f"about {totals['visible_after']} more visible (--limit reads more)"
            )
        ]
    lines += _elsewhere(totals["in_flight_elsewhere"])
    if totals.get("stopped"):
        lines.append(totals["stopped"])
    if messages:
        lines.append(f"{'class':<10} {'received':>8} {'age':>5}  {'message id':<36}  id / reason")
    for message in messages:
        lines.append(
            f"{message['class']:<10} {message['receive_count']:>7}x {_age(message['age_seconds']):>5}  "
            f"{message['message_id']:<36}  {message['id'] if message['id'] is not None else '-'}: {message['reason']}"
        )
    return safe_lines(lines)


def format_redrive(result: dict[str, Any]) -> str:
    """What a redrive did, or (a dry run) would do: a message it would move is not also counted
    as left."""
    counts, dry = result["counts"], result["dry_run"]
    moved = ", ".join(f"{counts[kind]['found' if dry else 'moved']} {kind}" for kind in result["classes"])

    def left_of(kind: str) -> int:
        if dry:
            return 0 if kind in result["classes"] else int(counts[kind]["found"])
        return int(counts[kind]["found"] - counts[kind]["moved"])

    left = ", ".join(f"{n} {kind}" for kind in dlq.CLASSES if (n := left_of(kind)))
    failed = sum(counts[kind]["failed"] for kind in dlq.CLASSES)
    lines = [
        f"{'would move' if dry else 'moved'} {moved} to the jobs queue",
        f"{'would leave' if dry else 'left'} in the DLQ: {left or 'nothing'}",
        f"failed: {failed}",
    ]
    lines += [f"  {failure['message_id']}: {failure['reason']}" for failure in result["failures"]]
    if result.get("failures_not_listed"):
        lines.append(f"  and {result['failures_not_listed']} more (counted above, not listed)")
    if result.get("lapsed_holds"):
        lines.append(
            f"{result['lapsed_holds']} hold(s) could not be extended and lapsed: those messages may have been "
            f"visible to others meanwhile ({result.get('seen_again', 0)} came round again, held, not counted twice)"
        )
    lines += _elsewhere(result["in_flight_elsewhere"])
    if result["stopped"]:
        lines.append(f"incomplete: {result['stopped']}")
    return safe_lines(lines)


def run(args: argparse.Namespace, clients: Clients) -> int:
    try:
        target = resolve_target(clients, args.prefix, args.stack)
        queues = target.queues()
        if getattr(args, "handler", None) is not None:
            queues = replace(queues, judge=dlq.judge_of(args.handler))
        if args.action == "list":
            result = dlq.listing(clients, queues, limit=args.limit, hold_seconds=args.hold_seconds)
            print(
                json.dumps(result, indent=2, sort_keys=True)
                if args.json
                else format_listing(target.dead_letter_queue, result)
            )
            return 0
        if args.action == "redrive":
            result = dlq.redrive(
                clients,
                queues,
                args.classes,
                dry_run=args.dry_run,
                hold_seconds=args.hold_seconds,
                progress=Progress(redrive_progress),
            )
            print(json.dumps(result, indent=2, sort_keys=True) if args.json else format_redrive(result))
            return 1 if result["failures"] or not result["complete"] else 0
        if args.action == "discard":
            record = dlq.discard(
                clients, queues, args.message_id, args.reason, hold_seconds=args.hold_seconds
            )
            print(
                json.dumps(record, indent=2, sort_keys=True)
                if args.json
                else safe(
                    f"discarded {record['message_id']} ({record['class']}); audit record in {queues.audit_log_group}"
                )
            )
            return 0
        records = dlq.audit(clients, queues)
        if args.json:
            print(json.dumps(records, indent=2, sort_keys=True))
        else:
            print(
                safe_lines(
                    [
                        f"{r['time']}  {r['who']}  {r['class']}  {r['message_id']}  {r['outcome']}  {r['reason']}  "
                        f"body {r['body']}"
                        for r in records
                    ]
                    or [f"no discards recorded in {queues.audit_log_group}"]
                )
            )
        return 0
    except (dlq.DlqError, TargetError) as error:
        print(safe(f"error: {error}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "interrupted: what was held is released by SQS within --hold-seconds; `ops dlq audit` shows a "
            "discard as discarded only if its delete was confirmed",
            file=sys.stderr,
        )
        return 130
    except Exception as error:  # noqa: BLE001 - one line, not a traceback
        print(safe(f"error: {error_line(error)}"), file=sys.stderr)
        return 1
