"""What a consumer's measured units cost at AWS's list prices (ops/prices.json): arithmetic only,
no AWS calls, so `python -m ops cost` and the benchmarks price the same units the same way.

The units are the ones AWS bills: SQS requests (each 64 KB chunk of a request's payload is one;
a FIFO queue's at the FIFO rate), Lambda invocations and GB-seconds of billed duration (rounded up to the millisecond, memory in
GB = MB / 1024), DynamoDB on-demand write and read request units, bytes ingested into CloudWatch
Logs, and custom metric-hours (CloudWatch prorates a metric-month by the hour). Free tiers are
left out: they are per account, not per order.

Apart from those, what a deployment costs a month whatever its orders (`fixed_monthly`): its
alarms' metrics, its dashboard, and its custom metrics were each sent every hour; counted from
the stack's template (`template_fixed_units`) and the worker's metrics lines (`custom_metrics`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRICES_FILE = Path(__file__).with_name("prices.json")
SQS_CHUNK_BYTES = 64 * 1024
GB_BYTES = 1024**3
# CloudWatch's pricing examples count a month as 730 hours when they prorate a metric-month.
HOURS_PER_MONTH = 730
ARCHITECTURES = ("arm64", "x86_64")
SERVICES = ("sqs", "lambda", "dynamodb", "logs", "metrics")
PRICE_KEYS = {
    "sqs_request": "sqs_standard_requests_per_million",
    "sqs_fifo_request": "sqs_fifo_requests_per_million",
    "lambda_request": "lambda_requests_per_million",
    "gb_second_arm64": "lambda_gb_second_arm64",
    "gb_second_x86_64": "lambda_gb_second_x86_64",
    "write_unit": "dynamodb_on_demand_write_request_units_per_million",
    "read_unit": "dynamodb_on_demand_read_request_units_per_million",
    "log_gb": "logs_ingestion_standard_per_gb",
    "metric_month": "custom_metrics_per_metric_month",
    "alarm_metric_month": "alarm_metrics_standard_per_alarm_metric_month",
    "dashboard_month": "dashboards_per_dashboard_month",
}
PER_MILLION = {"sqs_request", "sqs_fifo_request", "lambda_request", "write_unit", "read_unit"}
# What the fixed costs are made of, in the order reports show them.
FIXED_ITEMS = ("alarms", "dashboards", "custom_metrics")
# CloudWatch bills an alarm whose period is under a minute at the high-resolution rate.
STANDARD_ALARM_PERIOD_SECONDS = 60


class PriceError(ValueError):
    """The price file is missing, unreadable or lacks a figure; the message names which."""


@dataclass(frozen=True)
class Prices:
    """Dollars per single unit (per request, per GB-second, per byte...), and where they came from."""

    region: str
    as_of: str
    sqs_request: float
    sqs_fifo_request: float
    lambda_request: float
    gb_second: Mapping[str, float]
    write_unit: float
    read_unit: float
    log_byte: float
    metric_hour: float
    metric_month: float
    alarm_metric_month: float
    dashboard_month: float
    statuses: Mapping[str, str]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Prices:
        try:
            figures = data["prices"]
            region, as_of = str(data["region"]), str(data["as_of"])
        except (KeyError, TypeError) as error:
            raise PriceError(f"price file has no {error}") from None
        usd: dict[str, float] = {}
        for name, key in PRICE_KEYS.items():
            value = figures.get(key, {}).get("usd") if isinstance(figures.get(key), dict) else None
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise PriceError(f"price file: {key}.usd must be a number >= 0, not {value!r}")
            usd[name] = value / 1e6 if name in PER_MILLION else float(value)
        return cls(
            region=region,
            as_of=as_of,
            sqs_request=usd["sqs_request"],
            sqs_fifo_request=usd["sqs_fifo_request"],
            lambda_request=usd["lambda_request"],
            gb_second={arch: usd[f"gb_second_{arch}"] for arch in ARCHITECTURES},
            write_unit=usd["write_unit"],
            read_unit=usd["read_unit"],
            log_byte=usd["log_gb"] / GB_BYTES,
            metric_hour=usd["metric_month"] / HOURS_PER_MONTH,
            metric_month=usd["metric_month"],
            alarm_metric_month=usd["alarm_metric_month"],
            dashboard_month=usd["dashboard_month"],
            statuses={key: str(figures[key].get("status", "unverified")) for key in PRICE_KEYS.values()},
        )

    @classmethod
    def load(cls, path: Path = PRICES_FILE) -> Prices:
        try:
            data = json.loads(path.read_text())
        except OSError as error:
            raise PriceError(f"cannot read the price file {path}: {error.strerror or error}") from None
        except ValueError as error:
            raise PriceError(f"price file {path} is not JSON: {error}") from None
        return cls.from_json(data)


def sqs_billed_requests(payload_bytes: int) -> int:
    """The requests SQS bills for one API call carrying `payload_bytes` (all of a batch's
    messages together): one per 64 KB chunk, and one for a call with no payload (a receive)."""
    if payload_bytes < 0:
        raise ValueError(f"payload_bytes must be >= 0, not {payload_bytes}")
    return max(1, math.ceil(payload_bytes / SQS_CHUNK_BYTES))


def billed_gb_seconds(durations_ms: Iterable[float], memory_mb: int) -> float:
    """GB-seconds of invocations that ran `durations_ms`, each rounded up to the millisecond."""
    return sum(math.ceil(duration) for duration in durations_ms) * memory_mb / 1024 / 1000


def estimated_gb_seconds(total_ms: float, invocations: float, memory_mb: int) -> float:
    """GB-seconds from a sum of durations (CloudWatch's Duration Sum) where the single ones are
    not known: each invocation's rounding up adds between 0 and 1 ms, half a millisecond expected."""
    return (total_ms + 0.5 * invocations) * memory_mb / 1024 / 1000


# Usage's billed units, in the order reports show them (every field but the architecture).
UNIT_NAMES = (
    "sqs_requests",
    "sqs_fifo_requests",
    "invocations",
    "gb_seconds",
    "write_units",
    "read_units",
    "log_bytes",
    "metric_hours",
)


@dataclass(frozen=True)
class Usage:
    """The billed units of a period or of a run of orders (`sqs_requests` to standard queues,
    `sqs_fifo_requests` to FIFO ones)."""

    sqs_requests: float = 0
    invocations: float = 0
    gb_seconds: float = 0
    architecture: str = "arm64"
    write_units: float = 0
    read_units: float = 0
    log_bytes: float = 0
    metric_hours: float = 0
    sqs_fifo_requests: float = 0

    def __post_init__(self) -> None:
        if self.architecture not in ARCHITECTURES:
            raise ValueError(
                f"architecture must be one of {', '.join(ARCHITECTURES)}, not {self.architecture!r}"
            )
        for name in UNIT_NAMES:
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, not {getattr(self, name)}")

    def units(self) -> dict[str, float]:
        """The billed units by name (the architecture aside), as reports show them."""
        return {name: getattr(self, name) for name in UNIT_NAMES}


@dataclass(frozen=True)
class Cost:
    """Dollars by service for `orders` orders; per million orders when there were any."""

    by_service: Mapping[str, float]
    orders: float

    @property
    def total(self) -> float:
        return math.fsum(self.by_service.values())

    def per_million(self, dollars: float) -> float | None:
        return dollars / self.orders * 1e6 if self.orders > 0 else None

    @property
    def per_million_orders(self) -> float | None:
        return self.per_million(self.total)

    def as_json(self) -> dict[str, Any]:
        return {
            "orders": self.orders,
            "usd": self.total,
            "usd_per_million_orders": self.per_million_orders,
            "by_service": dict(self.by_service),
            "by_service_per_million_orders": {
                service: self.per_million(dollars) for service, dollars in self.by_service.items()
            },
        }


def price(usage: Usage, prices: Prices, orders: float) -> Cost:
    """What `usage` costs, by service (SERVICES, in that order)."""
    return Cost(
        by_service={
            "sqs": usage.sqs_requests * prices.sqs_request
            + usage.sqs_fifo_requests * prices.sqs_fifo_request,
            "lambda": usage.invocations * prices.lambda_request
            + usage.gb_seconds * prices.gb_second[usage.architecture],
            "dynamodb": usage.write_units * prices.write_unit + usage.read_units * prices.read_unit,
            "logs": usage.log_bytes * prices.log_byte,
            "metrics": usage.metric_hours * prices.metric_hour,
        },
        orders=orders,
    )


@dataclass(frozen=True)
class FixedUnits:
    """What a deployment pays for by the month: alarm metrics (standard resolution), dashboards
    and custom metrics (each metric name and dimension values the worker sends)."""

    alarm_metrics: int
    dashboards: int
    custom_metrics: int

    def as_json(self) -> dict[str, int]:
        return {
            "alarm_metrics": self.alarm_metrics,
            "dashboards": self.dashboards,
            "custom_metrics": self.custom_metrics,
        }


def alarm_metrics(properties: Mapping[str, Any]) -> int:
    """The metrics one AWS::CloudWatch::Alarm bills: its one metric, or each metric its math
    expression reads (a `MetricStat` entry of `Metrics`; the expressions themselves are not
    metrics). A period under a minute would be billed at the high-resolution rate, which the price
    file does not hold: refused, naming the alarm."""
    queries = properties.get("Metrics")
    stats = [query["MetricStat"] for query in queries or [] if "MetricStat" in query]
    periods = [properties.get("Period")] if queries is None else [stat.get("Period") for stat in stats]
    for period in periods:
        if isinstance(period, int | float) and period < STANDARD_ALARM_PERIOD_SECONDS:
            raise ValueError(
                f"alarm {properties.get('AlarmName', '?')} has a {period} s period: high-resolution "
                "alarms are not in the price file"
            )
    return 1 if queries is None else len(stats)


def template_fixed_units(template: Mapping[str, Any], custom: int) -> FixedUnits:
    """The fixed units of a stack from its CloudFormation template (as deployed, or synthesized):
    its alarms' metrics and its dashboards; `custom` custom metrics beside them."""
    resources = [r for r in (template.get("Resources") or {}).values() if isinstance(r, Mapping)]
    alarms = [r.get("Properties") or {} for r in resources if r.get("Type") == "AWS::CloudWatch::Alarm"]
    return FixedUnits(
        alarm_metrics=sum(alarm_metrics(properties) for properties in alarms),
        dashboards=sum(1 for r in resources if r.get("Type") == "AWS::CloudWatch::Dashboard"),
        custom_metrics=custom,
    )


def custom_metrics(emf_records: Iterable[Mapping[str, Any]]) -> int:
    """The custom metrics embedded-metric-format records make: one per namespace, metric name and
    dimension values (CloudWatch's definition of a metric), however many records repeat it."""
    found: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
    for record in emf_records:
        for directive in record["_aws"]["CloudWatchMetrics"]:
            for dimension_set in directive["Dimensions"]:
                dimensions = tuple((name, str(record[name])) for name in dimension_set)
                for metric in directive["Metrics"]:
                    found.add((directive["Namespace"], metric["Name"], dimensions))
    return len(found)


@dataclass(frozen=True)
class FixedCost:
    """Dollars a month by item (FIXED_ITEMS), whatever the orders."""

    units: FixedUnits
    by_item: Mapping[str, float]

    @property
    def total(self) -> float:
        return math.fsum(self.by_item.values())

    def as_json(self) -> dict[str, Any]:
        return {"usd_per_month": self.total, "by_item": dict(self.by_item), "units": self.units.as_json()}


def fixed_monthly(units: FixedUnits, prices: Prices) -> FixedCost:
    """What the fixed units cost a month; the custom metrics as if each were sent every hour
    (CloudWatch prorates them by the hours they are sent in: the most they cost)."""
    return FixedCost(
        units=units,
        by_item={
            "alarms": units.alarm_metrics * prices.alarm_metric_month,
            "dashboards": units.dashboards * prices.dashboard_month,
            "custom_metrics": units.custom_metrics * prices.metric_month,
        },
    )
