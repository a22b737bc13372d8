"""The table of the stack's alarms: one declaration per alarm, from which the stack makes the alarms
and the topic policy, the dashboard shows them, docs/operations.md's alarm table is rendered and
the live view's texts come (each alarm's description). Plain data: `ops` reads it without CDK."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Protocol

from guarded_consumer.contract import Metric

if TYPE_CHECKING:
    from aws_cdk.aws_cloudwatch import IMetric

# The dead-letter-expiry alarm fires this long before the earliest possible expiry of a dead letter.
DEAD_LETTER_EXPIRY_WARNING_DAYS = 2
# It watches the DLQ's depth per hour: PutMetricAlarm (Period) allows Period x EvaluationPeriods
# up to 604,800 s (7 days) for periods of an hour or more, and only one day for shorter ones.
DEAD_LETTER_EXPIRY_PERIOD_SECONDS = 3600
MAX_ALARM_EVALUATION_SECONDS = 604_800
# Hours the warning may come after a dead letter's arrival beyond the N hourly periods: the first
# whole hour starts within an hour of the move, and one more for CloudWatch to collect that
# hour's datapoints and evaluate (docs/operations.md shows the arithmetic). On a FIFO DLQ the
# warning watches the age instead, and fires this much before the time in the DLQ it warns at.
DEAD_LETTER_EXPIRY_SLACK_HOURS = 2
# The per-attempt decision alarms (conflicting-orders, failed-records, malformed-jobs) stay in
# ALARM while one of this many minutes breaches: a failing record comes back once per visibility
# timeout, and one breaching minute per redelivery would flip ALARM/OK/ALARM between them.
DECISION_ALARM_MINUTES = 10
MINUTE = 60


def dead_letter_expiry_periods(warn_within_seconds: float) -> int:
    """Consecutive hourly periods of a non-empty DLQ after which dead-letter-expiry fires, so that
    it fires within `warn_within_seconds` of a dead letter's arrival: that time in whole hours
    less the slack, at least 1, at most what CloudWatch accepts (7 days of hourly periods)."""
    hours = int(warn_within_seconds // DEAD_LETTER_EXPIRY_PERIOD_SECONDS) - DEAD_LETTER_EXPIRY_SLACK_HOURS
    return max(1, min(hours, MAX_ALARM_EVALUATION_SECONDS // DEAD_LETTER_EXPIRY_PERIOD_SECONDS))


def dead_letter_expiry_age_seconds(warn_within_seconds: float) -> int:
    """The FIFO DLQ's ApproximateAgeOfOldestMessage above which dead-letter-expiry fires, so that it
    fires within `warn_within_seconds` of the oldest dead letter's move: that time less the slack.
    SQS counts a FIFO dead letter's age and its expiry both from its move ("Setting-up dead-letter
    queue retention"), so one datapoint of the age is the whole signal: no evaluation window to fit
    into PutMetricAlarm's seven days."""
    return max(0, int(warn_within_seconds) - DEAD_LETTER_EXPIRY_SLACK_HOURS * 3600)


@dataclass(frozen=True)
class AlarmSettings:
    """The context values the alarms depend on; a declaration names them in `{...}` or by field.
    A field that is a context value as given bears its context key and is in CONTEXT_FIELDS (the
    docs print `-c key=` beside it)."""

    oldest_job_age_alarm_seconds: int
    dead_letter_days_guaranteed: int
    dead_letter_expiry_periods: int
    dead_letter_expiry_warning_days: int = DEAD_LETTER_EXPIRY_WARNING_DAYS
    # FIFO queues: a declaration's `fifo` variant is made instead of it.
    fifo: bool = False
    # What a dead letter's expiry counts from: standard queues keep the first enqueue, FIFO
    # queues reset it at the move ("Setting-up dead-letter queue retention").
    dead_letter_expiry_counted_from: str = "its first enqueue"
    dead_letter_expiry_age_seconds: int = 0  # the FIFO warning's threshold


# The settings fields that are context values as given: the docs print `-c key=` beside them.
CONTEXT_FIELDS = ("oldest_job_age_alarm_seconds",)


