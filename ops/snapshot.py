"""One snapshot of a deployed consumer, built only from `ops.observe` reads: queue counters, the
event source mapping, stored orders, the reference item and the write decisions in the worker's
log. Shared by `python -m ops status` and the live view.

A snapshot never raises for an AWS problem: an endpoint that cannot be reached, a missing stack
or a denied call becomes a one-line `error` (nothing could be read) or an entry in `errors`
(that section could not be read; the others still show). A resource that AWS says does not exist
is not an error: `resources` says, per section, `present`, `absent` (with the call and the code
that said so) or `unreadable` (any other failure, which proves nothing about the resource).

With a `History`, the worker's log lines read are kept (ops/history.py); once the log group is
gone, the decisions come from there, marked `history`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict

from botocore.exceptions import ClientError

from guarded_consumer import contract
from ops import observe
from ops.aws import Clients, error_line, is_absent, stack_missing
from ops.history import History, scope_of
from ops.terminal import safe_lines
from stacks.config import DECISION_METRICS, DEFAULT_PREFIX, METRICS_NAMESPACE, Names

if TYPE_CHECKING:
    from ops.dlq import Queues

Tag, Delivery = contract.Tag, contract.Delivery

ORDERS_LIMIT = 200
DECISIONS_LIMIT = 200
MESSAGES_LIMIT = 200
ERRORS_LIMIT = 50
DEFAULT_SINCE_MINUTES = 60


# The call each section reads with: the evidence named beside `absent` or `unreadable`.
SECTION_CALLS = {
    "jobs": "GetQueueAttributes",
    "dlq": "GetQueueAttributes",
    "mappings": "ListEventSourceMappings",
    "function": "GetFunctionConfiguration",
    "orders": "Scan",
    "reference": "Scan",
    "alarms": "DescribeAlarms",
    "series": "GetMetricData",
    "log": "FilterLogEvents",
}


class Section(TypedDict):
    """How one section was read: `present`, `absent` (the resource is not there) or `unreadable`,
    with the call that read it and, when it failed, the error in one line."""

    state: str
    call: str
    detail: str


class QueueCounts(TypedDict):
    jobs: dict[str, int] | None
    dlq: dict[str, int] | None


class KeptHistory(TypedDict):
    """Where the decisions read are kept (ops/history.py), and why keeping failed, if it did."""

    path: str
    error: str | None


class Snapshot(TypedDict):
    """Everything the view and `ops status` show, JSON-ready (ops/view/static/app.js reads the
    same keys). None: not read, or unreadable (`resources` and `errors` say which)."""

    taken_at: str
    taken_at_ms: int
    endpoint: str | None
    region: str | None
    error: str | None  # the target could not be resolved: nothing else was read
    errors: dict[str, str]  # section -> why it is unreadable
    target: dict[str, Any] | None
    options: dict[str, Any] | None
    queues: QueueCounts
    resources: dict[str, Section]
    mappings: list[dict[str, Any]] | None
    function: dict[str, Any] | None
    orders: list[dict[str, Any]] | None
    orders_truncated: bool
    reference: list[dict[str, Any]] | None
    decisions: list[dict[str, Any]] | None  # the last DECISIONS_LIMIT
    decisions_total: int
    worker_errors: list[dict[str, Any]] | None
    deliveries: list[dict[str, Any]] | None
    messages: list[dict[str, Any]] | None
    messages_total: int
    executions: int | None  # the worker's invocations since log_since
    summary: dict[str, int | None] | None
    log_since: str
    log_since_ms: int
    alarms: list[dict[str, Any]] | None
    series: dict[str, list[tuple[int, float]]] | None
    log_source: str | None  # "log", or "history" when the log group is gone
    history: KeptHistory | None


def section_state(snapshot: Snapshot, name: str) -> str:
    """How a section was read: `present`, `absent`, or `unreadable` (also when it was not read)."""
    found = snapshot["resources"].get(name)
    return "unreadable" if found is None else found["state"]


class TargetError(RuntimeError):
    """The consumer's resources cannot be located; the message says why in one line."""


