"""The one place for physical names and context: every name derives from the prefix, every
context value is validated here, and synth stops with a one-line message naming a bad value."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from idempotent_consumer.alarms import ALARMS, DEAD_LETTER_EXPIRY_WARNING_DAYS, AlarmSettings
from idempotent_consumer.rules import (
    DLQ_AUDIT_STREAM,
    FUNCTION_MEMORY_MB,
    MAX_ORDER_RETENTION_DAYS,
    MAX_PRODUCER_RESEND_DAYS,
    MAX_RETENTION_DAYS,
    MIN_FUNCTION_TIMEOUT_SECONDS,
    VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO,
    ConsumerNames,
    alarm_settings,
    dead_letter_days,
    redelivery_window_days,
)
from stacks.lambda_code import LAMBDA_SOURCE, contract

if TYPE_CHECKING:
    from idempotent_consumer import ConsumerProps

# Re-exported for the tools and tests that read them with the lab's context.
__all__ = [
    "DLQ_AUDIT_STREAM",
    "FUNCTION_MEMORY_MB",
    "MAX_RETENTION_DAYS",
    "MIN_FUNCTION_TIMEOUT_SECONDS",
    "VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO",
    "dead_letter_days",
    "redelivery_window_days",
]

DEFAULT_PREFIX = "labex-q05"

# What the worker reads and emits, from the contract it ships with (lib/src/guarded_consumer/contract.py):
# its environment variables, the namespace of its decision metrics, the decisions.
_CONTRACT = contract()
WORKER_TABLE_ENV = _CONTRACT.TABLE_NAME_ENV
WORKER_METRICS_NAMESPACE_ENV = _CONTRACT.METRICS_NAMESPACE_ENV
WORKER_RETENTION_ENV = _CONTRACT.ORDER_RETENTION_SECONDS_ENV
ORDER_EXPIRY_ATTRIBUTE = _CONTRACT.EXPIRES_AT_FIELD
METRICS_NAMESPACE = _CONTRACT.METRICS_NAMESPACE
DECISION_METRICS = _CONTRACT.DECISIONS

# The item the stack seeds into the reference table. Nothing of the worker may touch it; the
# lab checks it still reads "keep unchanged" after the run.
REFERENCE_ITEM = {"id": "reference", "note": "keep unchanged"}

MIN_RECEIVE_COUNT = 5
LOCAL_MIN_RECEIVE_COUNT = 2

REMOVAL_CHOICES = ("retain", "destroy")
TARGET_CHOICES = ("aws", "local")
BOOLEAN_CHOICES = ("false", "true")

# Lowercase letters, digits and inner hyphens; short enough that the longest derived name
# (`<prefix>-reference-seeder`, a Lambda name, max 64) and queue names (max 80) stay valid.
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9-]{0,38}[a-z0-9]$")

CONTEXT_DEFAULTS: dict[str, Any] = {
    "prefix": DEFAULT_PREFIX,
    "batch_size": 1,
    "removal": "retain",
    "visibility_timeout_seconds": 30,
    "function_timeout_seconds": 5,
    "max_receive_count": 5,
    "target": "aws",
    # Concurrent worker invocations the event source mapping may run (2..1000). 10 keeps the
    # worker's share of the account's default 1,000 concurrent executions at 1% and the orders
    # table's write rate bounded, while serving hundreds of orders a second at batch size 1.
    "max_concurrency": 10,
    "oldest_job_age_alarm_seconds": 300,
    "alarm_email": "",
    # SQS counts a standard queue's message expiry from its first enqueue, also after a move to
    # the dead-letter queue, and advises a DLQ retention longer than the source's: a dead letter
    # then has at least the difference (7 days here) in the DLQ, whatever its backlog was. A FIFO
    # queue resets the enqueue time at the move: a dead letter has the DLQ's whole retention.
    "job_retention_days": 7,
    "dead_letter_retention_days": 14,
    # None: order items are kept for ever, the guard never lapses. N: DynamoDB may delete an order
    # N days after its write, which must outlast every copy that can still be delivered
    # (redelivery_window_days: 21 days with the defaults, 28 with fifo).
    "order_retention_days": "",
    # How many days after its first send a producer may send the same order again (its outbox,
    # a replay). 0: it sends once, SDK retries within seconds, covered by DynamoDB deleting
    # expired items only some time after their expiry and by the write coming after the send.
    "producer_resend_days": 0,
    # `key=value,key2=value2`: tags on every resource of the stack that takes tags.
    "tags": "",
    # X-Ray active tracing of the worker; adds the two X-Ray actions to its role.
    "tracing": "false",
    # FIFO jobs queue and DLQ (`<prefix>-jobs.fifo`, `<prefix>-jobs-dlq.fifo`): orders of one
    # message group reach the worker in order, and it stops a batch at its first failure.
    "fifo": "false",
    # With fifo: SQS takes a SHA-256 of the body as the deduplication id when a send gives none.
    "content_based_deduplication": "false",
}
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# "Tag naming limits and requirements" (Tagging AWS Resources): letters, digits, spaces and
# _ . : / = + - @; keys 1-128 characters, values up to 256; `aws:` is reserved; at most 50 per
# resource. A key cannot hold `=` or `,` here, a value no `,`: they separate the pairs.
_TAG_KEY_RE = re.compile(r"^[\w .:/+\-@]{1,128}$")
_TAG_VALUE_RE = re.compile(r"^[\w .:/=+\-@]{0,256}$")
MAX_TAGS = 50


class ConfigError(ValueError):
    """A context value that cannot produce a valid stack."""


@dataclass(frozen=True)
class Names(ConsumerNames):
    """The lab's physical names, all derived from one prefix: the consumer's and its stack's, its
    reference table's and its seeder's."""

    prefix: str = DEFAULT_PREFIX

    @property
    def stack(self) -> str:
        return f"{self.prefix}-consumer"

    @property
    def jobs_queue(self) -> str:
        return f"{self.prefix}-jobs{self._queue_suffix}"

    @property
    def dead_letter_queue(self) -> str:
        return f"{self.prefix}-jobs-dlq{self._queue_suffix}"

    @property
    def orders_table(self) -> str:
        return f"{self.prefix}-orders"

    @property
    def reference_table(self) -> str:
        return f"{self.prefix}-reference"

    @property
    def worker_function(self) -> str:
        return f"{self.prefix}-worker"

    @property
    def seeder_function(self) -> str:
        return f"{self.prefix}-reference-seeder"

    @property
    def dlq_audit_log_group(self) -> str:
        return f"{self.prefix}-dlq-audit"

    @property
    def operator_policy(self) -> str:
        return f"{self.prefix}-operator"

    @property
    def alarm_topic(self) -> str:
        return f"{self.prefix}-alarms"

    def alarm(self, what: str) -> str:
        """`<prefix>-conflicting-orders`, `<prefix>-dead-letters`, ... (`what` from ALARMS)."""
        return f"{self.prefix}-{what}"

    @property
    def alarms(self) -> tuple[str, ...]:
        """The full names of every alarm of the stack, in ALARMS' order."""
        return tuple(self.alarm(what) for what in ALARMS)

    @property
    def dashboard(self) -> str:
        return self.prefix

    def query(self, what: str) -> str:
        return f"{self.prefix}/{what}"


