"""GetMetricData for metric-stat queries, answered from the per-metric index (metrics.py).

moto answers each query by filtering every datapoint of the region once per period of the
range: the live view's hour of seven metrics at one-minute periods scanned the whole list
hundreds of times per call, seconds of the emulator's time as the list grew. Here each query
reads its own metric's points once and buckets them. Expression queries (metric math, Metrics
Insights) still go to moto.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from typing import Any

from embedded_aws.compat.registry import T, declare, install
from embedded_aws.services.cloudwatch.alarm_rules import statistic
from embedded_aws.services.cloudwatch.metrics import MetricIndex, epoch, metric_key, naive_utc


def rounded_start(start: float, period: int, now: float) -> float:
    """GetMetricData's StartTime as CloudWatch rounds it (API reference, GetMetricData, StartTime):
    down to the whole minute when less than 15 days ago, to 5 minutes up to 63 days, to the hour
    beyond; a period of 5, 10, 20 or 30 s rounds down to that division of a minute. moto starts
    its periods at the time as given, so a query at 12:32:34 bucketed 12:31:34-12:32:34."""
    if period < 60:
        step = period if period in (5, 10, 20, 30) else 1
    else:
        age = now - start
        step = 60 if age < 15 * 86_400 else 300 if age < 63 * 86_400 else 3600
    return start // step * step


def metric_data(
    index: MetricIndex,
    queries: list[dict[str, Any]],
    start: datetime,
    end: datetime,
    scan_by: str = "TimestampAscending",
    now: float | None = None,
) -> list[dict[str, Any]]:
    """moto's result shape: per returned query, id, label, values, timestamps, status_code.
    Periods start at CloudWatch's rounding of `start` and step by the query's Period."""
    index.sync()
    requested, finish = epoch(start.replace(microsecond=0)), epoch(end.replace(microsecond=0))
    now = time.time() if now is None else now
    results = []
    for query in queries:
        stat = query["MetricStat"]
        metric, period, name = stat["Metric"], int(stat["Period"]), stat["Stat"]
        begin = rounded_start(requested, period, now)
        key = metric_key(
            metric["Namespace"],
            metric["MetricName"],
            ((d["Name"], d["Value"]) for d in metric.get("Dimensions", [])),
        )
        buckets: dict[float, tuple[list[float], list[tuple[float, float, float, float]]]] = defaultdict(
            lambda: ([], [])
        )
        for point in index.points(key, begin, finish + period, stat.get("Unit")):
            bucket = begin + (point.time - begin) // period * period
            if bucket > finish:
                continue
            values, aggregates = buckets[bucket]
            if point.aggregate is not None:
                aggregates.append(point.aggregate)
            elif point.value is not None:  # always, for a Point without an aggregate
                values.append(point.value)
        series = [(bucket, statistic(name, *buckets[bucket])) for bucket in sorted(buckets)]
        series = [(bucket, value) for bucket, value in series if value is not None]
        if scan_by == "TimestampDescending":
            series.reverse()
        if query.get("ReturnData", True):
            results.append(
                {
                    "id": query["Id"],
                    "label": query.get("Label") or f"{metric['MetricName']} {name}",
                    "values": [value for _, value in series],
                    "timestamps": [naive_utc(bucket) for bucket, _ in series],
                    "status_code": "Complete",
                }
            )
    return results


@declare(
    "cloudwatch.metric-queries",
    "GetMetricData reads one metric's points, not every point per period",
    T(
        "moto.cloudwatch.models:CloudWatchBackend.get_metric_data",
        "self",
        "queries",
        "start_time",
        "end_time",
        "scan_by",
    ),
    uses=("cloudwatch.evaluator.index",),
)
def patch_metric_queries(index_of: Callable[[Any], MetricIndex]) -> None:
    """Answer metric-stat-only GetMetricData calls from `index_of(backend)`."""
    from moto.cloudwatch.models import CloudWatchBackend

    original = CloudWatchBackend.get_metric_data

    def get_metric_data(
        self: Any,
        queries: list[dict[str, Any]],
        start_time: datetime,
        end_time: datetime,
        scan_by: str = "TimestampAscending",
    ) -> list[dict[str, Any]]:
        if not queries or any("MetricStat" not in query for query in queries) or start_time >= end_time:
            return original(self, queries, start_time, end_time, scan_by)  # expressions, and moto's errors
        return metric_data(index_of(self), queries, start_time, end_time, scan_by)

    install(CloudWatchBackend, "get_metric_data", get_metric_data)
