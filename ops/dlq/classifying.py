"""Each dead letter classified against the orders table with the worker's own parser and
duplicate rule (its handler, a guarded_consumer.GuardedHandler), and the listing of a queue's
letters by class:

- `pending`: a valid job whose id is not stored. It failed for a passing reason (throttling, an
  outage, a timeout); sent back, the worker writes it.
- `stored`: a valid job whose order is already stored, and kept at least as long as a copy of
  this dead letter can still reach the worker. Sent back, the worker acknowledges it as a duplicate.
- `lapsing`: a valid job whose order is stored, but with an `expires_at` (order_retention_days)
  that comes before a copy of it, sent back at the end of its DLQ life, could stop arriving: it
  could then be written again as a new order. Never sent back automatically; its order is stored,
  so discarding it loses nothing. A copy can arrive until its first send, plus its life in the DLQ
  (the DLQ's retention from that send on a standard queue; on a FIFO queue from its move, which
  comes at most a jobs retention after the send: "Setting-up dead-letter queue retention"), plus a
  full jobs retention once sent back (a new message on either queue type). That is the
  stack's order_retention_days floor (stacks/config.py) counted from this letter's send.
- `conflict`: a valid job whose id is stored with other details. Never sent back automatically.
- `malformed`: the worker's parser rejects it. Never sent back.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guarded_consumer import GuardedHandler, InvalidBody, write_guard
from guarded_consumer.contract import EXPIRES_AT_FIELD, ID_FIELD, Decision
from ops.dlq.letters import DeadLetter, DlqError, LetterClass, batches_of
from ops.dlq.reading import HOLD_SECONDS, DeadLetterReader
from stacks.lambda_code import LAMBDA_SOURCE, load_handler

CLASSES = tuple(LetterClass)
SAFE_CLASSES = (LetterClass.PENDING, LetterClass.STORED)  # sent back by a redrive
LIST_LIMIT = 1000  # messages a listing reads and holds at most
# BatchGetItem's unprocessed keys: retried with exponential backoff, as its API reference advises.
BATCH_GET_TRIES = 8
BACKOFF_SECONDS, BACKOFF_CAP_SECONDS = 0.05, 2.0


@dataclass(frozen=True)
class Judge:
    """How the deployed worker reads a body and which attribute keys its table: its handler's
    (a guarded_consumer.GuardedHandler), so a dead letter is classified as the worker decides."""

    parse: Callable[[Any], write_guard.Guarded]
    key_attribute: str


def judge_of(handler: Path | None = None) -> Judge:
    """The judge of the handler in `handler/app.py`; the lab's worker (lambda/worker) by default."""
    directory = handler or LAMBDA_SOURCE / "worker"
    if not (directory / "app.py").is_file():
        raise DlqError(f"--handler {directory}: no app.py there (give the directory of the worker's handler)")
    found = getattr(load_handler(directory), "handler", None)
    if not isinstance(found, GuardedHandler):
        raise DlqError(
            f"--handler {directory}: its app.py's `handler` is not a guarded_consumer.GuardedHandler, "
            "so its bodies cannot be judged as the worker judges them"
        )
    return Judge(found.parse, found.key_attribute)


def stored_orders(
    dynamodb: Any,
    table: str,
    ids: Iterable[str],
    sleep: Callable[[float], None] = time.sleep,
    key_attribute: str = ID_FIELD,
) -> dict[str, dict[str, Any]]:
    """The stored items of these keys (strongly consistent), by key. Keys DynamoDB leaves
    unprocessed are asked for again after an exponentially growing, jittered pause (BatchGetItem
    API reference: "we strongly recommend that you use an exponential backoff algorithm")."""
    found: dict[str, dict[str, Any]] = {}
    for batch in batches_of(sorted(set(ids)), 100):
        request: dict[str, Any] = {
            table: {"Keys": [{key_attribute: {"S": key}} for key in batch], "ConsistentRead": True}
        }
        for attempt in range(BATCH_GET_TRIES):
            if attempt:
                sleep(random.uniform(0.5, 1.0) * min(BACKOFF_CAP_SECONDS, BACKOFF_SECONDS * 2**attempt))  # noqa: S311  backoff jitter, not a secret
            response = dynamodb.batch_get_item(RequestItems=request)
            for attributes in response.get("Responses", {}).get(table, []):
                item = write_guard.item_from_attributes(attributes)
                found[str(item[key_attribute])] = item
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
        else:
            left = len(request.get(table, {}).get("Keys", []))
            raise DlqError(
                f"DynamoDB left {left} order id(s) of {table} unprocessed after {BATCH_GET_TRIES} tries "
                "(its read capacity is exhausted): run again later"
            )
    return found


@dataclass(frozen=True)
class Lifetime:
    """How long a copy of a dead letter can still reach the worker, from the queues' retentions."""

    fifo: bool
    job_retention_seconds: int
    dead_letter_retention_seconds: int

    def arrives_until_ms(self, sent_ms: int) -> int:
        """The latest a copy of a dead letter first sent at `sent_ms` can reach the worker: its
        DLQ life ends at its send plus the DLQ's retention (standard), or at its move plus that
        (FIFO; the move comes at most a jobs retention after the send); sent back then, a new
        message waits up to the jobs retention."""
        dlq_life = self.dead_letter_retention_seconds + (self.job_retention_seconds if self.fifo else 0)
        return sent_ms + (dlq_life + self.job_retention_seconds) * 1000


