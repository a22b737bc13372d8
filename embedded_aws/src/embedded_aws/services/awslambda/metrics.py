"""AWS/Lambda metrics for the local Lambda host, dimension FunctionName.

The host calls `record_invocation` when an invocation ends (and `record_throttle` for one it
refuses): Invocations, Errors and Duration are published at once, stamped with the invocation's
start (AWS stamps Errors with the invoke time). ConcurrentExecutions, the peak number of
overlapping invocations, is published per (scaled) minute by `flush`, half a minute after the
minute closed so invocations that were running then have ended; one still running at flush time
is not counted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from embedded_aws.credentials import ACCOUNT_ID
from embedded_aws.services.cloudwatch.metrics import datum, publish

NAMESPACE = "AWS/Lambda"
DEFAULT_REGION = "us-east-1"
MAX_SPANS = 10_000
Span = tuple[float, float]


def peak_concurrency(spans: Iterable[Span]) -> int:
    """The most spans (start, end) that overlap at one instant; one ending as another starts
    does not overlap it."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


class LambdaMetrics:
    def __init__(self) -> None:
        self._spans: dict[tuple[str, str, str], list[Span]] = {}
        self._lock = threading.Lock()

    def record_invocation(
        self,
        function_name: str,
        duration_ms: float,
        error: bool,
        *,
        region: str = DEFAULT_REGION,
        account_id: str = ACCOUNT_ID,
    ) -> None:
        end = time.time()
        start = end - duration_ms / 1000
        dimensions = {"FunctionName": function_name}
        publish(
            account_id,
            region,
            NAMESPACE,
            [
                datum("Invocations", 1, "Count", dimensions, start),
                datum("Errors", int(error), "Count", dimensions, start),
                datum("Duration", duration_ms, "Milliseconds", dimensions, start),
            ],
        )
        with self._lock:
            spans = self._spans.setdefault((account_id, region, function_name), [])
            spans.append((start, end))
            if len(spans) > MAX_SPANS:  # nobody flushes (no evaluator running): keep the newest
                del spans[: len(spans) // 2]

    def record_throttle(
        self, function_name: str, *, region: str = DEFAULT_REGION, account_id: str = ACCOUNT_ID
    ) -> None:
        publish(
            account_id,
            region,
            NAMESPACE,
            [datum("Throttles", 1, "Count", {"FunctionName": function_name}, time.time())],
        )

    def flush(self, start: float, end: float) -> None:
        """Publish ConcurrentExecutions for [start, end) and forget spans that ended before it."""
        with self._lock:
            current = {key: [s for s in spans if s[1] >= start] for key, spans in self._spans.items()}
            self._spans = {key: spans for key, spans in current.items() if spans}
        for (account_id, region, function_name), spans in current.items():
            inside = [(max(a, start), min(b, end)) for a, b in spans if a < end and b > start]
            if inside:
                publish(
                    account_id,
                    region,
                    NAMESPACE,
                    [
                        datum(
                            "ConcurrentExecutions",
                            peak_concurrency(inside),
                            "Count",
                            {"FunctionName": function_name},
                            (start + end) / 2,
                        )
                    ],
                )


LAMBDA_METRICS = LambdaMetrics()
record_invocation = LAMBDA_METRICS.record_invocation
record_throttle = LAMBDA_METRICS.record_throttle
