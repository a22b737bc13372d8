"""The sum of one metric's recent data, as the tests of the metrics the embedded AWS publishes read it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any


def recent_sum(cloudwatch: Any, namespace: str, metric: str, dimensions: dict[str, str]) -> float:
    """Sum over the last ten minutes (and the next one: a datum stamped a moment ahead counts)."""
    now = datetime.now(UTC)
    points = cloudwatch.get_metric_statistics(
        Namespace=namespace,
        MetricName=metric,
        Dimensions=[{"Name": name, "Value": value} for name, value in dimensions.items()],
        StartTime=now - timedelta(minutes=10),
        EndTime=now + timedelta(minutes=1),
        Period=3600,
        Statistics=["Sum"],
    )["Datapoints"]
    return float(sum(point["Sum"] for point in points))
