"""How fast `ops dlq redrive` empties a deep DLQ in the embedded AWS, and that it empties it: a DLQ
of 10,000 dead letters (mostly pending, some stored, conflicting and malformed) behind an
in-flight cap of 1,000, with a hold far shorter than the run. tests/e2e/test_dlq_at_scale.py
runs the same scenario at a fifth of the size.

`python -m bench.dlq_redrive` runs it alone and rewrites its own block of docs/benchmarks.md;
`make bench` runs it with everything else."""

from __future__ import annotations

import json
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ops import dlq

BLOCK_BEGIN, BLOCK_END = "<!-- bench-dlq:begin (written by `make bench`) -->", "<!-- bench-dlq:end -->"


@dataclass
class DeadLetterQueues:
    """A DLQ (in-flight cap lowered by the emulator's tag), a jobs queue nobody reads, an orders
    table and an audit log group, all named after one run."""

    clients: Any
    queues: dlq.Queues

    @classmethod
    def create(cls, clients: Any, in_flight_limit: int) -> DeadLetterQueues:
        from embedded_aws import IN_FLIGHT_TAG

        name = f"scale-{uuid.uuid4().hex[:8]}"
        sqs, dynamodb = clients.client("sqs"), clients.client("dynamodb")
        dlq_url = sqs.create_queue(QueueName=f"{name}-dlq", tags={IN_FLIGHT_TAG: str(in_flight_limit)})[
            "QueueUrl"
        ]
        jobs_url = sqs.create_queue(QueueName=f"{name}-jobs")["QueueUrl"]
        dynamodb.create_table(
            TableName=f"{name}-orders",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        clients.client("logs").create_log_group(logGroupName=f"{name}-audit")
        return cls(
            clients,
            dlq.Queues(
                dlq_url=dlq_url,
                jobs_url=jobs_url,
                orders_table=f"{name}-orders",
                audit_log_group=f"{name}-audit",
            ),
        )

    def delete(self) -> None:
        sqs = self.clients.client("sqs")
        for url in (self.queues.dlq_url, self.queues.jobs_url):
            sqs.delete_queue(QueueUrl=url)
        self.clients.client("dynamodb").delete_table(TableName=self.queues.orders_table)
        self.clients.client("logs").delete_log_group(logGroupName=self.queues.audit_log_group)

    def fill(self, pending: int, stored: int = 0, conflicts: int = 0, malformed: int = 0) -> set[str]:
        """Dead letters of each class; returns the bodies of the safe ones (pending and stored)."""
        dynamodb = self.clients.client("dynamodb")
        for n in range(stored + conflicts):
            dynamodb.put_item(
                TableName=self.queues.orders_table,
                Item={"id": {"S": f"kept-{n}"}, "quantity": {"N": "2"}, "total_cents": {"N": "600"}},
            )
        # The ones a redrive may not move go in first: held from the first pages to the end of the
        # run, they are the holds that must be extended.
        unsafe = [json.dumps({"id": f"kept-{stored + n}", "quantity": 9}) for n in range(conflicts)] + [
            f"not json {n}" for n in range(malformed)
        ]
        safe = [json.dumps({"id": f"pending-{n}", "quantity": 1}) for n in range(pending)] + [
            json.dumps({"id": f"kept-{n}", "quantity": 2}) for n in range(stored)
        ]
        bodies = unsafe + safe
        sqs = self.clients.client("sqs")
        for start in range(0, len(bodies), 10):
            sqs.send_message_batch(
                QueueUrl=self.queues.dlq_url,
                Entries=[
                    {"Id": str(i), "MessageBody": body} for i, body in enumerate(bodies[start : start + 10])
                ],
            )
        return set(safe)

    def drain(self, url: str) -> list[str]:
        """Every body in a queue nobody else reads (deleted as read)."""
        sqs, found = self.clients.client("sqs"), []
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
            found += [m["Body"] for m in messages]
            sqs.delete_message_batch(
                QueueUrl=url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
            )
        return found

    def counters(self, url: str) -> tuple[int, int]:
        attributes = self.clients.client("sqs").get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]), int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )


