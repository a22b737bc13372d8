"""The handler library against the lab's worker, in this process against moto's server: write
calls and units per record, and warm time per message, interleaved round by round.

- `ours`: lambda/worker/app.py, the lab's worker (the library with the lab's own record type);
- `library`: the same orders through the library's item API (bench/handlers/library_orders.py);
- `payments`: the payments example's handler (examples/payments/payments/app.py), on a table of
  its own keyed on payment_id.

The goal: the item API's warm time at most 1.05x the lab's worker's, and one write per record.

    python -m bench.library_bench [--rounds N]   # also run by `make bench`
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import logging
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench import report
from bench.handler_bench import EmbeddedDynamoDB, tally
from bench.stats import blocked_ratios, summarize
from bench.variants import ROOT, BenchContext, sqs_event
from guarded_consumer import GuardedHandler
from stacks.lambda_code import load_handler, load_worker

PAYMENTS_TABLE = "bench-payments"
GOAL_RATIO = 1.05
RESULTS = ROOT / "bench" / "library.json"
BLOCK_BEGIN = "<!-- library:begin (written by `make bench`: bench/library_bench.py) -->"
BLOCK_END = "<!-- library:end -->"
LABELS = {
    "ours": "the lab's worker (its own record type)",
    "library": "the same orders, library item API",
    "payments": "the payments example",
}


def payment_event(payment_id: str) -> dict[str, Any]:
    body = json.dumps({"payment_id": payment_id, "amount_cents": 1250, "currency": "EUR"})
    record = {
        "messageId": f"msg-{payment_id}",
        "receiptHandle": "bench",
        "body": body,
        "eventSource": "aws:sqs",
    }
    return {"Records": [{**record, "attributes": {"ApproximateReceiveCount": "1"}}]}


def variants() -> dict[str, Callable[[str], None]]:
    """Each variant as one delivery of a record with the given key."""
    from bench.handlers import library_orders

    example = load_handler(ROOT / "examples" / "payments" / "payments").handler
    payments = GuardedHandler(example.parse, example.key_attribute, table_name=PAYMENTS_TABLE)
    handlers: dict[str, tuple[Callable[..., dict[str, Any]], Callable[[str], dict[str, Any]]]] = {
        "ours": (load_worker().handler, sqs_event),
        "library": (library_orders.handler, sqs_event),
        "payments": (payments, payment_event),
    }

    def delivery(name: str) -> Callable[[str], None]:
        handler, event = handlers[name]

        def deliver(key: str) -> None:
            if handler(event(key), BenchContext())["batchItemFailures"]:
                raise RuntimeError(f"{LABELS[name]} failed record {key}")

        return deliver

    return {name: delivery(name) for name in handlers}


def measure(db: EmbeddedDynamoDB, rounds: int, warmup: int, blocks: int, orders: int) -> dict[str, Any]:
    act = variants()
    writes: dict[str, Any] = {}
    for name, deliver in act.items():
        keys = [f"count-{name}-{uuid.uuid4().hex[:8]}" for _ in range(orders)]
        deliver(keys[0] + "-warm")
        writes[name] = {}
        for copy in ("first", "duplicate"):
            with db.record() as requests:
                for key in keys:
                    deliver(key)
            writes[name][copy] = tally(requests, orders)
    names = list(act)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(warmup + rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            key = f"warm-{name}-{round_number}-{uuid.uuid4().hex[:6]}"
            started = time.perf_counter()
            act[name](key)
            elapsed = (time.perf_counter() - started) * 1000
            if round_number >= warmup:
                times[name].append(elapsed)
    warm = {
        name: {
            "ms": summarize(times[name], "ms"),
            "ratio_to_ours": statistics.median(times[name]) / statistics.median(times["ours"]),
            "ratio_blocks": summarize(blocked_ratios(times[name], times["ours"], blocks), "x"),
        }
        for name in names
    }
    return {"writes": writes, "warm": warm}


def run(rounds: int = 120, warmup: int = 10, blocks: int = 5, orders: int = 5) -> dict[str, Any]:
    db = EmbeddedDynamoDB()
    db.start()
    try:
        db.client().create_table(
            TableName=PAYMENTS_TABLE,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "payment_id", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "payment_id", "KeyType": "HASH"}],
        )
        with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
            found = measure(db, rounds, warmup, blocks, orders)
    finally:
        db.stop()
    return {
        "measured": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": report.machine(),
        "rounds": rounds,
        **found,
    }


def render(results: dict[str, Any]) -> str:
    warm, writes = results["warm"], results["writes"]
    ratio = warm["library"]["ratio_to_ours"]
    verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
    heading = (
        f"Measured {results['measured'][:10]} on {results['machine'].get('cpu', '?')}, "
        f"{results['rounds']} interleaved rounds of one-record events, each a first delivery; ratio = median / median of the "
        f"lab's worker, with its range over 5 consecutive blocks of rounds. Goal for the library's item "
        f"API: at most {GOAL_RATIO:.2f}x the lab's worker: {verdict} ({ratio:.2f})."
    )
    lines = [
        heading,
        "",
        "| handler | writes per record (first / duplicate) | warm ms (p25-p75) | ratio to the lab's worker |",
        "|---|---|---|---|",
    ]
    for name, label in LABELS.items():
        ms, blocks = warm[name]["ms"], warm[name]["ratio_blocks"]
        first, duplicate = writes[name]["first"], writes[name]["duplicate"]
        lines.append(
            f"| {label} | {first['write_calls']:g} / {duplicate['write_calls']:g} "
            f"| {ms['median']:.2f} ({ms['p25']:.2f}-{ms['p75']:.2f}) "
            f"| {warm[name]['ratio_to_ours']:.2f} (blocks {blocks['min']:.2f}-{blocks['max']:.2f}) |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.library_bench", description=__doc__)
    parser.add_argument("--rounds", type=int, default=120)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
    results = run(rounds=args.rounds)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    markdown = render(results)
    print(markdown)
    if not args.no_docs:
        report.update_page(markdown, begin=BLOCK_BEGIN, end=BLOCK_END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