@dataclass(frozen=True)
class Target:
    """The physical names of one deployed consumer and where they were read from."""

    stack: str
    queue_url: str
    dlq_url: str
    orders_table: str
    reference_table: str
    function_name: str
    log_group: str
    names_from: str
    audit_log_group: str = ""
    alarm_topic_arn: str = ""  # the stack's AlarmTopicArn output, if any
    # The stack's `Options` output (compact JSON of the context it was synthesized with), if any.
    options_output: str = ""

    def queues(self) -> Queues:
        """What the DLQ tools work on (ops/dlq/)."""
        from ops.dlq import Queues

        return Queues(
            dlq_url=self.dlq_url,
            jobs_url=self.queue_url,
            orders_table=self.orders_table,
            audit_log_group=self.audit_log_group,
        )

    @property
    def jobs_queue(self) -> str:
        return self.queue_url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def dead_letter_queue(self) -> str:
        return self.dlq_url.rstrip("/").rsplit("/", 1)[-1]


def consumer_alarms(cloudwatch: Any, target: Target, prefix: str) -> list[dict[str, Any]]:
    """The consumer's alarms: by the names its prefix gives them, or, for a stack the prefix does
    not name (another app's consumer, one without names, found with --stack), the alarms that
    notify the topic its outputs name."""
    names = Names(prefix)
    if target.alarm_topic_arn and target.function_name != names.worker_function:
        return observe.alarms_notifying(cloudwatch, target.alarm_topic_arn)
    return observe.alarms(cloudwatch, list(names.alarms))


def resolve_target(clients: Clients, prefix: str = DEFAULT_PREFIX, stack: str | None = None) -> Target:
    """Names from the stack's CloudFormation outputs; if the stack cannot be described (missing,
    or cloudformation:DescribeStacks not granted), the names `stacks.config` derives from the
    prefix. Connection and credential problems propagate."""
    names = Names(prefix)
    stack = stack or names.stack
    try:
        outputs = observe.stack_outputs(clients.client("cloudformation"), stack)
    except ClientError as error:
        why = "not found" if stack_missing(error) else error_line(error)
        sqs = clients.client("sqs")
        try:
            try:
                queue_url = observe.find_queue_url(sqs, names.jobs_queue)
            except ClientError as standard:
                if not is_absent(standard):
                    raise
                # A FIFO deployment (-c fifo=true) names its queues with SQS's `.fifo` suffix.
                names = Names(prefix, fifo=True)
                queue_url = observe.find_queue_url(sqs, names.jobs_queue)
            dlq_url = observe.find_queue_url(sqs, names.dead_letter_queue)
        except ClientError as queue_error:
            raise TargetError(
                f"stack {stack} {why}, and {error_line(queue_error)}: deploy the stack "
                "(make up, or cdk deploy) or pass --prefix/--stack"
            ) from None
        return Target(
            stack,
            queue_url,
            dlq_url,
            names.orders_table,
            names.reference_table,
            names.worker_function,
            Names.log_group_of(names.worker_function),
            names_from=f"prefix {prefix} (stack {why})",
            audit_log_group=names.dlq_audit_log_group,
        )
    missing = [
        key
        for key in (
            "QueueUrl",
            "DeadLetterQueueUrl",
            "OrdersTableName",
            "FunctionName",
            "LogGroupName",
        )
        if key not in outputs
    ]
    if missing:
        raise TargetError(
            f"stack {stack} has no output {', '.join(missing)} (still deploying, or not this stack?)"
        )
    return Target(
        stack,
        outputs["QueueUrl"],
        outputs["DeadLetterQueueUrl"],
        outputs["OrdersTableName"],
        # The lab's own table: a consumer built from the construct in another app has none.
        outputs.get("ReferenceTableName", ""),
        outputs["FunctionName"],
        outputs["LogGroupName"],
        names_from=f"stack {stack} outputs",
        audit_log_group=outputs.get("DlqAuditLogGroupName", names.dlq_audit_log_group),
        alarm_topic_arn=outputs.get("AlarmTopicArn", ""),
        options_output=outputs.get("Options", ""),
    )


OPTIONS_OUTPUT = "Options"


