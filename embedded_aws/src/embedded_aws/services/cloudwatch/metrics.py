"""Metric data in moto's CloudWatch backend: publishing datapoints, and reading them back per
metric without scanning everything.

moto keeps every datapoint of a region in one append-only list. `MetricIndex` reads only what
was appended since its last look and files it per metric (namespace, name, exact dimension set),
so evaluating an alarm touches that metric's points only. It also bounds the list: points older
than RETENTION_SECONDS are dropped (AWS keeps 15 days; a local run needs hours at most).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

RETENTION_SECONDS = 3 * 3600

MetricKey = tuple[str, str, tuple[tuple[str, str], ...]]


def metric_key(namespace: str, name: str, dimensions: Iterable[tuple[str, str]]) -> MetricKey:
    return namespace, name, tuple(sorted(dimensions))


def epoch(moment: datetime) -> float:
    """moto stores naive UTC datetimes (and aware ones when a caller passed them)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def naive_utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class Point:
    time: float
    value: float | None  # a single value, or
    aggregate: tuple[float, float, float, float] | None  # (sum, minimum, maximum, sample count)
    unit: str | None


def _point(datum: Any) -> Point:
    if hasattr(datum, "value"):
        return Point(epoch(datum.timestamp), float(datum.value), None, datum.unit)
    return Point(
        epoch(datum.timestamp), None, (datum.sum, datum.min, datum.max, datum.sample_count), datum.unit
    )


class MetricIndex:
    """The points of one CloudWatch backend (account and region), by metric."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self._data: list[Any] = backend.metric_data
        self._seen = 0
        self._series: dict[MetricKey, list[Point]] = defaultdict(list)
        # The evaluator's thread and GetMetricData's request threads share one index.
        self._lock = threading.RLock()

    def sync(self) -> None:
        with self._lock:
            self._sync()

    def _sync(self) -> None:
        data = self.backend.metric_data
        if data is not self._data:  # the backend was reset
            self._data, self._seen, self._series = data, 0, defaultdict(list)
        fresh = data[self._seen :]  # one slice: appends by request threads are atomic
        self._seen += len(fresh)
        for datum in fresh:
            key = metric_key(datum.namespace, datum.name, ((d.name, d.value) for d in datum.dimensions))
            self._series[key].append(_point(datum))

    def points(self, key: MetricKey, start: float, end: float, unit: str | None = None) -> list[Point]:
        with self._lock:
            return [
                p
                for p in self._series.get(key, ())
                if start <= p.time < end and (unit is None or p.unit == unit)
            ]

    def prune(self, now: float, retention: float = RETENTION_SECONDS) -> int:
        """Drop points older than `retention`: the leading ones of moto's list (it is in arrival
        order, which tracks time), and every old one of the index. Returns how many moto lost."""
        with self._lock:
            return self._prune(now, retention)

    def _prune(self, now: float, retention: float) -> int:
        self._sync()
        cutoff = now - retention
        stale = 0
        for datum in self._data[: self._seen]:
            if epoch(datum.timestamp) >= cutoff:
                break
            stale += 1
        if stale:
            del self._data[:stale]  # one slice deletion: atomic like the appends
            self._seen -= stale
        for key in list(self._series):
            kept = [p for p in self._series[key] if p.time >= cutoff]
            if kept:
                self._series[key] = kept
            else:
                del self._series[key]
        return stale


def publish(account_id: str, region: str, namespace: str, data: list[dict[str, Any]]) -> None:
    """PutMetricData into moto's backend, in-process (what a service does on AWS)."""
    from moto.cloudwatch.models import cloudwatch_backends

    if data:
        cloudwatch_backends[account_id][region].put_metric_data(namespace, data)


def datum(
    name: str, value: float | list[float], unit: str | None, dimensions: dict[str, str], when: float
) -> dict[str, Any]:
    """One MetricData member as PutMetricData takes it."""
    member: dict[str, Any] = {
        "MetricName": name,
        "Timestamp": naive_utc(when),
        "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
    }
    if isinstance(value, list):
        member["Values"] = [float(v) for v in value]
    else:
        member["Value"] = float(value)
    if unit:
        member["Unit"] = unit
    return member