class Watched(Protocol):
    """The resources the alarms watch, as metrics of one statistic over `period` seconds
    (lib/src/idempotent_consumer/monitoring.py builds them from the stack's queue, DLQ, function and table)."""

    def decision(self, name: str, statistic: str, period: int) -> IMetric: ...
    def jobs(self, name: str, statistic: str, period: int) -> IMetric: ...
    def dead_letter_depth(self, statistic: str, period: int, label: str) -> IMetric: ...
    def dead_letters(self, name: str, statistic: str, period: int) -> IMetric: ...
    def new_dead_letters(self, statistic: str, period: int) -> IMetric: ...
    def worker(self, name: str, statistic: str, period: int) -> IMetric: ...
    def orders_table(self, name: str, statistic: str, period: int) -> IMetric: ...


MetricOf = Callable[[Watched, str, int], "IMetric"]
# The operators' tool as the docs spell it (run from the repository, its venv).
OPS = ".venv/bin/python -m ops"
COMPARISONS = {"GreaterThanOrEqualToThreshold": ">=", "GreaterThanThreshold": ">"}
PERIOD_WORDS = {MINUTE: "minute", DEAD_LETTER_EXPIRY_PERIOD_SECONDS: "hour"}


@dataclass(frozen=True)
class AlarmDeclaration:
    """One alarm: what it watches, when it fires, what it means and what to do first. A threshold
    or count given as a string is the AlarmSettings field of that name; `means` and `what_to_do`
    may name AlarmSettings fields in braces. The alarm's description is `means what_to_do`."""

    what: str  # the name after the prefix
    metric: MetricOf  # (watched, statistic, period seconds) -> the metric
    watches: str  # the metric in the docs' words; `{statistic}` stands for the statistic
    statistic: str
    threshold: float | str
    comparison: str  # CloudFormation's ComparisonOperator
    means: str
    what_to_do: str
    period: int = MINUTE  # seconds
    periods: int | str = 1  # EvaluationPeriods (N)
    datapoints: int | str = 1  # DatapointsToAlarm (M of N)
    missing_data: str = "notBreaching"  # TreatMissingData
    unit: str = ""
    fifo: AlarmDeclaration | None = None  # what is made instead on FIFO queues (same `what`)
    first_command: str = f"{OPS} status"  # what an operator runs first (docs/operations.md's runbook)
    steps: str = ""  # what to do next, the runbook's words (the description's `what_to_do` if empty)

    def resolved(self, settings: AlarmSettings) -> ResolvedAlarm:
        """This declaration (or its FIFO variant, on FIFO queues) with the settings' values in place."""
        if settings.fifo and self.fifo is not None:
            return self.fifo.resolved(settings)
        values = {field.name: getattr(settings, field.name) for field in fields(settings)}

        def number(value: float | str) -> float:
            return values[value] if isinstance(value, str) else value

        return ResolvedAlarm(
            self,
            threshold=number(self.threshold),
            periods=int(number(self.periods)),
            datapoints=int(number(self.datapoints)),
            means=self.means.format(**values),
            what_to_do=self.what_to_do.format(**values),
        )


@dataclass(frozen=True)
class ResolvedAlarm:
    """An alarm declaration for one deployment's settings: what the stack makes and the docs show."""

    declaration: AlarmDeclaration
    threshold: float
    periods: int
    datapoints: int
    means: str
    what_to_do: str

    @property
    def what(self) -> str:
        return self.declaration.what

    @property
    def description(self) -> str:
        """The alarm's AlarmDescription: what the notification and the live view say."""
        return f"{self.means} {self.what_to_do}"

    def metric(self, watched: Watched) -> IMetric:
        return self.declaration.metric(watched, self.declaration.statistic, self.declaration.period)

    def fires_when(self) -> str:
        """`Conflict` (Sum) >= 1 in any of the last 10 minutes, and so on."""
        spec = self.declaration
        number = (
            f"{int(self.threshold):,}" if self.threshold == int(self.threshold) else f"{self.threshold:g}"
        )
        threshold = f"{number}{spec.unit}"
        if spec.threshold in CONTEXT_FIELDS:
            threshold += f" (`-c {spec.threshold}=`)"
        unit = PERIOD_WORDS[spec.period]
        n, m = self.periods, self.datapoints
        if n == 1:
            window = f"in a {unit}"
        elif m == 1:
            window = f"in any of the last {n} {unit}s"
        elif m == n:
            window = f"in each of {n} consecutive {unit}s"
        else:
            window = f"in {m} of the last {n} {unit}s"
        watches = spec.watches.format(statistic=spec.statistic)
        return f"{watches} {COMPARISONS[spec.comparison]} {threshold} {window}"

    def runbook_section(self) -> str:
        """This alarm's section of docs/operations.md's runbook: what it means, when it fires, the
        command to run first and what to do next."""
        return "\n".join(
            [
                f"### `<prefix>-{self.what}`",
                "",
                f"{self.means.rstrip(':').rstrip('.')}. Fires when {self.fires_when()}.",
                "",
                f"First: `{self.declaration.first_command}`. Then: {self.declaration.steps or self.what_to_do}",
            ]
        )

    def doc_row(self) -> str:
        """This alarm's row of docs/operations.md's alarm table."""
        cells = (f"`<prefix>-{self.what}`", self.fires_when(), self.means.rstrip(":"), self.what_to_do)
        return "| " + " | ".join(cells) + " |"