def deployment_options(target: Target, mappings: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The options the deployment runs with: the stack's Options output; for a stack deployed
    before it had one, what the resources say (fifo from the jobs queue's name, which SQS requires
    to end in `.fifo` for a FIFO queue; batch_size from the event source mapping)."""
    try:
        values = json.loads(target.options_output) if target.options_output else None
    except ValueError:
        values = None
    if isinstance(values, dict):
        return {"from": f"stack output {OPTIONS_OUTPUT}", "values": values}
    found: dict[str, Any] = {"fifo": target.jobs_queue.endswith(".fifo")}
    if mappings:
        found["batch_size"] = mappings[0]["batch_size"]
    return {"from": f"the resources (no usable stack output {OPTIONS_OUTPUT})", "values": found}


def _option_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        value = ",".join(str(item) for item in value)
    return "none" if value is None or value == "" else str(value)


def options_line(options: dict[str, Any]) -> str:
    """`batch_size=1 fifo=false removal=retain ...`: one key=value per option, in their order."""
    return " ".join(f"{key}={_option_value(value)}" for key, value in options["values"].items())


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def decisions(records: list[observe.LogRecord]) -> list[dict[str, Any]]:
    """The WRITE lines as timeline entries, oldest first."""
    return [
        {
            "time_ms": record.timestamp,
            "time": _iso(record.timestamp),
            "id": record.data.get("id"),
            "outcome": record.data.get("outcome"),
            "decision": record.data.get("decision"),
            "condition": record.data.get("condition", contract.CONDITION),
            "requested": record.data.get("requested"),
            "previous": record.data.get("previous"),
            "stored": contract.stored_by(record.data),
        }
        for record in records
        if record.tag == Tag.WRITE
    ]


def worker_errors(records: list[observe.LogRecord]) -> list[dict[str, Any]]:
    return [
        {"time_ms": record.timestamp, "time": _iso(record.timestamp), **record.data}
        for record in records
        if record.tag == Tag.ERROR
    ]


# What one delivery of a message came to (the worker's contract, Delivery); the failed records
# are reported in batchItemFailures (an ERROR line each) and delivered again by SQS.
OUTCOMES: tuple[str, ...] = tuple(Delivery)
FAILED_RECORD_OUTCOMES: tuple[str, ...] = contract.FAILED_RECORDS


def deliveries(records: list[observe.LogRecord]) -> list[dict[str, Any]]:
    """One entry per record the worker handled, oldest first, from its WRITE / RESULT / ERROR
    lines (and the JOB lines of older workers). A record's lines share one log stream and follow
    each other there (an execution environment runs one invocation at a time, and the worker one
    record at a time): WRITE, then RESULT or ERROR. Only ERROR names the SQS message (and the
    order as far as the body parsed); a malformed body has only its ERROR line. `outcome` is one of
    OUTCOMES; `unfinished` is an older worker's JOB line with nothing after it (the invocation
    ended, by a timeout or a crash, or is still running)."""
    found: list[dict[str, Any]] = []
    open_in: dict[str, dict[str, Any]] = {}  # log stream -> the delivery whose lines are still coming

    def start(record: observe.LogRecord, message_id: Any, order_id: Any) -> dict[str, Any]:
        delivery = {
            "time_ms": record.timestamp,
            "time": _iso(record.timestamp),
            "message_id": message_id,
            "id": order_id,
            "outcome": Delivery.UNFINISHED,
            "condition": None,
            "write_outcome": None,
            "requested": None,
            "previous": None,
            "stored": None,
            "error": None,
            "message": None,
            "receive_count": None,
        }
        found.append(delivery)
        return delivery

    for record in records:
        data, current = record.data, open_in.get(record.stream)
        if record.tag == Tag.JOB:
            delivery = start(record, data.get("message_id"), data.get("id"))
            delivery["requested"] = {key: value for key, value in data.items() if key != "message_id"}
            open_in[record.stream] = delivery
        elif record.tag == Tag.WRITE:
            if (
                current is None
                or current["outcome"] != Delivery.UNFINISHED
                or current["id"] != data.get("id")
            ):
                current = open_in[record.stream] = start(record, None, data.get("id"))
            current.update(
                outcome=contract.delivery_of_decision(data.get(contract.DECISION_FIELD)),
                condition=data.get("condition", contract.CONDITION),
                write_outcome=data.get("outcome"),
                requested=data.get("requested"),
                previous=data.get("previous"),
                stored=contract.stored_by(data),
            )
        elif record.tag == Tag.ERROR:
            order_id = data.get(contract.ID_FIELD)
            if current is None or (
                current["message_id"] != data.get("message_id")
                and (current["message_id"] is not None or current["id"] != order_id)
            ):
                current = start(record, data.get("message_id"), order_id)
            current["message_id"] = data.get("message_id")
            if current["requested"] is None and order_id is not None and "quantity" in data:
                current["requested"] = {"id": order_id, "quantity": data["quantity"]}
            current.update(
                outcome=contract.delivery_of_failure(data.get(contract.ERROR_FIELD)),
                error=data.get(contract.ERROR_FIELD),
                message=data.get("message"),
                receive_count=data.get("receive_count"),
            )
            open_in.pop(record.stream, None)
        elif record.tag == Tag.RESULT:
            open_in.pop(record.stream, None)
    return found


def messages(delivered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The deliveries grouped by SQS message, ordered by each message's latest delivery (oldest
    first): how often it was delivered, how each delivery ended, and what the latest one came to.
    An acknowledged delivery names no message (only ERROR lines do): it is taken for the next
    delivery of the latest message of its order whose last delivery failed (SQS delivers a failed
    record again), else for a message of its own."""
    grouped: dict[Any, list[dict[str, Any]]] = {}
    failed_by_order: dict[Any, Any] = {}  # order id -> the key of its latest message left failed
    for index, delivery in enumerate(delivered):
        key = delivery["message_id"] or failed_by_order.get(delivery["id"]) or ("unknown", index)
        grouped.setdefault(key, []).append(delivery)
        if delivery["id"] is not None:
            if delivery["outcome"] in FAILED_RECORD_OUTCOMES:
                failed_by_order[delivery["id"]] = key
            elif failed_by_order.get(delivery["id"]) == key:
                del failed_by_order[delivery["id"]]
    found = []
    for group in grouped.values():
        latest = group[-1]
        found.append(
            {
                **latest,
                "message_id": _last_known(group, "message_id"),
                "id": _last_known(group, "id"),
                "requested": _last_known(group, "requested"),
                "receive_count": _last_known(group, "receive_count"),
                "deliveries": len(group),
                "first_ms": group[0]["time_ms"],
                "first": group[0]["time"],
                "outcomes": {
                    outcome: sum(1 for d in group if d["outcome"] == outcome)
                    for outcome in OUTCOMES
                    if any(d["outcome"] == outcome for d in group)
                },
            }
        )
    return sorted(found, key=lambda message: message["time_ms"])