@dataclass(frozen=True)
class StackConfig:
    """Validated context for one synth."""

    names: Names
    batch_size: int
    removal: str
    visibility_timeout_seconds: int
    function_timeout_seconds: int
    max_receive_count: int
    target: str
    max_concurrency: int = CONTEXT_DEFAULTS["max_concurrency"]
    oldest_job_age_alarm_seconds: int = CONTEXT_DEFAULTS["oldest_job_age_alarm_seconds"]
    alarm_email: str | None = None
    job_retention_days: int = CONTEXT_DEFAULTS["job_retention_days"]
    dead_letter_retention_days: int = CONTEXT_DEFAULTS["dead_letter_retention_days"]
    order_retention_days: int | None = None
    producer_resend_days: int = CONTEXT_DEFAULTS["producer_resend_days"]
    tags: tuple[tuple[str, str], ...] = ()
    tracing: bool = False
    content_based_deduplication: bool = False

    @property
    def fifo(self) -> bool:
        return self.names.fifo

    @property
    def destroy_on_removal(self) -> bool:
        return self.removal == "destroy"

    @property
    def dead_letter_days_guaranteed(self) -> int:
        """Days every dead letter has in the DLQ at least: on a standard queue expiry counts from
        the first enqueue, and a job waits in the jobs queue at most its retention; on a FIFO queue
        from the move into the DLQ ("Setting-up dead-letter queue retention")."""
        return dead_letter_days(self.fifo, self.job_retention_days, self.dead_letter_retention_days)

    @property
    def redelivery_window_days(self) -> int:
        """Days after an order's first send that a copy of it can still reach the worker
        (redelivery_window_days below)."""
        return redelivery_window_days(
            self.fifo, self.job_retention_days, self.dead_letter_retention_days, self.producer_resend_days
        )

    @property
    def order_retention_seconds(self) -> int | None:
        return None if self.order_retention_days is None else self.order_retention_days * 86_400

    @property
    def dead_letter_expiry_alarm_days(self) -> int:
        """Time in the DLQ after which a dead letter may be DEAD_LETTER_EXPIRY_WARNING_DAYS from its
        expiry: dead-letter-expiry must have fired by then (dead_letter_expiry_periods)."""
        return max(0, self.dead_letter_days_guaranteed - DEAD_LETTER_EXPIRY_WARNING_DAYS)

    @property
    def alarm_settings(self) -> AlarmSettings:
        """What the alarm table (idempotent_consumer/alarms.py) takes from this config."""
        return alarm_settings(
            fifo=self.fifo,
            job_days=self.job_retention_days,
            dead_days=self.dead_letter_retention_days,
            oldest_job_age_alarm_seconds=self.oldest_job_age_alarm_seconds,
        )

    def props(self) -> ConsumerProps:
        """The lab's consumer as the construct takes it: its names, the lab's worker
        (lambda/worker), and every setting of this context."""
        from aws_cdk import RemovalPolicy

        from idempotent_consumer import ConsumerProps

        return ConsumerProps(
            handler=LAMBDA_SOURCE / "worker",
            function_description="Idempotent order worker: one conditional PutItem per order id",
            names=self.names,
            batch_size=self.batch_size,
            max_concurrency=self.max_concurrency,
            fifo=self.fifo,
            content_based_deduplication=self.content_based_deduplication,
            visibility_timeout_seconds=self.visibility_timeout_seconds,
            function_timeout_seconds=self.function_timeout_seconds,
            max_receive_count=self.max_receive_count,
            job_retention_days=self.job_retention_days,
            dead_letter_retention_days=self.dead_letter_retention_days,
            order_retention_days=self.order_retention_days,
            producer_resend_days=self.producer_resend_days,
            removal_policy=RemovalPolicy.DESTROY if self.destroy_on_removal else RemovalPolicy.RETAIN,
            tracing=self.tracing,
            alarm_email=self.alarm_email,
            oldest_job_age_alarm_seconds=self.oldest_job_age_alarm_seconds,
            metrics_namespace=METRICS_NAMESPACE,
        )

    def options(self) -> dict[str, Any]:
        """The context values that shaped this stack, by CONTEXT_DEFAULTS' keys, as the stack's
        `Options` output carries them for `ops status` and the live view. Tags by key only and the
        alarm email as whether there is one: anyone who may describe the stack reads its outputs."""
        return {
            "prefix": self.names.prefix,
            "batch_size": self.batch_size,
            "removal": self.removal,
            "visibility_timeout_seconds": self.visibility_timeout_seconds,
            "function_timeout_seconds": self.function_timeout_seconds,
            "max_receive_count": self.max_receive_count,
            "target": self.target,
            "max_concurrency": self.max_concurrency,
            "oldest_job_age_alarm_seconds": self.oldest_job_age_alarm_seconds,
            "alarm_email": bool(self.alarm_email),  # whether one is subscribed, not the address
            "job_retention_days": self.job_retention_days,
            "dead_letter_retention_days": self.dead_letter_retention_days,
            "order_retention_days": self.order_retention_days,
            "producer_resend_days": self.producer_resend_days,
            "tags": [key for key, _ in self.tags],
            "tracing": self.tracing,
            "fifo": self.fifo,
            "content_based_deduplication": self.content_based_deduplication,
        }

    @classmethod
    def from_context(cls, get: Mapping[str, Any] | Any) -> StackConfig:
        """Build from a mapping or from a callable like `node.try_get_context`."""
        lookup = get.get if isinstance(get, Mapping) else get

        def value(key: str) -> Any:
            found = lookup(key)
            return CONTEXT_DEFAULTS[key] if found is None else found

        prefix = value("prefix")
        if not isinstance(prefix, str) or not _PREFIX_RE.match(prefix) or "--" in prefix:
            raise ConfigError(
                f"context prefix={prefix!r} is invalid: use 2-40 lowercase letters, digits and "
                "single inner hyphens, starting with a letter"
            )
        batch_size = _int(value("batch_size"), "batch_size", 1, 10)
        visibility = _int(value("visibility_timeout_seconds"), "visibility_timeout_seconds", 1, 43200)
        timeout = _int(
            value("function_timeout_seconds"), "function_timeout_seconds", MIN_FUNCTION_TIMEOUT_SECONDS, 900
        )
        if visibility < VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO * timeout:
            raise ConfigError(
                f"context visibility_timeout_seconds={visibility} is below "
                f"{VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO} x function_timeout_seconds={timeout} "
                f"(needs at least {VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO * timeout})"
            )
        removal = _choice(value("removal"), "removal", REMOVAL_CHOICES)
        target = _choice(value("target"), "target", TARGET_CHOICES)
        # AWS advises at least 5 receives so that throttled batches (which count) do not reach the
        # DLQ. A local run may go down to 2: tests that wait for dead letters wait receives x
        # visibility timeout, and nothing else shares its functions' concurrency.
        max_receive = _int(
            value("max_receive_count"),
            "max_receive_count",
            LOCAL_MIN_RECEIVE_COUNT if target == "local" else MIN_RECEIVE_COUNT,
            1000,
        )
        # Lambda's ScalingConfig.MaximumConcurrency range for SQS event source mappings.
        max_concurrency = _int(value("max_concurrency"), "max_concurrency", 2, 1000)
        # SQS keeps a message at most 14 days; an age threshold beyond that could never fire.
        oldest_age = _int(value("oldest_job_age_alarm_seconds"), "oldest_job_age_alarm_seconds", 60, 1209600)
        job_days = _int(value("job_retention_days"), "job_retention_days", 1, MAX_RETENTION_DAYS - 1)
        dead_days = _int(
            value("dead_letter_retention_days"), "dead_letter_retention_days", 2, MAX_RETENTION_DAYS
        )
        fifo = _flag(value("fifo"), "fifo")
        if dead_days <= job_days:
            # On FIFO queues the DLQ's retention restarts at the move; SQS still advises it longer.
            why = (
                "SQS advises a DLQ retention longer than the source's"
                if fifo
                else "SQS counts a dead letter's expiry from its first enqueue"
            )
            raise ConfigError(
                f"context dead_letter_retention_days={dead_days} is invalid: it must exceed "
                f"job_retention_days={job_days} ({why})"
            )
        resend_days = _int(value("producer_resend_days"), "producer_resend_days", 0, MAX_PRODUCER_RESEND_DAYS)
        raw_retention = value("order_retention_days")
        order_days = (
            None
            if raw_retention == ""
            else _int(raw_retention, "order_retention_days", 1, MAX_ORDER_RETENTION_DAYS)
        )
        window = redelivery_window_days(fifo, job_days, dead_days, resend_days)
        if order_days is not None and order_days < window:
            jobs_term = f"2 x job_retention_days={job_days}" if fifo else f"job_retention_days={job_days}"
            why = ": a FIFO queue restarts a message's retention at its move into the DLQ" if fifo else ""
            raise ConfigError(
                f"context order_retention_days={order_days} is shorter than the {window} days a copy of "
                f"an order can still be delivered ({jobs_term} + dead_letter_retention_days={dead_days} "
                f"+ producer_resend_days={resend_days}{why})"
            )
        content_dedup = _flag(value("content_based_deduplication"), "content_based_deduplication")
        if content_dedup and not fifo:
            raise ConfigError(
                "context content_based_deduplication=true needs fifo=true: only a FIFO queue deduplicates"
            )
        alarm_email = value("alarm_email") or None
        if alarm_email is not None and (not isinstance(alarm_email, str) or not _EMAIL_RE.match(alarm_email)):
            raise ConfigError(
                f"context alarm_email={alarm_email!r} is invalid: use an email address, or leave it out"
            )
        return cls(
            names=Names(prefix, fifo=fifo),
            batch_size=batch_size,
            removal=removal,
            visibility_timeout_seconds=visibility,
            function_timeout_seconds=timeout,
            max_receive_count=max_receive,
            target=target,
            max_concurrency=max_concurrency,
            oldest_job_age_alarm_seconds=oldest_age,
            alarm_email=alarm_email,
            job_retention_days=job_days,
            dead_letter_retention_days=dead_days,
            order_retention_days=order_days,
            producer_resend_days=resend_days,
            tags=_tags(value("tags")),
            tracing=_flag(value("tracing"), "tracing"),
            content_based_deduplication=content_dedup,
        )


