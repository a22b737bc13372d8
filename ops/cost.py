"""`python -m ops cost [--since MINUTES] [--json]`: what a deployed consumer cost over a period, by
service and per order, from its CloudWatch metrics priced with ops/prices.json (ops/cost_model.py).

What is read (Sum over the period): the jobs queue's NumberOfMessagesSent, -Received, -Deleted and
NumberOfEmptyReceives (AWS/SQS, QueueName), the worker's Invocations and Duration (AWS/Lambda,
FunctionName), the orders table's ConsumedWriteCapacityUnits and ConsumedReadCapacityUnits
(AWS/DynamoDB, TableName), the worker's log group's IncomingBytes (AWS/Logs, LogGroupName), and the
worker's own decision metrics (orders are its accepted writes; the hours they were sent in are
what CloudWatch bills its custom metrics by). A metric with no data in the period counts as 0 and
is named under `missing`: on AWS that may be a quiet period, on the embedded AWS a metric it does
not publish (docs/cost.md).

Lambda bills each cold start's INIT phase like the invocation since 2025-08-01 (AWS Compute Blog,
"AWS Lambda standardizes billing for INIT Phase"), and no metric carries it: CloudWatch's Duration
is the handler's time. It is read from the worker's log group, the `Init Duration` of the period's
REPORT lines (FilterLogEvents with a filter pattern, so only cold starts' lines come back).

SQS bills requests, not messages, and CloudWatch counts messages: the estimate is one SendMessage
per message sent, one ReceiveMessage per invocation (at most one per message received) plus every
empty receive, one DeleteMessageBatch per invocation (at most one per message deleted), each under
64 KB (an order's body is a few dozen bytes). A FIFO jobs queue's requests are priced at the FIFO
rate, and a send its deduplication dropped is a request too: SQS pricing counts every action as
a request, and SendMessage "accepted successfully" the duplicate (its MessageDeduplicationId);
AWS/SQS counts those in NumberOfDeduplicatedSentMessages, read for a FIFO queue only.

Apart from the period's bill, `fixed_monthly` is what the deployment costs a month whatever its
orders, counted from the deployed stack's template (GetTemplate): its alarms' metrics and its
dashboard, with the custom metrics the worker's metrics lines make (at most: each billed for the
hours it is sent in). It is not in `usd` nor in the per-order figure: it does not grow with the
orders and is billed by the month, not by the period asked for.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from guarded_consumer import contract
from ops import observe
from ops.aws import Clients, error_line
from ops.cost_model import (
    PRICES_FILE,
    PriceError,
    Prices,
    Usage,
    custom_metrics,
    estimated_gb_seconds,
    fixed_monthly,
    price,
    template_fixed_units,
)
from ops.snapshot import Target, TargetError, resolve_target
from ops.terminal import Progress, safe, safe_lines
from stacks.config import DECISION_METRICS, FUNCTION_MEMORY_MB, METRICS_NAMESPACE
from stacks.lambda_code import load_worker

# The stack's architecture (lib/src/idempotent_consumer/function.py), used when the function's configuration cannot be
# read (the operator policy does not grant lambda:GetFunctionConfiguration).
DEFAULT_ARCHITECTURE = "arm64"
# CloudWatch keeps 1-minute data 15 days, 5-minute data 63 days and hourly data 455 days; a
# query's period must be a multiple of 60, 300 or 3600 seconds once its start is that old.
MAX_SINCE_MINUTES = 455 * 24 * 60
MAX_POINTS = 1440
ACCEPTED = str(contract.Metric.ACCEPTED)
FIFO_SUFFIX = ".fifo"  # SQS: a FIFO queue's name ends with it


class CostError(RuntimeError):
    """Bad arguments or an unreadable price file; the message says which in one line."""


def cost_metrics(target: Target) -> dict[str, tuple[str, str, dict[str, str], str]]:
    """`{key: (namespace, metric, dimensions, statistic)}` of every metric the cost is made from."""
    queue = {"QueueName": target.jobs_queue}
    worker = {"FunctionName": target.function_name}
    table = {"TableName": target.orders_table}
    deduplicated = {"sqs_deduplicated": ("AWS/SQS", "NumberOfDeduplicatedSentMessages", queue, "Sum")}
    return {
        "sqs_sent": ("AWS/SQS", "NumberOfMessagesSent", queue, "Sum"),
        **(deduplicated if is_fifo(target) else {}),
        "sqs_received": ("AWS/SQS", "NumberOfMessagesReceived", queue, "Sum"),
        "sqs_deleted": ("AWS/SQS", "NumberOfMessagesDeleted", queue, "Sum"),
        "sqs_empty_receives": ("AWS/SQS", "NumberOfEmptyReceives", queue, "Sum"),
        "lambda_invocations": ("AWS/Lambda", "Invocations", worker, "Sum"),
        "lambda_duration_ms": ("AWS/Lambda", "Duration", worker, "Sum"),
        "dynamodb_write_units": ("AWS/DynamoDB", "ConsumedWriteCapacityUnits", table, "Sum"),
        "dynamodb_read_units": ("AWS/DynamoDB", "ConsumedReadCapacityUnits", table, "Sum"),
        "logs_incoming_bytes": ("AWS/Logs", "IncomingBytes", {"LogGroupName": target.log_group}, "Sum"),
        **{f"decision_{name}": (METRICS_NAMESPACE, name, worker, "Sum") for name in DECISION_METRICS},
    }


def is_fifo(target: Target) -> bool:
    return target.jobs_queue.endswith(FIFO_SUFFIX)


def period_for(since_minutes: float) -> int:
    """Seconds per datapoint: at most MAX_POINTS points, a multiple CloudWatch accepts for data
    as old as the period's start."""
    period = 60 * math.ceil(since_minutes / MAX_POINTS)
    step = 3600 if since_minutes > 63 * 1440 else 300 if since_minutes > 15 * 1440 else 60
    return step * math.ceil(period / step)