def _last_known(deliveries: list[dict[str, Any]], key: str) -> Any:
    """The latest delivery's value of `key` that is known (not None)."""
    return next((d[key] for d in reversed(deliveries) if d[key] is not None), None)


SERIES_MINUTES = 60


def plotted_metrics(target: Target) -> dict[str, tuple[str, str, dict[str, str], str]]:
    """What the view plots over the last hour: records per minute by decision, invocation errors
    (Lambda's own Errors metric, which the worker-errors alarm watches), queue and DLQ depth."""
    worker = {"FunctionName": target.function_name}
    return {
        **{f"decision:{name}": (METRICS_NAMESPACE, name, worker, "Sum") for name in DECISION_METRICS},
        "function:errors": ("AWS/Lambda", "Errors", worker, "Sum"),
        "queue:jobs": (
            "AWS/SQS",
            "ApproximateNumberOfMessagesVisible",
            {"QueueName": target.jobs_queue},
            "Maximum",
        ),
        "queue:dlq": (
            "AWS/SQS",
            "ApproximateNumberOfMessagesVisible",
            {"QueueName": target.dead_letter_queue},
            "Maximum",
        ),
    }


def take_snapshot(
    clients: Clients,
    prefix: str = DEFAULT_PREFIX,
    stack: str | None = None,
    since_minutes: float = DEFAULT_SINCE_MINUTES,
    history: History | None = None,
) -> Snapshot:
    """Everything the view shows, as JSON-ready data. Never raises for AWS errors."""
    now_ms = int(time.time() * 1000)
    since_ms = now_ms - int(since_minutes * 60_000)
    snapshot = _empty_snapshot(now_ms, since_ms)
    try:
        snapshot["endpoint"], snapshot["region"] = clients.describe(), clients.region
        target = resolve_target(clients, prefix, stack)
    except Exception as error:  # noqa: BLE001 - reported to the user, never raised
        snapshot["error"] = (
            str(error) if isinstance(error, TargetError) else error_line(error, snapshot["endpoint"])
        )
        return snapshot
    snapshot["target"] = {
        **asdict(target),
        "jobs_queue": target.jobs_queue,
        "dead_letter_queue": target.dead_letter_queue,
    }

    def section(name: str, read: Callable[[], Any]) -> Any:
        call = SECTION_CALLS[name]
        try:
            found = read()
        except Exception as error:  # noqa: BLE001 - one section's failure must not hide the others
            detail = error_line(error)
            state = "absent" if is_absent(error) else "unreadable"
            snapshot["resources"][name] = {"state": state, "call": call, "detail": detail}
            if state == "unreadable":
                snapshot["errors"][name] = detail
            return None
        snapshot["resources"][name] = {"state": "present", "call": call, "detail": ""}
        return found

    sqs, dynamodb = clients.client("sqs"), clients.client("dynamodb")
    snapshot["queues"]["jobs"] = section("jobs", lambda: observe.queue_counters(sqs, target.queue_url))
    snapshot["queues"]["dlq"] = section("dlq", lambda: observe.queue_counters(sqs, target.dlq_url))
    snapshot["mappings"] = section(
        "mappings", lambda: observe.mappings(clients.client("lambda"), target.function_name)
    )
    snapshot["options"] = deployment_options(target, snapshot["mappings"])
    snapshot["function"] = section(
        "function", lambda: observe.function_state(clients.client("lambda"), target.function_name)
    )
    orders = section("orders", lambda: observe.scan_items(dynamodb, target.orders_table, limit=ORDERS_LIMIT))
    if orders is not None:
        snapshot["orders"], snapshot["orders_truncated"] = orders, len(orders) >= ORDERS_LIMIT
    if target.reference_table:
        snapshot["reference"] = section(
            "reference", lambda: observe.scan_items(dynamodb, target.reference_table)
        )
    cloudwatch = clients.client("cloudwatch")
    snapshot["alarms"] = section("alarms", lambda: consumer_alarms(cloudwatch, target, prefix))
    snapshot["series"] = section(
        "series",
        lambda: observe.metric_series(
            cloudwatch, plotted_metrics(target), now_ms - SERIES_MINUTES * 60_000, now_ms
        ),
    )
    log = section("log", lambda: observe.worker_log(clients.client("logs"), target.log_group, since_ms))
    records = _kept(snapshot, history, target, log)
    if records is not None:
        _add_records(snapshot, records, log, since_ms)
    return snapshot


