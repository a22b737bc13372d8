"""Shared by the reliability modules (test_reliability_*.py): one deployed consumer with the clients
to look at it, and generated malformed bodies (the conservation run's mix: tests/e2e/conservation.py).

The promise they measure: every order is written exactly once or kept in the dead-letter queue;
nothing lost, nothing written twice, nothing acknowledged that should not be.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from local.session import LocalSession, wait_for
from ops import observe
from tests.shared_aws import FAST_TIMEOUTS, SharedAWS
from tests.strategies import malformed_bodies, sqs_sendable

# Each record starts only with a whole write attempt (1.4 s) left, so on an emulator busy with the
# rest of the suite a 2 s function can run out of time for the last records of a batch of ten
# (they fail and come back, as designed, but then the test's prediction would not hold), and a
# starved sandbox can overrun even one record's attempt (one timeout in 1,000 invocations at
# batch size 1, seen once in a fresh clone's .ci/run). 3 s leaves room for ten slow writes.
BATCH_TIMEOUTS = {"function_timeout_seconds": "3", "visibility_timeout_seconds": "18"}
SETTLE_SECONDS = 300  # a deadline, not a wait
# A message reaches the DLQ after maxReceiveCount receives, one visibility timeout apart, so that
# product is the floor of every test that waits for dead letters. Tests that count where each
# message ends (bad input, conflicts, DLQ recovery; conservation takes three) deploy with two
# receives: the outcome is the same as with five, in one visibility timeout instead of four. The
# default five is pinned in the template (tests/infra/test_template.py), and the redrive at a
# given count by the conformance tests against AWS's recordings.
TWO_RECEIVES = {"max_receive_count": "2", "target": "local"}  # below AWS's advice: tests only
# The five pollers AWS starts a mapping with, each able to invoke at once: the races need them.
FIVE_POLLERS = {"max_concurrency": "5"}


@dataclass
class RunLog:
    """The worker's lines since a time, split by whether their invocation returned. An invocation
    that did not (a timeout on a saturated machine) had none of its records deleted: SQS delivers
    each again, so its RESULT lines acknowledged nothing, and a write it made is an order's first
    write that a later delivery acknowledges as a duplicate."""

    returned: list[observe.LogRecord] = field(default_factory=list)
    cut: list[observe.LogRecord] = field(default_factory=list)
    ends: Counter[str] = field(default_factory=Counter)  # invocations that did not return, by status

    def of(self, tag: str) -> list[observe.LogRecord]:
        return [r for r in self.returned if r.tag == tag]

    @classmethod
    def read(cls, logs: object, log_group: str, since: int) -> RunLog:
        """Lambda writes an invocation's lines together, START to REPORT, in its sandbox's stream;
        a REPORT with a Status ends an invocation that did not return."""
        run = cls()
        pending: dict[str, list[observe.LogRecord]] = {}
        for event in observe.log_events(logs, log_group, since):
            stream, message = event.get("logStreamName", ""), event["message"]
            if message.startswith("START RequestId:"):
                pending[stream] = []
            elif message.startswith("REPORT RequestId:"):
                records = pending.pop(stream, [])
                if (status := observe.report_status(message)) is not None:
                    run.ends[status] += 1
                    run.cut += records
                else:
                    run.returned += records
            elif record := observe.parse_record(event):
                pending.setdefault(stream, []).append(record)
        for records in pending.values():
            run.returned += records
        run.returned.sort(key=lambda record: record.timestamp)
        return run


class Stack:
    """One deployed consumer and the clients to look at it."""

    def __init__(self, session: LocalSession) -> None:
        self.session = session
        self.env = session.user_env()
        self.sqs = session.client("sqs")
        self.dynamodb = session.client("dynamodb")
        self.logs = session.client("logs")

    def send(self, bodies: list[str]) -> None:
        """Send in batches of up to 10 and under 200 kB, in the given order."""
        batch: list[str] = []
        for body in [*bodies, None]:
            full = body is None or len(batch) == 10 or sum(map(len, batch)) + len(body) > 200_000
            if batch and full:
                response = self.sqs.send_message_batch(
                    QueueUrl=self.env["QUEUE_URL"],
                    Entries=[{"Id": str(i), "MessageBody": text} for i, text in enumerate(batch)],
                )
                assert not response.get("Failed"), response["Failed"]
                batch = []
            if body is not None:
                batch.append(body)

    def settled(self) -> bool:
        counters = observe.queue_counters(self.sqs, self.env["QUEUE_URL"])
        return counters == {"visible": 0, "in_flight": 0, "delayed": 0}

    def wait_settled(self) -> None:
        wait_for(self.settled, timeout=SETTLE_SECONDS, interval=0.5, what="the jobs queue to drain")

    def take_dead_letters(self) -> list[str]:
        """Every body in the DLQ, removed so the next test starts from an empty DLQ."""
        url = self.env["DLQ_URL"]
        bodies: list[str] = []
        while True:
            messages = self.sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=120
            ).get("Messages", [])
            if not messages:
                return bodies
            bodies += [m["Body"] for m in messages]
            self.sqs.delete_message_batch(
                QueueUrl=url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
            )

    def records(self, since: int, tag: str) -> list[observe.LogRecord]:
        return [r for r in observe.log_records(self.logs, self.env["LOG_GROUP"], since) if r.tag == tag]

    def run_log(self, since: int) -> RunLog:
        return RunLog.read(self.logs, self.env["LOG_GROUP"], since)

    def assert_no_abnormal_ends(self, since: int) -> None:
        """Exact counts below assume every invocation returned; a timeout (a machine too loaded
        for the 3 s function timeout) is reported as such instead of as a count mismatch."""
        ends = observe.abnormal_ends(self.logs, self.env["LOG_GROUP"], since)
        assert ends == Counter(), f"invocations that did not return, by status: {dict(ends)}"

    def items(self, id_prefix: str) -> dict[str, dict]:
        return {
            item["id"]: item
            for item in observe.scan_items(self.dynamodb, self.env["ORDERS_TABLE"])
            if str(item["id"]).startswith(id_prefix)
        }


@contextmanager
def deployed(
    shared_aws: SharedAWS,
    prefix: str,
    batch_size: int,
    workdir: Path,
    timeouts: dict[str, str] = FAST_TIMEOUTS,
) -> Iterator[Stack]:
    """The real stack under `prefix` at `batch_size`, with short local timeouts."""
    context = {**timeouts, "prefix": prefix, "batch_size": str(batch_size)}
    with shared_aws.stack(context, workdir) as session:
        yield Stack(session)


def now_ms() -> int:
    return int(time.time() * 1000) - 1000


def generated_bodies(count: int) -> list[str]:
    """`count` malformed bodies SQS can carry, the same ones on every run."""
    bodies: list[str] = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(body=malformed_bodies().filter(sqs_sendable))
    def collect(body: str) -> None:
        bodies.append(body)

    collect()
    return bodies