def metric_hours(series: Mapping[str, list[list[float]]], period: int) -> float:
    """Custom metric-hours: for each decision metric, the hours (UTC) it has data in; a point of
    a period longer than an hour counts for the hours the period spans."""
    hours = 0.0
    for name in DECISION_METRICS:
        points = series.get(f"decision_{name}", [])
        if period > 3600:
            hours += len(points) * period / 3600
        else:
            hours += len({int(time_ms // 3_600_000) for time_ms, _ in points})
    return hours


INIT_PATTERN = '"Init Duration"'


def init_phases(
    logs: Any,
    log_group: str,
    start_ms: int,
    end_ms: int,
    progress: Callable[[tuple[int, int]], None] = lambda _: None,
) -> tuple[float, int]:
    """(milliseconds, cold starts): the INIT phases of the period's invocations, from their REPORT
    lines (an INIT_REPORT line, of an init that failed, is not an invocation's). `progress` gets
    (cold starts so far, timestamp reached) at every line read: FilterLogEvents pages through a
    long period for minutes."""
    total, count = 0.0, 0
    for event in observe.log_events(logs, log_group, start_ms, end_ms, INIT_PATTERN):
        fields = observe.report_fields(event["message"])
        if fields and "Init Duration" in fields:
            total, count = total + fields["Init Duration"], count + 1
        progress((count, int(event.get("timestamp", start_ms))))
    return total, count


def init_progress(start_ms: int, end_ms: int) -> Callable[[tuple[int, int]], str]:
    """The progress line of `init_phases`: cold starts so far and how much of the period is read."""

    def line(figures: tuple[int, int]) -> str:
        count, reached = figures
        share = (reached - start_ms) / max(end_ms - start_ms, 1)
        return (
            f"reading cold starts (REPORT lines): {count} so far, {min(max(share, 0), 1):.0%} of the period"
        )

    return line


def usage_of(
    sums: Mapping[str, float], memory_mb: int, architecture: str, hours: float, fifo: bool = False
) -> Usage:
    """The billed units behind the period's metric sums and INIT time (the SQS estimate is the
    module's, at the FIFO rate for a FIFO queue); a run billed as Lambda bills it, handler and
    init time rounded up together."""
    invocations = sums["lambda_invocations"]
    receives = min(invocations, sums["sqs_received"]) + sums["sqs_empty_receives"]
    deletes = min(invocations, sums["sqs_deleted"])
    requests = sums["sqs_sent"] + sums.get("sqs_deduplicated", 0.0) + receives + deletes
    return Usage(
        sqs_requests=0 if fifo else requests,
        sqs_fifo_requests=requests if fifo else 0,
        invocations=invocations,
        gb_seconds=estimated_gb_seconds(
            sums["lambda_duration_ms"] + sums.get("lambda_init_ms", 0.0), invocations, memory_mb
        ),
        architecture=architecture,
        write_units=sums["dynamodb_write_units"],
        read_units=sums["dynamodb_read_units"],
        log_bytes=sums["logs_incoming_bytes"],
        metric_hours=hours,
    )


def function_shape(clients: Clients, target: Target) -> tuple[int, str, str]:
    """(memory MB, architecture, where they were read): the deployed function's, else the stack's."""
    try:
        found = clients.client("lambda").get_function_configuration(FunctionName=target.function_name)
        return int(found["MemorySize"]), (found.get("Architectures") or ["x86_64"])[0], "the function"
    except Exception as error:  # noqa: BLE001 - the stack's own values are the fallback, named as such
        return FUNCTION_MEMORY_MB, DEFAULT_ARCHITECTURE, f"the stack's defaults ({error_line(error)})"


def worker_custom_metrics(function_name: str) -> int:
    """The custom metrics the worker can make: its metrics lines for each decision it counts, as
    it prints them for this function (lib/src/guarded_consumer/sqs_batch.py metrics_line)."""
    worker = load_worker()
    return custom_metrics(worker.metrics_line(m, function_name, METRICS_NAMESPACE, 0) for m in worker.Metric)


def fixed_costs(clients: Clients, target: Target, prices: Prices) -> dict[str, Any]:
    """The deployment's monthly fixed costs (`fixed_monthly`), from its deployed template and the
    worker's metrics lines for this function, one of each decision."""
    body = clients.client("cloudformation").get_template(StackName=target.stack)["TemplateBody"]
    template = json.loads(body) if isinstance(body, str) else body
    units = template_fixed_units(template, worker_custom_metrics(target.function_name))
    return {**fixed_monthly(units, prices).as_json(), "from": f"stack {target.stack}'s template"}


def measure(
    clients: Clients,
    target: Target,
    since_minutes: float,
    prices: Prices,
    now_ms: int | None = None,
    progress: Callable[[Callable[[Any], str]], Callable[[Any], None]] = lambda _: lambda _: None,
) -> dict[str, Any]:
    """The period's metrics, units and dollars, as `--json` prints them. `progress` makes the
    reporter of a long step from its line (`ops.terminal.Progress`); by default nothing is said."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    start_ms = now_ms - int(since_minutes * 60_000)
    period = period_for(since_minutes)
    metrics = cost_metrics(target)
    series = observe.metric_series(clients.client("cloudwatch"), metrics, start_ms, now_ms, period)
    sums = {key: math.fsum(value for _, value in points) for key, points in series.items()}
    missing = sorted(f"{ns} {name}" for key, (ns, name, _, _) in metrics.items() if not series[key])
    try:
        sums["lambda_init_ms"], sums["lambda_cold_starts"] = init_phases(
            clients.client("logs"),
            target.log_group,
            start_ms,
            now_ms,
            progress(init_progress(start_ms, now_ms)),
        )
    except Exception as error:  # noqa: BLE001 - named under `missing`, as a metric without data is
        sums["lambda_init_ms"] = sums["lambda_cold_starts"] = 0.0
        missing.append(f"Lambda Init Duration (REPORT lines: {error_line(error)})")
    memory_mb, architecture, shape_from = function_shape(clients, target)
    hours = metric_hours(series, period)
    usage = usage_of(sums, memory_mb, architecture, hours, fifo=is_fifo(target))
    cost = price(usage, prices, orders=sums[f"decision_{ACCEPTED}"])
    try:
        fixed: dict[str, Any] | None = fixed_costs(clients, target, prices)
    except Exception as error:  # noqa: BLE001 - named under `missing`, the period's bill still stands
        fixed = None
        missing.append(f"fixed costs (the stack's template: {error_line(error)})")
    return {
        **cost.as_json(),
        "since_minutes": since_minutes,
        "start": _iso(start_ms),
        "end": _iso(now_ms),
        "period_seconds": period,
        "stack": target.stack,
        "region": clients.region,
        "prices": {"file": str(PRICES_FILE), "region": prices.region, "as_of": prices.as_of, "list": True},
        "function": {"memory_mb": memory_mb, "architecture": architecture, "from": shape_from},
        "metrics": sums,
        "missing": missing,
        "units": usage.units(),
        "queue_type": "fifo" if is_fifo(target) else "standard",
        "fixed_monthly": fixed,
    }


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="seconds")


def _usd(value: float | None, places: int) -> str:
    return "-" if value is None else f"{value:,.{places}f}"


def format_text(report: dict[str, Any]) -> str:
    per_million = report["by_service_per_million_orders"]
    units = report["units"]
    function = report["function"]
    heading = (
        f"{report['stack']}: {report['start']} to {report['end']} at AWS list prices "
        f"({report['prices']['region']}, {report['prices']['as_of']}, ops/prices.json)"
    )
    requests = units["sqs_fifo_requests"] if report["queue_type"] == "fifo" else units["sqs_requests"]
    used = (
        f"units: {requests:,.0f} SQS requests ({report['queue_type']}), {units['invocations']:,.0f} invocations, "
        f"{units['gb_seconds']:,.3f} GB-s ({function['architecture']}, {function['memory_mb']} MB from "
        f"{function['from']}; {report['metrics'].get('lambda_cold_starts', 0):,.0f} cold starts' init "
        f"included), {units['write_units']:,.0f} WRU, {units['read_units']:,.0f} RRU, "
        f"{units['log_bytes']:,.0f} log bytes, {units['metric_hours']:,.0f} metric-hours"
    )
    lines = [
        heading,
        f"orders (accepted writes): {report['orders']:,.0f}",
        f"{'service':<10} {'usd':>14} {'usd per million orders':>24}",
        *(
            f"{service:<10} {_usd(dollars, 6):>14} {_usd(per_million[service], 4):>24}"
            for service, dollars in report["by_service"].items()
        ),
        f"{'total':<10} {_usd(report['usd'], 6):>14} {_usd(report['usd_per_million_orders'], 4):>24}",
        used,
        *fixed_lines(report["fixed_monthly"]),
    ]
    if report["missing"]:
        lines.append(f"no data in the period (counted as 0): {', '.join(report['missing'])}")
    return safe_lines(lines)


FIXED_UNITS = {
    "alarms": ("alarm_metrics", "alarm metrics (standard resolution)"),
    "dashboards": ("dashboards", "dashboards"),
    "custom_metrics": ("custom_metrics", "custom metrics, at most (billed by the hours each is sent in)"),
}


def fixed_lines(fixed: dict[str, Any] | None) -> list[str]:
    """The fixed costs' own table: a month, whatever the orders, not in the total above."""
    if fixed is None:
        return []
    return [
        f"fixed, a month whatever the orders (from {fixed['from']}; not in the total above):",
        *(
            f"{item:<14} {_usd(dollars, 2):>10}  {fixed['units'][FIXED_UNITS[item][0]]:,} "
            f"{FIXED_UNITS[item][1]}"
            for item, dollars in fixed["by_item"].items()
        ),
        f"{'total':<14} {_usd(fixed['usd_per_month'], 2):>10}  a month",
    ]


def add_command(commands: Any, common: Callable[..., None]) -> None:
    parser = commands.add_parser(
        "cost", help="what the consumer cost over a period, by service and per order, at AWS list prices"
    )
    common(parser, since="the period: this many minutes up to now")
    parser.add_argument(
        "--json",
        action="store_true",
        help="one object: orders, usd, usd_per_million_orders, by_service, units, metrics, missing, "
        "fixed_monthly (usd_per_month, by_item, units)",
    )


def run(args: argparse.Namespace, clients: Clients) -> int:
    try:
        if not 0 < args.since <= MAX_SINCE_MINUTES:
            raise CostError(
                f"--since must be more than 0 and at most {MAX_SINCE_MINUTES} minutes "
                f"(CloudWatch keeps 455 days), not {args.since:g}"
            )
        try:
            prices = Prices.load()
        except PriceError as error:
            raise CostError(str(error)) from None
        target = resolve_target(clients, args.prefix, args.stack)
        report = measure(clients, target, args.since, prices, progress=Progress)
    except (CostError, TargetError) as error:
        print(safe(f"error: {error}"), file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - one line, not a traceback
        print(safe(f"error: {error_line(error, clients.describe())}"), file=sys.stderr)
        return 1
    if report["region"] and report["region"] != prices.region:
        print(
            f"warning: the prices are {prices.region}'s, the consumer is in {report['region']}",
            file=sys.stderr,
        )
    print(json.dumps(report, indent=2, sort_keys=True) if args.json else format_text(report))
    return 0
