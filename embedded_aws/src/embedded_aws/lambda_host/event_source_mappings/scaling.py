"""How many batches of one SQS event source mapping the local Lambda host runs at once.

AWS ("Configuring scaling behavior for SQS event source mappings", services-sqs-scaling.html):
polling starts with five concurrent batches; while messages remain, Lambda adds up to 300
concurrent invocations a minute, up to 1,250 per mapping or the account's concurrency; with
low traffic it scales back. ScalingConfig.MaximumConcurrency caps a mapping, and a function's
reserved concurrency caps all its invocations.

Locally the same rule, with a cap of LOCAL_MAX_CONCURRENCY instead of 1,250: the host runs each
concurrent invocation in a sandbox process of its own (about 50 MB), on a two-core machine that
also runs the embedded AWS, the real bottleneck (one Python process serving every request).
Twenty bounds what one mapping can start to about 1 GB and more CPU demand than two cores can
serve, while a MaximumConcurrency or reserved concurrency up to 20 is
still honoured exactly.
"""

from __future__ import annotations

import os
import threading

INITIAL_BATCHES = 5  # the Lambda service starts an SQS mapping with five concurrent batches
# AWS: 1,250 per mapping; see the module docstring. LOCAL_LAMBDA_MAX_CONCURRENCY overrides it.
LOCAL_MAX_CONCURRENCY = int(os.environ.get("LOCAL_LAMBDA_MAX_CONCURRENCY") or 20)
SCALE_UP_SECONDS = 60 / 300  # up to 300 more concurrent invocations a minute: one per 0.2 s


def concurrency_limit(
    maximum_concurrency: int | None, reserved_concurrency: int | None, cap: int = LOCAL_MAX_CONCURRENCY
) -> int:
    """The most batches a mapping may run at once: the local cap, the mapping's
    MaximumConcurrency and the function's reserved concurrency, whichever is lowest. Reserved
    concurrency 0 does not stop polling: every invocation is throttled instead (see the poller)."""
    limit = cap
    if maximum_concurrency:
        limit = min(limit, int(maximum_concurrency))
    if reserved_concurrency:
        limit = min(limit, int(reserved_concurrency))
    return max(limit, 1)


class Scaling:
    """The number of pollers of one mapping, decided from what their receives return. Thread-safe;
    `now` is passed in so the rule can be tested without waiting."""

    def __init__(self, initial: int = INITIAL_BATCHES, step_seconds: float = SCALE_UP_SECONDS) -> None:
        self.initial = initial
        self.step_seconds = step_seconds
        self.active = 0
        self._added_at = float("-inf")
        self._lock = threading.Lock()

    def floor(self, limit: int) -> int:
        """How many pollers run even when the queue is idle."""
        return min(self.initial, limit)

    def start(self, limit: int) -> int:
        """How many pollers to add now to reach the floor (at start, or after a limit was raised);
        they count as active at once."""
        with self._lock:
            missing = max(self.floor(limit) - self.active, 0)
            self.active += missing
            return missing

    def after_receive(self, received: int, batch_size: int, limit: int, now: float) -> bool:
        """A full batch means messages remain: add a poller, at most one per step, up to the
        limit. True if the caller should start one (already counted as active)."""
        with self._lock:
            if received >= batch_size and self.active < limit and now - self._added_at >= self.step_seconds:
                self._added_at = now
                self.active += 1
                return True
            return False

    def retire(self, empty: bool, limit: int) -> bool:
        """Whether the calling poller stops now (and is no longer counted): always while more run
        than the limit allows (it was lowered); after an empty receive, while more run than the
        floor (scaling back when idle)."""
        with self._lock:
            if self.active > limit or (empty and self.active > self.floor(limit)):
                self.active -= 1
                return True
            return False

    def stopped(self) -> None:
        """A poller ended for another reason (the mapping was stopped, an error)."""
        with self._lock:
            self.active = max(self.active - 1, 0)