GE, GT = "GreaterThanOrEqualToThreshold", "GreaterThanThreshold"
DLQ_DEPTH = "Dead letters (visible + in flight)"
DLQ_DEPTH_HOURLY = "Dead letters in the hour (visible + in flight)"
DLQ_DEPTH_WORDS = (
    "DLQ `ApproximateNumberOfMessagesVisible` + `ApproximateNumberOfMessagesNotVisible` ({statistic} each)"
)

# Every alarm of the stack, in the order the stack makes them. An alarm's name is
# `<prefix>-<what>` (stacks.config.Names.alarm).
TABLE: tuple[AlarmDeclaration, ...] = (
    AlarmDeclaration(
        "conflicting-orders",
        lambda w, stat, period: w.decision(Metric.CONFLICT, stat, period),
        f"`{Metric.CONFLICT.value}` ({{statistic}})",
        "Sum",
        1,
        GE,
        "An order id arrived with other details than the stored order.",
        "It is never acknowledged and will reach the dead-letter queue: compare both (ops dlq list), "
        "then discard or fix the producer. See docs/operations.md.",
        periods=DECISION_ALARM_MINUTES,
        first_command=f"{OPS} dlq list",
        steps=(
            "`ops dlq list` shows the requested and the stored details side by side, and the saved "
            "query `<prefix>/decisions-for-one-order` every delivery of that id. Agree with the "
            "producer which details are right; the stored order stays as it is, so discard the copy "
            "with `ops dlq discard --message-id ID --reason TEXT` (audited)."
        ),
    ),
    AlarmDeclaration(
        "failed-records",
        lambda w, stat, period: w.decision(Metric.ERROR, stat, period),
        f"`{Metric.ERROR.value}` ({{statistic}})",
        "Sum",
        1,
        GE,
        "The worker could not write a record (access denied, a missing table, throttling past its "
        "retries, a timeout): it is retried and reaches the dead-letter queue if the cause stays.",
        "Read the ERROR line (errors-by-class query), fix the cause, then redrive.",
        periods=DECISION_ALARM_MINUTES,
        steps=(
            "The saved query `<prefix>/errors-by-class` counts the `ERROR` lines by class: "
            "`AccessDeniedException` is a missing permission, `ResourceNotFoundException` a missing "
            "table, `ProvisionedThroughputExceededException` throttling, `OutOfTime` a worker out of "
            "time. Fix the cause (the records are retried meanwhile), then `ops dlq redrive` sends "
            "back those that reached the DLQ."
        ),
    ),
    AlarmDeclaration(
        "malformed-jobs",
        lambda w, stat, period: w.decision(Metric.MALFORMED, stat, period),
        f"`{Metric.MALFORMED.value}` ({{statistic}})",
        "Sum",
        1,
        GE,
        "A job body is not a valid order (the ERROR line names the field).",
        "It can never be written and will reach the dead-letter queue: fix the producer, then discard it.",
        periods=DECISION_ALARM_MINUTES,
        first_command=f"{OPS} dlq list",
        steps=(
            "The `ERROR` line names the field and its value. Fix the producer: the body can never be "
            "written; once it is in the DLQ, discard it with a reason."
        ),
    ),
    # Not NumberOfMessagesSent: SQS's own moves to a dead-letter queue do not count there. Visible
    # plus in flight: an operator listing the DLQ holds its messages invisible, which is not the
    # DLQ emptying (nor, when released, new dead letters).
    AlarmDeclaration(
        "dead-letters",
        lambda w, stat, period: w.dead_letter_depth(stat, period, DLQ_DEPTH),
        DLQ_DEPTH_WORDS,
        "Maximum",
        1,
        GE,
        "Messages wait in the dead-letter queue for a human.",
        "Each one is kept there at least {dead_letter_days_guaranteed} days (expiry counts from "
        "{dead_letter_expiry_counted_from}): ops dlq list, then redrive or discard.",
        first_command=f"{OPS} dlq list",
        steps=(
            "`ops dlq list` classifies each message: `pending` (not stored), `stored` (a duplicate), "
            "`lapsing`, `conflict`, `malformed`. Fix the cause of the pending ones, then `ops dlq "
            "redrive` sends the pending and stored ones back (safe to run twice); discard conflicts "
            "and malformed ones with a reason (`ops dlq audit` lists the discards)."
        ),
    ),
    # Arrivals in a minute: the depth's rise plus what was deleted from the DLQ meanwhile (an
    # operator's discard, a redrive's moves), so a redrive moving as many as arrive does not
    # cancel them. A new dead letter notifies also while older ones still wait (dead-letters
    # stays in ALARM then, and CloudWatch notifies on state changes only).
    AlarmDeclaration(
        "new-dead-letters",
        lambda w, stat, period: w.new_dead_letters(stat, period),
        "`DIFF` of the DLQ's depth ({statistic} each) plus its `NumberOfMessagesDeleted` (Sum)",
        "Maximum",
        1,
        GE,
        "A message arrived in the dead-letter queue within the last minute, also while older ones "
        "wait there or a redrive is moving others out:",
        "ops dlq list shows it.",
        first_command=f"{OPS} dlq list",
        steps=(
            "It notifies each arrival, also while `dead-letters` is already in ALARM: follow `dead-letters`."
        ),
    ),
    # Not ApproximateAgeOfOldestMessage: in a standard queue SQS leaves out of it a message
    # received three or more times and not deleted, and every `ops dlq` listing is a receive.
    # A dead letter is in the depth (visible + in flight) every hour it is in the DLQ however
    # often it is read; Maximum per statistic, so a message moving between the two within
    # the hour is never missed (the sum of two Minimums could be 0).
    AlarmDeclaration(
        "dead-letter-expiry",
        lambda w, stat, period: w.dead_letter_depth(stat, period, DLQ_DEPTH_HOURLY),
        DLQ_DEPTH_WORDS,
        "Maximum",
        1,
        GE,
        "The dead-letter queue has not been empty for {dead_letter_expiry_periods} hours in a row: a "
        "dead letter in it may expire within {dead_letter_expiry_warning_days} days and be lost "
        "(reading it does not stop this).",
        "ops dlq list, then redrive or discard now.",
        period=DEAD_LETTER_EXPIRY_PERIOD_SECONDS,
        periods="dead_letter_expiry_periods",
        datapoints="dead_letter_expiry_periods",
        # A FIFO dead letter has the DLQ's whole retention from its move, too long for hours of
        # depth (PutMetricAlarm: 7 days of Period x EvaluationPeriods), and its age counts from
        # the same move: the age tells each dead letter's expiry directly. SQS leaves a message
        # received three or more times out of the age only in standard queues ("Available
        # CloudWatch metrics for Amazon SQS": FIFO queues do not reorder); docs/operations.md.
        fifo=AlarmDeclaration(
            "dead-letter-expiry",
            lambda w, stat, period: w.dead_letters("ApproximateAgeOfOldestMessage", stat, period),
            "DLQ `ApproximateAgeOfOldestMessage` ({statistic})",
            "Maximum",
            "dead_letter_expiry_age_seconds",
            GT,
            "A dead letter has waited in the FIFO dead-letter queue longer than the threshold: SQS "
            "expires it {dead_letter_days_guaranteed} days after its move there, about "
            "{dead_letter_expiry_warning_days} days from now, and it is lost.",
            "ops dlq list, then redrive or discard now.",
            unit=" s",
            first_command=f"{OPS} dlq list",
        ),
        first_command=f"{OPS} dlq list",
        steps=(
            "Listing does not clear it: redrive or discard every dead letter. It turns OK after an "
            "hour with the DLQ empty (on FIFO queues, once the oldest letter is gone)."
        ),
    ),
    AlarmDeclaration(
        "oldest-job-age",
        lambda w, stat, period: w.jobs("ApproximateAgeOfOldestMessage", stat, period),
        "jobs `ApproximateAgeOfOldestMessage` ({statistic})",
        "Maximum",
        "oldest_job_age_alarm_seconds",
        GT,
        "The oldest job has waited longer than the threshold:",
        "the worker is not keeping up (see worker-throttles and failed-records) or the mapping is disabled.",
        unit=" s",
        steps=(
            "Check that the mapping is Enabled and that the worker has no errors or throttles. A "
            "healthy worker that is behind needs a higher `max_concurrency` or `batch_size`; one old "
            "message while the rest flows is usually a poison message on its way to the DLQ."
        ),
    ),
    AlarmDeclaration(
        "worker-errors",
        lambda w, stat, period: w.worker("Errors", stat, period),
        "Lambda `Errors` ({statistic})",
        "Sum",
        1,
        GE,
        "The worker function itself failed (an unhandled exception, a timeout, a crash, a runtime "
        "error): its whole batch is retried.",
        "Read the function's log.",
        steps=(
            "It counts invocations that failed as a whole (`Task timed out`, `Runtime.*`, an import "
            "error after a deploy), not failed records; the function's log shows which. Roll back or "
            "fix: the batches return to the queue, and nothing is lost before `maxReceiveCount`."
        ),
    ),
    AlarmDeclaration(
        "worker-throttles",
        lambda w, stat, period: w.worker("Throttles", stat, period),
        "Lambda `Throttles` ({statistic})",
        "Sum",
        1,
        GE,
        "Lambda refused to run the worker: the account's unreserved concurrency is used up, or a "
        "reserved concurrency below the mapping's maximum. Jobs wait and their receive count grows.",
        "Find what took the concurrency, or reserve at least max_concurrency for the worker; raising "
        "max_concurrency does not help (the mapping holds back at it, without throttles).",
        steps=(
            "Check the account's `ConcurrentExecutions` on the dashboard, then reserve concurrency "
            "for the worker of at least `max_concurrency` (raising `max_concurrency` does not help). "
            "Throttled messages come back after the visibility timeout: watch the DLQ."
        ),
    ),
    AlarmDeclaration(
        "orders-throttled",
        lambda w, stat, period: w.orders_table("WriteThrottleEvents", stat, period),
        "the orders table's DynamoDB `WriteThrottleEvents` ({statistic})",
        "Sum",
        1,
        GE,
        "DynamoDB throttled writes to the orders table; the worker retries and, past its budget, "
        "fails the record (failed-records).",
        "Raise the table's capacity if it lasts.",
        steps=(
            "On the dashboard: one hot order id (each copy costs a write unit even when rejected), or"
            " the whole table? Raise the table's on-demand maximum or the account's quota. Throttled "
            "writes are retried and written late, not lost."
        ),
    ),
)