def lifetime_of(sqs: Any, queues: Queues) -> Lifetime:
    def retention(url: str) -> int:
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["MessageRetentionPeriod"])
        return int(attributes["Attributes"]["MessageRetentionPeriod"])

    return Lifetime(queues.dlq_url.endswith(".fifo"), retention(queues.jobs_url), retention(queues.dlq_url))


def _when(epoch_ms: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch_ms / 1000))


def classify(
    letters: list[DeadLetter],
    lookup: Callable[[Iterable[str]], dict[str, dict[str, Any]]],
    lifetime: Callable[[], Lifetime] | None = None,
    judge: Judge | None = None,
) -> None:
    """Set each letter's class and reason, as the worker would decide it now; a duplicate whose
    stored order expires before a copy of the letter could stop arriving is `lapsing`
    (`lifetime` is asked only then). `judge`: the worker's parser (the lab's by default)."""
    parse = (judge or judge_of()).parse
    jobs = {}
    for letter in letters:
        try:
            jobs[letter.message_id] = parse(letter.body)
        except InvalidBody as error:
            letter.kind, letter.reason = LetterClass.MALFORMED, str(error)
    stored = lookup(job.key for job in jobs.values())
    for letter in letters:
        job = jobs.get(letter.message_id)
        if job is None:
            continue
        letter.order_id, letter.requested, letter.stored = job.key, job.item(), stored.get(job.key)
        try:
            outcome = write_guard.decide(job, letter.stored)
        except write_guard.ConflictingOrder as conflict:
            letter.kind, letter.reason = LetterClass.CONFLICT, str(conflict)
            continue
        if outcome.decision == Decision.WRITTEN:
            letter.kind, letter.reason = LetterClass.PENDING, "not stored yet: a redrive writes it"
            continue
        letter.kind = LetterClass.STORED
        letter.reason = "already stored: a redrive is acknowledged as a duplicate"
        expires_at = (letter.stored or {}).get(EXPIRES_AT_FIELD)
        if expires_at is None or lifetime is None:
            continue
        until = lifetime().arrives_until_ms(letter.sent_ms or int(time.time() * 1000))
        if int(expires_at) * 1000 <= until:
            letter.kind = LetterClass.LAPSING
            letter.reason = (
                f"stored until {_when(int(expires_at) * 1000)}, but a copy sent back can still arrive until "
                f"{_when(until)} and be written again as a new order: discard it (its order is stored)"
            )


def counts(letters: Iterable[DeadLetter]) -> dict[str, int]:
    found = Counter(letter.kind for letter in letters)
    return {kind: found.get(kind, 0) for kind in CLASSES}


@dataclass(frozen=True)
class Queues:
    """Where the DLQ's messages come from and go back to, and what judges them."""

    dlq_url: str
    jobs_url: str
    orders_table: str
    audit_log_group: str
    judge: Judge = field(default_factory=judge_of)  # the lab's worker's by default


def order_lookup(clients: Any, queues: Queues) -> Callable[[Iterable[str]], dict[str, dict[str, Any]]]:
    key = queues.judge.key_attribute
    return lambda ids: stored_orders(clients.client("dynamodb"), queues.orders_table, ids, key_attribute=key)


def read_lifetime(clients: Any, queues: Queues) -> Callable[[], Lifetime]:
    """The queues' retentions, read once, when a stored order with an expiry is first met."""
    found: list[Lifetime] = []

    def read() -> Lifetime:
        if not found:
            found.append(lifetime_of(clients.client("sqs"), queues))
        return found[0]

    return read


def listing(
    clients: Any,
    queues: Queues,
    limit: int = LIST_LIMIT,
    hold_seconds: int = HOLD_SECONDS,
    reader: Callable[..., DeadLetterReader] = DeadLetterReader,
) -> dict[str, Any]:
    """At most `limit` DLQ messages, classified: {"messages", "counts", "complete", "reading"}.
    `counts` are exact for the whole queue when `complete`; otherwise they are those of the
    messages read, and `reading` has SQS's approximate count of the rest."""
    if limit < 1:
        raise DlqError(f"--limit must be at least 1, got {limit}")
    letters: list[DeadLetter] = []
    with reader(clients.client("sqs"), queues.dlq_url, hold_seconds) as source:
        for page in source.pages():
            letters += page
            if len(letters) >= limit:
                break
        classify(letters, order_lookup(clients, queues), read_lifetime(clients, queues), queues.judge)
        visible, elsewhere = source.visible_and_elsewhere()
        complete = (source.reached_end or visible == 0) and elsewhere == 0 and not source.stopped
    now_ms = int(time.time() * 1000)
    letters.sort(key=lambda letter: (letter.sent_ms or 0, letter.message_id))
    return {
        "messages": [letter.as_json(now_ms) for letter in letters],
        "counts": counts(letters),
        "complete": complete,
        "reading": {
            "read": len(letters),
            "visible_after": visible,
            "in_flight_elsewhere": elsewhere,
            "stopped": source.stopped,
        },
    }
