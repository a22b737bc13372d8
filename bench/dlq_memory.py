"""How much memory `ops dlq redrive` needs, measured as the peak resident size (VmHWM) of a
process that runs only the redrive, against the embedded AWS in a process of its own (so the
messages it stores are not counted): a DLQ of large held bodies (malformed, so stepped past and
held to the end), and a deep DLQ of small ones. tests/e2e/test_dlq_memory.py holds the first to
issue 27's ceiling (1,000 bodies of 200 KB under 150 MB).

`python -m bench.dlq_memory [--deep N]` runs both and rewrites its own block of
docs/benchmarks.md (N dead letters, 100,000 by default)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.dlq_redrive import DeadLetterQueues

BLOCK_BEGIN = "<!-- bench-dlq-memory:begin (written by `python -m bench.dlq_memory`) -->"
BLOCK_END = "<!-- bench-dlq-memory:end -->"
ROOT = Path(__file__).resolve().parents[1]

# Run in a process of its own: the redrive, then its peak resident size.
REDRIVE = """
import json, os, sys
from ops import dlq
from ops.aws import Clients, Endpoint

def high_water_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

clients = Clients(Endpoint.from_env(os.environ))
clients.client("sqs"), clients.client("dynamodb")
start = high_water_kb()
result = dlq.redrive(clients, dlq.Queues(*sys.argv[1:5]), hold_seconds=int(sys.argv[5]))
print(json.dumps({"start_kb": start, "peak_kb": high_water_kb(), "result": result}))
"""


def measured_redrive(clients: Any, queues: Any, hold_seconds: int) -> dict[str, Any]:
    """One redrive in a fresh Python process: its report, seconds and memory (MB)."""
    env = clients.process_env()
    started = time.perf_counter()
    done = subprocess.run(  # noqa: S603  this Python on a fixed script, no shell
        [
            sys.executable,
            "-c",
            REDRIVE,
            queues.dlq_url,
            queues.jobs_url,
            queues.orders_table,
            queues.audit_log_group,
            str(hold_seconds),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the redrive process failed: {done.stderr.strip().splitlines()[-1:]}")
    found = json.loads(done.stdout)
    return {
        "result": found["result"],
        "seconds": seconds,
        "start_mb": found["start_kb"] / 1024,
        "peak_mb": found["peak_kb"] / 1024,
    }


def held_bodies_redrive(
    clients: Any, *, held: int, body_bytes: int, pending: int, hold_seconds: int
) -> dict[str, Any]:
    """A DLQ of `held` malformed bodies of `body_bytes` each and `pending` small valid jobs,
    redriven in a process of its own."""
    made = DeadLetterQueues.create(clients, in_flight_limit=held + 1_000)
    try:
        started = time.perf_counter()
        sqs = clients.client("sqs")
        per_batch = max(1, min(10, 1_000_000 // body_bytes))  # SendMessageBatch: 1 MiB together
        for start in range(0, held, per_batch):
            sqs.send_message_batch(
                QueueUrl=made.queues.dlq_url,
                Entries=[
                    {"Id": str(i), "MessageBody": f"held {n:07d} " + "x" * (body_bytes - 13)}
                    for i, n in enumerate(range(start, min(held, start + per_batch)))
                ],
            )
        made.fill(pending)
        fill_seconds = time.perf_counter() - started
        found = measured_redrive(clients, made.queues, hold_seconds)
        return {**found, "fill_seconds": fill_seconds, "left": made.counters(made.queues.dlq_url)}
    finally:
        made.delete()


def deep_redrive(clients: Any, *, messages: int, hold_seconds: int) -> dict[str, Any]:
    """A DLQ of `messages` small dead letters (1% held: conflicts and malformed), redriven in a
    process of its own."""
    unsafe = messages // 100
    made = DeadLetterQueues.create(clients, in_flight_limit=120_000)
    try:
        started = time.perf_counter()
        made.fill(messages - 2 * unsafe, conflicts=unsafe, malformed=unsafe)
        fill_seconds = time.perf_counter() - started
        found = measured_redrive(clients, made.queues, hold_seconds)
        return {**found, "fill_seconds": fill_seconds, "left": made.counters(made.queues.dlq_url)}
    finally:
        made.delete()


def run(progress: Callable[[str], None], deep: int = 100_000) -> dict[str, Any]:
    from local.session import LocalSession, free_port

    session = LocalSession(Path(tempfile.mkdtemp(prefix="bench-dlq-memory-")))
    session.start_emulator(free_port())
    try:
        progress("dlq memory: 1,000 held bodies of 200 KB")
        held = held_bodies_redrive(session, held=1_000, body_bytes=200_000, pending=20, hold_seconds=30)
        progress(f"dlq memory: peak {held['peak_mb']:.0f} MB; now {deep:,} small dead letters")
        deep_found = deep_redrive(session, messages=deep, hold_seconds=60)
        progress(f"dlq memory: {deep:,} redriven in {deep_found['seconds']:.0f} s")
    finally:
        session.stop_emulator()
    return {
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "held": held,
        "deep": deep_found,
        "deep_messages": deep,
    }


def _row(what: str, found: dict[str, Any]) -> str:
    result = found["result"]
    moved = sum(c["moved"] for c in result["counts"].values())
    found_all = sum(c["found"] for c in result["counts"].values())
    return (
        f"| {what} | {found_all:,} | {moved:,} | {found['left'][0]:,} | {found['fill_seconds']:.0f} | "
        f"{found['seconds']:.0f} | {found['start_mb']:.0f} | {found['peak_mb']:.0f} | "
        f"{'yes' if result['complete'] else 'no'} |"
    )


def render(found: dict[str, Any]) -> str:
    return (
        "**Redrive memory** (`python -m bench.dlq_memory`: the redrive alone in a fresh process, peak "
        "resident size from its VmHWM; the embedded AWS in another process on this machine; load "
        f"average {found['load_average_at_start']} at the end)\n\n"
        "| DLQ | found | moved | left (held, then released) | fill s | redrive s | MB after imports | peak MB |"
        " complete |\n|---|---|---|---|---|---|---|---|---|\n"
        + _row("1,000 malformed bodies of 200 KB + 20 pending", found["held"])
        + "\n"
        + _row(f"{found['deep_messages']:,} small (1% conflicts and malformed)", found["deep"])
        + "\n"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.dlq_memory", description=__doc__)
    parser.add_argument("--deep", type=int, default=100_000, help="dead letters of the deep run")
    args = parser.parse_args(argv)
    found = run(lambda message: print(f"bench: {message}", file=sys.stderr, flush=True), deep=args.deep)
    print(json.dumps(found, indent=2, default=str)[:2000], file=sys.stderr)
    text = render(found)
    print(text)
    from bench import report

    report.update_page(text, begin=BLOCK_BEGIN, end=BLOCK_END)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
