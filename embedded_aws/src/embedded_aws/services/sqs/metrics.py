"""AWS/SQS metrics for every queue moto holds, once per (scaled) minute, dimension QueueName.

Gauges come from one pass over each queue's messages with one clock reading (moto's own
attribute computation reads the clock per message and builds filtered lists per attribute).
NumberOfMessagesSent/Received/Deleted count SendMessage(Batch), ReceiveMessage and
DeleteMessage(Batch) calls since the previous sample; a message the redrive policy moves to a
dead-letter queue is not "sent" there, as on AWS. NumberOfEmptyReceives counts the ReceiveMessage
calls that returned no message: a long poll counts once, however long it waited.

ApproximateAgeOfOldestMessage follows SQS's two rules for it: in a dead-letter queue a message's
age counts from its move there, not its first send ("Setting-up dead-letter queue retention");
and in a standard queue a message received three or more times and not deleted is left out
("Available CloudWatch metrics for Amazon SQS"), so the age is the oldest of the others.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

from embedded_aws.services.cloudwatch.metrics import datum, publish
from embedded_aws.services.sqs import dead_letters

NAMESPACE = "AWS/SQS"
# The counted metrics (services/sqs/backend.py counts them as the calls happen).
SENT, RECEIVED, DELETED = "NumberOfMessagesSent", "NumberOfMessagesReceived", "NumberOfMessagesDeleted"
EMPTY_RECEIVES = "NumberOfEmptyReceives"  # "ReceiveMessage API calls that did not return a message"
COUNTERS = (SENT, RECEIVED, DELETED, EMPTY_RECEIVES)
RECEIVES_LEFT_OUT_OF_AGE = 3  # a standard queue's message received this often is not in the age


def gauges(messages: Iterable[Any], now_ms: float, fifo: bool = False) -> dict[str, float]:
    """Visible, in flight, delayed, and the age in seconds of the oldest message that counts
    towards it (0 if none)."""
    visible = not_visible = delayed = 0
    oldest = None
    for message in messages:
        if now_ms < message.delayed_until:
            delayed += 1
        elif now_ms <= message.visible_at:
            not_visible += 1
        else:
            visible += 1
        if not fifo and dead_letters.receives_here(message) >= RECEIVES_LEFT_OUT_OF_AGE:
            continue
        arrived = dead_letters.arrived_at_ms(message)
        if arrived is not None and (oldest is None or arrived < oldest):
            oldest = arrived
    return {
        "ApproximateNumberOfMessagesVisible": visible,
        "ApproximateNumberOfMessagesNotVisible": not_visible,
        "ApproximateNumberOfMessagesDelayed": delayed,
        "ApproximateAgeOfOldestMessage": max(int((now_ms - oldest) / 1000), 0) if oldest is not None else 0,
    }


UNITS = {"ApproximateAgeOfOldestMessage": "Seconds"}


class SqsMetrics:
    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str, str, str]] = Counter()  # (account, region, queue, metric)
        self._lock = threading.Lock()

    def count(self, backend: Any, queue_name: str, metric: str, amount: int = 1) -> None:
        if amount:
            with self._lock:
                self._counts[(backend.account_id, backend.region_name, queue_name, metric)] += amount

    def sample(self, now: float) -> None:
        from moto.sqs.models import sqs_backends

        with self._lock:
            counts, self._counts = self._counts, Counter()
        backends: list[tuple[str, str, Any]] = list(
            sqs_backends.iter_backends()
        )  # moto types them BaseBackend
        for account, region, backend in backends:
            data: list[dict[str, Any]] = []
            for queue in list(backend.queues.values()):
                values: dict[str, float] = gauges(
                    list(queue._messages), now * 1000, fifo=bool(queue.fifo_queue)
                )
                values.update({metric: counts[(account, region, queue.name, metric)] for metric in COUNTERS})
                data.extend(
                    datum(name, value, UNITS.get(name, "Count"), {"QueueName": queue.name}, now)
                    for name, value in values.items()
                )
            publish(account, region, NAMESPACE, data)