def _int(raw: Any, key: str, low: int, high: int) -> int:
    # `-c key=3` arrives as the string "3", cdk.json gives an int; a bool is neither.
    if isinstance(raw, bool):
        parsed = None
    elif isinstance(raw, int):
        parsed = raw
    elif isinstance(raw, str) and re.fullmatch(r"[0-9]+", raw.strip()):
        parsed = int(raw.strip())
    else:
        parsed = None
    if parsed is None or not low <= parsed <= high:
        raise ConfigError(f"context {key}={raw!r} is invalid: use a whole number from {low} to {high}")
    return parsed


def _tags(raw: Any) -> tuple[tuple[str, str], ...]:
    """`key=value,key2=value2` as pairs in the given order; "" is none."""
    if not isinstance(raw, str):
        raise ConfigError(f"context tags={raw!r} is invalid: use key=value,key2=value2")
    pairs: list[tuple[str, str]] = []
    for entry in raw.split(",") if raw.strip() else []:
        key, sep, tag_value = entry.partition("=")
        key, tag_value = key.strip(), tag_value.strip()
        if not sep or not key:
            problem = f"{entry!r} is not key=value"
        elif not _TAG_KEY_RE.match(key):
            problem = f"key {key!r} must be 1-128 letters, digits, spaces or _.:/+-@"
        elif key.lower().startswith("aws:"):
            problem = f"key {key!r} uses the prefix aws:, which AWS reserves"
        elif not _TAG_VALUE_RE.match(tag_value):
            problem = f"value {tag_value!r} of {key} must be up to 256 letters, digits, spaces or _.:/=+-@"
        elif key in dict(pairs):
            problem = f"key {key!r} is given twice"
        else:
            pairs.append((key, tag_value))
            continue
        raise ConfigError(f"context tags={raw!r} is invalid: {problem}")
    if len(pairs) > MAX_TAGS:
        raise ConfigError(f"context tags has {len(pairs)} tags: AWS allows at most {MAX_TAGS} per resource")
    return tuple(pairs)


def _flag(raw: Any, key: str) -> bool:
    # cdk.json may hold a JSON boolean, `-c tracing=true` gives a string.
    return _choice(str(raw).lower(), key, BOOLEAN_CHOICES) == "true"


def _choice(raw: Any, key: str, choices: tuple[str, ...]) -> str:
    if raw not in choices:
        raise ConfigError(f"context {key}={raw!r} is invalid: use one of {', '.join(choices)}")
    return choices[choices.index(raw)]