def _empty_snapshot(now_ms: int, since_ms: int) -> Snapshot:
    """Every key of a snapshot, nothing read yet (None: not read, or unreadable)."""
    return {
        "taken_at": _iso(now_ms),
        "taken_at_ms": now_ms,
        "endpoint": None,
        "region": None,
        "error": None,
        "errors": {},
        "target": None,
        "options": None,
        "queues": {"jobs": None, "dlq": None},
        "resources": {},
        "mappings": None,
        "function": None,
        "orders": None,
        "orders_truncated": False,
        "reference": None,
        "decisions": None,
        "decisions_total": 0,
        "worker_errors": None,
        "deliveries": None,
        "messages": None,
        "messages_total": 0,
        "executions": None,
        "summary": None,
        "log_since": _iso(since_ms),
        "log_since_ms": since_ms,
        "alarms": None,
        "series": None,
        "log_source": None,
        "history": None,
    }


def _add_records(
    snapshot: Snapshot, records: list[observe.LogRecord], log: observe.WorkerLog | None, since_ms: int
) -> None:
    """The worker's decisions, deliveries, messages and their summary, from its log lines."""
    written = decisions(records)
    snapshot["decisions"], snapshot["decisions_total"] = written[-DECISIONS_LIMIT:], len(written)
    snapshot["worker_errors"] = worker_errors(records)[-ERRORS_LIMIT:]
    delivered = deliveries(records)
    grouped = messages(delivered)
    snapshot["deliveries"] = delivered[-DECISIONS_LIMIT:]
    snapshot["messages"], snapshot["messages_total"] = grouped[-MESSAGES_LIMIT:], len(grouped)
    snapshot["executions"] = log.executions if log is not None else None
    counted = {outcome: sum(1 for d in delivered if d["outcome"] == outcome) for outcome in OUTCOMES}
    snapshot["summary"] = {
        **counted,
        "records": len(delivered),
        "messages": len(grouped),
        "failed_records": sum(counted[outcome] for outcome in FAILED_RECORD_OUTCOMES),
        "invocation_errors": None
        if snapshot["series"] is None
        else int(
            sum(
                value
                for time_ms, value in snapshot["series"]["function:errors"]
                if time_ms > since_ms - 60_000
            )
        ),
    }


