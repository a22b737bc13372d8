"""Embedded metric format: a log event that is an EMF JSON object becomes metric data, as
CloudWatch Logs extracts it on AWS ("Specification: Embedded metric format").

The event must be one JSON object whose `_aws` holds a millisecond `Timestamp` and
`CloudWatchMetrics` directives (Namespace, Dimensions: sets of root keys, Metrics: Name, Unit,
StorageResolution). Each dimension set makes a metric of its own; a value is a number or an
array of up to 100 numbers. Anything invalid leaves the event an ordinary log line: the
PutLogEvents caller never sees an error.

Every PutLogEvents also counts in AWS/Logs, dimension LogGroupName: IncomingLogEvents (events) and
IncomingBytes ("the volume of log events in uncompressed bytes uploaded": here each message's
UTF-8 bytes), as "CloudWatch Logs metrics" lists them.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from embedded_aws.compat.registry import T, declare

log = logging.getLogger("embedded_aws.cloudwatch")

UNITS = frozenset(
    {
        "Seconds",
        "Microseconds",
        "Milliseconds",
        "Bytes",
        "Kilobytes",
        "Megabytes",
        "Gigabytes",
        "Terabytes",
        "Bits",
        "Kilobits",
        "Megabits",
        "Gigabits",
        "Terabits",
        "Percent",
        "Count",
        "Bytes/Second",
        "Kilobytes/Second",
        "Megabytes/Second",
        "Gigabytes/Second",
        "Terabytes/Second",
        "Bits/Second",
        "Kilobits/Second",
        "Megabits/Second",
        "Gigabits/Second",
        "Terabits/Second",
        "Count/Second",
        "None",
    }
)
MAX_DIMENSIONS = 30
MAX_METRICS = 100
MAX_VALUES = 100
MAX_AGE_MS = 14 * 24 * 3600 * 1000  # CloudWatch takes datapoints up to two weeks old ...
MAX_AHEAD_MS = 2 * 3600 * 1000  # ... and two hours ahead


@dataclass(frozen=True)
class EmfMetric:
    namespace: str
    name: str
    dimensions: dict[str, str]
    values: list[float]
    unit: str | None
    timestamp_ms: int
    storage_resolution: int


class InvalidEmf(ValueError):
    pass


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise InvalidEmf(what)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _text(value: Any, limit: int = 1024) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= limit


def parse(message: str) -> list[EmfMetric]:
    """The metrics an EMF log event carries; raises InvalidEmf if it is not valid EMF."""
    try:
        root = json.loads(message)
    except ValueError:
        raise InvalidEmf("not JSON") from None
    _require(isinstance(root, dict) and isinstance(root.get("_aws"), dict), "no _aws object")
    meta = root["_aws"]
    timestamp = meta.get("Timestamp")
    _require(
        isinstance(timestamp, int) and not isinstance(timestamp, bool) and timestamp >= 0, "bad Timestamp"
    )
    directives = meta.get("CloudWatchMetrics")
    _require(isinstance(directives, list), "CloudWatchMetrics is not an array")
    metrics = []
    for directive in directives:
        _require(isinstance(directive, dict) and _text(directive.get("Namespace")), "bad Namespace")
        dimension_sets = directive.get("Dimensions")
        _require(isinstance(dimension_sets, list), "Dimensions is not an array")
        definitions = directive.get("Metrics")
        _require(isinstance(definitions, list) and len(definitions) <= MAX_METRICS, "bad Metrics")
        for keys in dimension_sets or [[]]:
            _require(isinstance(keys, list) and len(keys) <= MAX_DIMENSIONS, "bad dimension set")
            for key in keys:
                _require(
                    isinstance(key, str) and _text(root.get(key)), f"dimension {key!r} has no string value"
                )
        for definition in definitions:
            _require(isinstance(definition, dict) and _text(definition.get("Name")), "bad metric Name")
            name = definition["Name"]
            unit = definition.get("Unit")
            _require(unit is None or unit in UNITS, f"bad Unit {unit!r}")
            resolution = definition.get("StorageResolution", 60)
            _require(resolution in (1, 60) and not isinstance(resolution, bool), "bad StorageResolution")
            value = root.get(name)
            values = value if isinstance(value, list) else [value]
            _require(
                1 <= len(values) <= MAX_VALUES and all(_is_number(v) for v in values),
                f"bad value of {name!r}",
            )
            for keys in dimension_sets or [[]]:
                metrics.append(
                    EmfMetric(
                        directive["Namespace"],
                        name,
                        {k: root[k] for k in keys},
                        [float(v) for v in values],
                        unit,
                        timestamp,
                        int(resolution),
                    )
                )
    return metrics


def extract(message: str) -> list[EmfMetric]:
    """The metrics of a log event, or none if it is not (valid) EMF."""
    text = message.strip()
    if not text.startswith("{") or '"_aws"' not in text:
        return []
    try:
        return parse(text)
    except InvalidEmf:
        return []


def publish(account_id: str, region: str, metrics: list[EmfMetric], now_ms: int) -> None:
    from embedded_aws.services.cloudwatch.metrics import datum
    from embedded_aws.services.cloudwatch.metrics import publish as put

    for metric in metrics:
        if not now_ms - MAX_AGE_MS <= metric.timestamp_ms <= now_ms + MAX_AHEAD_MS:
            continue
        value: float | list[float] = metric.values if len(metric.values) > 1 else metric.values[0]
        put(
            account_id,
            region,
            metric.namespace,
            [datum(metric.name, value, metric.unit, metric.dimensions, metric.timestamp_ms / 1000)],
        )


def ingestion(log_group_name: str, log_events: list[dict[str, Any]], now_ms: int) -> list[Any]:
    """The AWS/Logs data of one PutLogEvents: its events and their bytes, for its log group."""
    from embedded_aws.services.cloudwatch.metrics import datum

    dimensions, at = {"LogGroupName": log_group_name}, now_ms / 1000
    size = sum(len(str(event.get("message", "")).encode()) for event in log_events)
    return [
        datum("IncomingLogEvents", len(log_events), "None", dimensions, at),
        datum("IncomingBytes", size, "Bytes", dimensions, at),
    ]


@declare(
    "logs.embedded-metric-format",
    "EMF log events become metric data, and each PutLogEvents counts in IncomingBytes and"
    " IncomingLogEvents, as CloudWatch Logs does",
    T(
        "moto.logs.models:LogsBackend.put_log_events",
        "self",
        "log_group_name",
        "log_stream_name",
        "log_events",
    ),
    fixes_moto="Logs does not extract embedded-metric-format metrics nor publish AWS/Logs metrics",
)
def patch_emf() -> None:
    """After moto has stored a PutLogEvents' events: count them in AWS/Logs, and extract EMF from
    each. Neither ever fails the caller."""
    from moto.logs.models import LogsBackend

    from embedded_aws.services.cloudwatch.metrics import publish as put

    put_log_events = LogsBackend.put_log_events

    def put_log_events_with_emf(
        backend: Any, log_group_name: str, log_stream_name: str, log_events: list[dict[str, Any]]
    ) -> Any:
        result = put_log_events(backend, log_group_name, log_stream_name, log_events)
        try:
            now_ms = int(time.time() * 1000)
            put(
                backend.account_id,
                backend.region_name,
                "AWS/Logs",
                ingestion(log_group_name, log_events, now_ms),
            )
            for event in log_events:
                if now_ms - MAX_AGE_MS <= event["timestamp"] <= now_ms + MAX_AHEAD_MS:
                    publish(backend.account_id, backend.region_name, extract(event["message"]), now_ms)
        except Exception:  # metric extraction never fails the caller
            log.exception("AWS/Logs metrics or EMF extraction failed for %s", log_group_name)
        return result

    LogsBackend.put_log_events = put_log_events_with_emf  # type: ignore[assignment]  # our replacement's own signature; registry.py checks moto's parameters