# Every alarm of the stack, by the name after the prefix: the stack makes exactly these, the alarm
# topic admits exactly their ARNs, and ops and the tests read them (through stacks.config).
ALARMS: tuple[str, ...] = tuple(declaration.what for declaration in TABLE)
DOC_TABLE_HEADER = ("| alarm | fires when | means | first step |", "|---|---|---|---|")
FIFO_DOC_TABLE_HEADER = (
    "| alarm, with `-c fifo=true` | fires when | means | first step |",
    DOC_TABLE_HEADER[1],
)


def resolved(settings: AlarmSettings) -> tuple[ResolvedAlarm, ...]:
    """The table for one deployment's settings, in its order."""
    return tuple(declaration.resolved(settings) for declaration in TABLE)


def runbook(settings: AlarmSettings) -> str:
    """docs/operations.md's runbook: one section per alarm, for the settings the docs describe."""
    return "\n\n".join(alarm.runbook_section() for alarm in resolved(settings))


def fifo_doc_table(standard: AlarmSettings, fifo: AlarmSettings) -> str:
    """docs/operations.md's second table: the rows that read otherwise on FIFO queues."""
    rows = [
        on_fifo.doc_row()
        for plain, on_fifo in zip(resolved(standard), resolved(fifo), strict=True)
        if on_fifo.doc_row() != plain.doc_row()
    ]
    return "\n".join([*FIFO_DOC_TABLE_HEADER, *rows])