def _kept(
    snapshot: Snapshot,
    history: History | None,
    target: Target,
    log: observe.WorkerLog | None,
) -> list[observe.LogRecord] | None:
    """The log's records, kept in the history; or, with the log group gone, the kept ones
    (`log_source` says which). None when there is neither."""
    if log is not None:
        snapshot["log_source"] = "log"
    if history is None:
        return log.records if log is not None else None
    scope = scope_of(snapshot["endpoint"] or "", snapshot["region"], target.stack, target.log_group)
    try:
        if log is not None:
            history.keep(scope, log.records)
            snapshot["history"] = {"path": str(history.path), "error": None}
            return log.records
        if section_state(snapshot, "log") != "absent":
            return None  # unreadable: the log may still hold lines the history lacks
        kept = history.records(scope)
    except Exception as error:  # noqa: BLE001 - the history is a help, never a reason to fail
        snapshot["history"] = {"path": str(history.path), "error": f"{type(error).__name__}: {error}"}
        return log.records if log is not None else None
    snapshot["history"] = {"path": str(history.path), "error": None}
    if not kept:
        return None
    snapshot["log_source"] = "history"
    return kept


def _compact(value: Any) -> str:
    return "-" if value is None else json.dumps(value, sort_keys=True, separators=(", ", ": "))


OUTCOME_WORDS: dict[str, str] = {outcome: outcome.word for outcome in Delivery}


def _without_id(item: Any) -> str:
    return _compact({k: v for k, v in item.items() if k != "id"} if isinstance(item, dict) else item)


def _order_id(delivery: dict[str, Any]) -> str:
    return "-" if delivery["id"] is None else str(delivery["id"])


def delivery_line(delivery: dict[str, Any], widths: tuple[int, int] = (0, 0)) -> str:
    """One record as `ops status` prints it: time, order id, outcome, then what matters for that
    outcome (a conflict's requested and stored details side by side, a failure's reason);
    `widths` pads the id and outcome columns."""
    outcome = delivery["outcome"]
    line = f"{delivery['time']}  {_order_id(delivery):<{widths[0]}}  {OUTCOME_WORDS[outcome]:<{widths[1]}}"
    # The write as the lab's View shows it: the condition and its outcome, the previous item
    # ("none" for a first write), then the stored one.
    write = (
        f"  {delivery['condition']} -> {delivery['write_outcome']}  previous "
        f"{'none' if delivery['previous'] is None else _without_id(delivery['previous'])}"
        if delivery["condition"]
        else ""
    )
    if outcome == Delivery.CONFLICT and delivery["stored"] is not None:
        line += f"  requested {_without_id(delivery['requested'])}{write}  stored {_without_id(delivery['stored'])}"
    elif outcome in (Delivery.ACCEPTED, Delivery.DUPLICATE):
        line += f"{write}  stored {_without_id(delivery['stored'])}"
    elif outcome == Delivery.UNFINISHED:
        line += f"  requested {_without_id(delivery['requested'])}, no result logged"
    elif delivery["error"]:
        line += f"  {delivery['error']}: {delivery['message']}"
    if delivery["message_id"]:
        receives = f", receive {delivery['receive_count']}" if delivery["receive_count"] else ""
        line += f"  (message {delivery['message_id']}{receives})"
    return line