def redrive_at_scale(
    clients: Any,
    *,
    pending: int,
    stored: int,
    conflicts: int,
    malformed: int,
    in_flight_limit: int,
    hold_seconds: int,
    reader: Callable[..., dlq.DeadLetterReader] = dlq.DeadLetterReader,
) -> dict[str, Any]:
    """One redrive of a filled DLQ: its report, what reached the jobs queue and what was left."""
    made = DeadLetterQueues.create(clients, in_flight_limit)
    try:
        safe = made.fill(pending, stored, conflicts, malformed)
        pages: list[dict[str, Any]] = []
        started = time.perf_counter()
        result = dlq.redrive(
            clients, made.queues, hold_seconds=hold_seconds, progress=pages.append, reader=reader
        )
        seconds = time.perf_counter() - started
        sent = made.drain(made.queues.jobs_url)
        return {
            "result": result,
            "seconds": seconds,
            "pages": len(pages),
            "max_held": max(p["held"] for p in pages),
            "safe": len(safe),
            "sent": len(sent),
            "sent_each_safe_once": len(sent) == len(safe) and set(sent) == safe,
            "left": made.counters(made.queues.dlq_url),
        }
    finally:
        made.delete()


def run(
    progress: Callable[[str], None],
    messages: int = 10_000,
    in_flight_limit: int = 1_000,
    hold_seconds: int = 2,
) -> dict[str, Any]:
    import os

    from local.session import LocalSession, free_port

    load = [round(x, 2) for x in os.getloadavg()]

    session = LocalSession(Path(tempfile.mkdtemp(prefix="bench-dlq-")))
    progress(f"dlq: embedded AWS, {messages} dead letters behind an in-flight cap of {in_flight_limit}")
    session.start_emulator(free_port())
    try:
        unsafe = messages // 100
        found = redrive_at_scale(
            session,
            pending=messages - 4 * unsafe,
            stored=2 * unsafe,
            conflicts=unsafe,
            malformed=unsafe,
            in_flight_limit=in_flight_limit,
            hold_seconds=hold_seconds,
        )
    finally:
        session.stop_emulator()
    moved = sum(c["moved"] for c in found["result"]["counts"].values())
    progress(f"dlq: {moved} moved in {found['seconds']:.1f} s")
    return {
        "load_average_at_start": load,
        "messages": messages,
        "in_flight_limit": in_flight_limit,
        "hold_seconds": hold_seconds,
        "seconds": round(found["seconds"], 1),
        "per_second": round(messages / found["seconds"], 1),
        "moved": moved,
        "left": found["left"][0],
        "max_held": found["max_held"],
        "complete": found["result"]["complete"],
        "each_safe_message_once": found["sent_each_safe_once"],
    }


def render(result: dict[str, Any]) -> str:
    return (
        "**Redriving a deep DLQ** (`ops dlq redrive` against the embedded AWS on this machine; "
        f"{result['messages']:,} dead letters, in-flight cap {result['in_flight_limit']:,}, hold "
        f"{result['hold_seconds']} s; load average {result['load_average_at_start']} at the start)\n\n"
        "| moved | left (unsafe) | most held at once | seconds | messages/s | complete | each safe message sent once |\n"
        "|---|---|---|---|---|---|---|\n"
        f"| {result['moved']:,} | {result['left']:,} | {result['max_held']} | {result['seconds']} | "
        f"{result['per_second']} | {'yes' if result['complete'] else 'no'} | "
        f"{'yes' if result['each_safe_message_once'] else 'no'} |\n"
    )


def update_page(markdown: str) -> bool:
    from bench import report

    return report.update_page(markdown, begin=BLOCK_BEGIN, end=BLOCK_END)


if __name__ == "__main__":
    found = run(lambda message: print(f"bench: {message}", file=sys.stderr, flush=True))
    print(render(found))
    update_page(render(found))
