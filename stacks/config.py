"""The one place for physical names and context: every name derives from the prefix, every
context value is validated here, and synth stops with a one-line message naming a bad value."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stacks.alarms import (
    ALARMS,
    DEAD_LETTER_EXPIRY_WARNING_DAYS,
    AlarmSettings,
    dead_letter_expiry_age_seconds,
    dead_letter_expiry_periods,
)
from stacks.lambda_code import contract

DEFAULT_PREFIX = "labex-q05"

# What the worker reads and emits, from the contract it ships with (lambda/worker/order_contract.py):
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

# Lambda: "set the source queue's visibility timeout to at least six times the timeout that you
# configure on your function", so a retried batch is not delivered again while still running.
VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO = 6

# The worker starts a write only if one whole attempt (its client's connect and read timeouts,
# 1.3 s, and a margin) can end before the function's deadline; a shorter timeout could write
# nothing. tests/unit/test_worker_dynamodb.py pins that the two agree.
MIN_FUNCTION_TIMEOUT_SECONDS = 2

# Both functions' memory. Lambda gives a function CPU in proportion to it (one vCPU at 1,769
# MB), and the worker's CPU per order is what it spends most of its billed time on
# (docs/benchmarks.md): 256 MB leaves room for boto3 and is billed as a quarter of a GB.
FUNCTION_MEMORY_MB = 256

MIN_RECEIVE_COUNT = 5
LOCAL_MIN_RECEIVE_COUNT = 2

# The one log stream of `<prefix>-dlq-audit` that discards are recorded in (ops/dlq.py); the
# operator policy may write to it and no other.
DLQ_AUDIT_STREAM = "discards"

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
# SQS's MessageRetentionPeriod range is 60 s to 14 days; whole days here.
MAX_RETENTION_DAYS = 14
# Upper bounds that only keep a typo out: a century of orders, ten years of resends.
MAX_ORDER_RETENTION_DAYS = 36_500
MAX_PRODUCER_RESEND_DAYS = 3_650
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
class Names:
    """Physical names, all derived from one prefix."""

    prefix: str
    # SQS: "The name of a FIFO queue must end with the .fifo suffix" (CreateQueue).
    fifo: bool = False

    @property
    def stack(self) -> str:
        return f"{self.prefix}-consumer"

    @property
    def _queue_suffix(self) -> str:
        return ".fifo" if self.fifo else ""

    @property
    def jobs_queue(self) -> str:
        return f"{self.prefix}-jobs{self._queue_suffix}"

    @property
    def dead_letter_queue(self) -> str:
        # "The dead-letter queue of a FIFO queue must also be a FIFO queue" (SQS dead-letter queues).
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

    @staticmethod
    def log_group_of(function_name: str) -> str:
        return f"/aws/lambda/{function_name}"


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
        """What the alarm table (stacks/alarms.py) takes from this config."""
        warn_within = self.dead_letter_expiry_alarm_days * 86_400
        return AlarmSettings(
            oldest_job_age_alarm_seconds=self.oldest_job_age_alarm_seconds,
            dead_letter_days_guaranteed=self.dead_letter_days_guaranteed,
            dead_letter_expiry_periods=dead_letter_expiry_periods(warn_within),
            fifo=self.fifo,
            dead_letter_expiry_counted_from="its move into the DLQ" if self.fifo else "its first enqueue",
            dead_letter_expiry_age_seconds=dead_letter_expiry_age_seconds(warn_within) if self.fifo else 0,
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


def dead_letter_days(fifo: bool, job_days: int, dead_days: int) -> int:
    """Days a dead letter has in the DLQ at least: all of the DLQ's retention on a FIFO queue (its
    enqueue time resets at the move), else what the jobs queue may have used of it."""
    return dead_days if fifo else dead_days - job_days


def redelivery_window_days(fifo: bool, job_days: int, dead_days: int, resend_days: int) -> int:
    """Days after an order's first send that a copy of it can still reach the worker: the
    producer's resend window, then a copy that waits out its DLQ life and is sent back by `ops dlq`
    as a new message that waits the jobs retention again. A standard dead letter's DLQ life ends
    at its first enqueue plus the DLQ's retention; a FIFO one's at its move, which may come a
    whole jobs retention after the send, plus the DLQ's retention."""
    dlq_life_ends = job_days + dead_days if fifo else dead_days
    return resend_days + dlq_life_ends + job_days


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