def format_text(snapshot: Snapshot) -> str:
    """The snapshot for a terminal: the same facts as the page, one block per section."""
    lines = [
        f"endpoint  {snapshot['endpoint'] or '-'}  (region {snapshot['region'] or '-'})",
        f"taken at  {snapshot['taken_at']}",
    ]
    if snapshot["error"]:
        return safe_lines([*lines, f"error     {snapshot['error']}"])
    target, errors = snapshot["target"], snapshot["errors"]
    if target is None:
        return safe_lines([*lines, "error     no target was resolved"])
    lines.append(f"names     from {target['names_from']}")
    if snapshot["options"] is not None:
        lines.append(f"options   {options_line(snapshot['options'])}  (from {snapshot['options']['from']})")

    def unread(key: str) -> str:
        """Why a section has no data: deleted (AWS said so) or an error."""
        if section_state(snapshot, key) == "absent":
            return f"absent ({snapshot['resources'][key]['detail']})"
        return f"error: {errors[key]}"

    def counters(label: str, key: str, found: dict[str, int] | None, name: str) -> str:
        if found is None:
            return f"{label:<9} {name}: {unread(key)}"
        return f"{label:<9} {name}: visible {found['visible']}, in flight {found['in_flight']}, delayed {found['delayed']}"

    lines += [
        counters("queue", "jobs", snapshot["queues"]["jobs"], target["jobs_queue"]),
        counters("dlq", "dlq", snapshot["queues"]["dlq"], target["dead_letter_queue"]),
    ]
    function = snapshot["function"]
    lines.append(
        f"function  {target['function_name']}: "
        + (f"{function['state']} ({function['runtime']})" if function is not None else unread("function"))
    )
    if snapshot["mappings"] is None:
        lines.append(f"mapping   {unread('mappings')}")
    for mapping in snapshot["mappings"] or []:
        lines.append(
            f"mapping   {mapping['source']} -> {mapping['function']}, batch size {mapping['batch_size']}, "
            f"{mapping['state']}"
        )
    if snapshot["mappings"] == []:
        lines.append(f"mapping   none for {target['function_name']}")
    tables = [("orders", snapshot["orders"], target["orders_table"])]
    if target["reference_table"]:
        tables.append(("reference", snapshot["reference"], target["reference_table"]))
    for key, items, table in tables:
        if items is None:
            lines.append(f"{key:<9} {unread(key)}")
        else:
            lines.append(f"{key:<9} {len(items)} item(s) in {table}")
            lines += [f"          {_compact(item)}" for item in items]
    if snapshot["alarms"] is None:
        lines.append(f"alarms    {unread('alarms')}")
    for alarm in snapshot["alarms"] or []:
        lines.append(f"alarm     {alarm['name']}: {alarm['state']}  {alarm['reason']}")
    if snapshot["alarms"] == []:
        lines.append("alarms    none")
    log_gone = section_state(snapshot, "log") == "absent"
    if log_gone:
        lines.append(f"log       {target['log_group']}: {unread('log')}")
    deliveries, summary = snapshot["deliveries"], snapshot["summary"]
    if deliveries is None or summary is None:
        lines.append(
            "worker    no decisions: the log group is gone and none were kept (ops status or the view keeps "
            "what it reads)"
            if log_gone
            else f"worker    {unread('log')}"
        )
    else:
        lines += _worker_lines(snapshot, deliveries, summary)
    return safe_lines(lines)


def _worker_lines(
    snapshot: Snapshot, shown: list[dict[str, Any]], summary: dict[str, int | None]
) -> list[str]:
    """The worker's counts and one line per record (`shown`, the last deliveries), for
    `format_text`."""
    lines: list[str] = []
    invocation_errors = (
        f"{'-' if summary['invocation_errors'] is None else summary['invocation_errors']} invocation error(s)"
    )
    if snapshot["taken_at_ms"] - snapshot["log_since_ms"] > SERIES_MINUTES * 60_000:
        invocation_errors += f" (last {SERIES_MINUTES} min)"  # all the metrics read cover
    history = snapshot["history"]
    if snapshot["log_source"] == "history" and history is not None:
        lines.append(f"history   the decisions below are history, kept in {history['path']}")
    since = "from the history" if snapshot["log_source"] == "history" else f"since {snapshot['log_since']}"
    executions = "-" if snapshot["executions"] is None else snapshot["executions"]

    def count(outcome: Any) -> str:
        return f"{summary[outcome]} {outcome.word}"

    failed = ", ".join(count(outcome) for outcome in FAILED_RECORD_OUTCOMES)
    lines.append(
        f"worker    {since}: {executions} invocation(s), "
        f"{invocation_errors}; {summary['records']} record(s) of "
        f"{summary['messages']} message(s): {count(Delivery.ACCEPTED)}, {count(Delivery.DUPLICATE)}, "
        f"{summary['failed_records']} failed ({failed})"
    )
    if len(shown) < (summary["records"] or 0):
        lines.append(f"          the last {len(shown)} records:")
    widths = (
        max((len(_order_id(d)) for d in shown), default=0),
        max((len(OUTCOME_WORDS[d["outcome"]]) for d in shown), default=0),
    )
    lines += [f"          {delivery_line(d, widths)}" for d in shown]
    return lines
