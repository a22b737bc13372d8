"""The one place for physical names and context: every name derives from the prefix, every
context value is validated here, and synth stops with a one-line message naming a bad value."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from guarded_consumer import contract as _CONTRACT
from idempotent_consumer.alarms import ALARMS, DEAD_LETTER_EXPIRY_WARNING_DAYS, AlarmSettings
from idempotent_consumer.rules import (
    BOUNDS,
    DLQ_AUDIT_STREAM,
    EMAIL_RE,
    FUNCTION_MEMORY_MB,
    MAX_RETENTION_DAYS,
    MIN_FUNCTION_TIMEOUT_SECONDS,
    PREFIX_RE,
    VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO,
    ConsumerNames,
    alarm_settings,
    dead_letter_days,
    redelivery_window_days,
    settings_problem,
)
from stacks.lambda_code import LAMBDA_SOURCE

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
    """The lab's physical names, all derived from one prefix: the consumer's (ConsumerNames spells
    them; with a prefix always set, none is None here) and its stack's, its reference table's and
    its seeder's."""

    prefix: str = DEFAULT_PREFIX

    def _given(self, name: str | None) -> str:
        if name is None:  # ConsumerNames names nothing only without a prefix
            raise ValueError("a lab name needs a prefix")
        return name

    @property
    def stack(self) -> str:
        return f"{self.prefix}-consumer"

    @property
    def reference_table(self) -> str:
        return f"{self.prefix}-reference"

    @property
    def seeder_function(self) -> str:
        return f"{self.prefix}-reference-seeder"

    @property
    def jobs_queue(self) -> str:
        return self._given(super().jobs_queue)

    @property
    def dead_letter_queue(self) -> str:
        return self._given(super().dead_letter_queue)

    @property
    def orders_table(self) -> str:
        return self._given(super().orders_table)

    @property
    def worker_function(self) -> str:
        return self._given(super().worker_function)

    @property
    def dlq_audit_log_group(self) -> str:
        return self._given(super().dlq_audit_log_group)

    @property
    def operator_policy(self) -> str:
        return self._given(super().operator_policy)

    @property
    def alarm_topic(self) -> str:
        return self._given(super().alarm_topic)

    def alarm(self, what: str) -> str:
        """`<prefix>-conflicting-orders`, `<prefix>-dead-letters`, ... (`what` from ALARMS)."""
        return self._given(super().alarm(what))

    @property
    def alarms(self) -> tuple[str, ...]:
        """The full names of every alarm of the stack, in ALARMS' order."""
        return tuple(self.alarm(what) for what in ALARMS)

    @property
    def dashboard(self) -> str:
        return self._given(super().dashboard)

    def query(self, what: str) -> str:
        return self._given(super().query(what))


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


Reader = Callable[[Any, str, Callable[[str], Any]], Any]


def _bounded(raw: Any, key: str, _value_of: Callable[[str], Any]) -> int:
    """A whole number within the range the construct allows (idempotent_consumer.rules.BOUNDS)."""
    low, high = BOUNDS[key]
    return _int(raw, key, low, high)


def _prefix(raw: Any, key: str, _value_of: Callable[[str], Any]) -> str:
    if not isinstance(raw, str) or not PREFIX_RE.match(raw) or "--" in raw:
        raise ConfigError(
            f"context {key}={raw!r} is invalid: use 2-40 lowercase letters, digits and "
            "single inner hyphens, starting with a letter"
        )
    return raw


def _one_of(choices: tuple[str, ...]) -> Reader:
    return lambda raw, key, _value_of: _choice(raw, key, choices)


def _boolean(raw: Any, key: str, _value_of: Callable[[str], Any]) -> bool:
    return _flag(raw, key)


def _receive_count(raw: Any, key: str, value_of: Callable[[str], Any]) -> int:
    # AWS advises at least 5 receives so that throttled batches (which count) do not reach the
    # DLQ. A local run may go down to 2: tests that wait for dead letters wait receives x
    # visibility timeout, and nothing else shares its functions' concurrency.
    low = LOCAL_MIN_RECEIVE_COUNT if value_of("target") == "local" else MIN_RECEIVE_COUNT
    return _int(raw, key, low, BOUNDS[key][1])


def _email(raw: Any, key: str, _value_of: Callable[[str], Any]) -> str | None:
    email = raw or None
    if email is not None and (not isinstance(email, str) or not EMAIL_RE.match(email)):
        raise ConfigError(f"context {key}={email!r} is invalid: use an email address, or leave it out")
    return email


def _order_retention(raw: Any, key: str, _value_of: Callable[[str], Any]) -> int | None:
    return None if raw == "" else _bounded(raw, key, _value_of)


def _tag_pairs(raw: Any, key: str, _value_of: Callable[[str], Any]) -> tuple[tuple[str, str], ...]:
    return _tags(raw)


def _tag_keys(pairs: tuple[tuple[str, str], ...]) -> list[str]:
    """Tags by key only: anyone who may describe the stack reads its outputs."""
    return [key for key, _ in pairs]


@dataclass(frozen=True)
class ContextKey:
    """One context value, declared once: its default (cdk.json holds the same), how a given value
    is read and checked (one line naming it if it is wrong), what docs/deploy.md's table says of it,
    and how the stack's `Options` output shows it."""

    name: str
    default: Any
    read: Reader  # (the raw value or default, its key, the value of another key) -> the value
    meaning: str
    shown_default: str | None = None  # the table's default column, if not the default as written
    option: Callable[[Any], Any] = lambda value: value

    @property
    def default_text(self) -> str:
        if self.shown_default is not None:
            return self.shown_default
        return f"`{str(self.default).lower() if isinstance(self.default, bool) else self.default}`"

    def row(self) -> str:
        return f"| `{self.name}` | {self.default_text} | {self.meaning} |"


CONTEXT_KEYS: tuple[ContextKey, ...] = (
    ContextKey(
        "prefix",
        DEFAULT_PREFIX,
        _prefix,
        "every physical name: `<prefix>-jobs`, `<prefix>-orders`, `<prefix>-worker`, …",
    ),
    ContextKey(
        "batch_size",
        1,
        _bounded,
        "event source mapping batch size, 1..10",
    ),
    ContextKey(
        "removal",
        "retain",
        _one_of(REMOVAL_CHOICES),
        "`retain`: the stack has termination protection, and `cdk destroy` (once it is turned off) keeps both tables and both queues. `destroy`: unprotected, everything goes (labs, local runs)",
    ),
    ContextKey(
        "visibility_timeout_seconds",
        30,
        _bounded,
        "jobs queue visibility timeout; at least 6x the function timeout",
    ),
    ContextKey(
        "function_timeout_seconds",
        5,
        _bounded,
        "worker timeout",
    ),
    ContextKey(
        "max_receive_count",
        5,
        _receive_count,
        "receives before a message moves to the DLQ: 5 or more, as AWS advises for Lambda consumers (2 or more with `target=local`, for tests)",
    ),
    ContextKey(
        "target",
        "aws",
        _one_of(TARGET_CHOICES),
        "`local` allows `max_receive_count` down to 2 (tests); both targets keep CDK's bootstrap-version rule, which the embedded AWS evaluates",
    ),
    # 10 keeps the worker's share of the account's default 1,000 concurrent executions at 1% and
    # the orders table's write rate bounded, while serving hundreds of orders a second at batch size 1.
    ContextKey(
        "max_concurrency",
        10,
        _bounded,
        "the mapping's `ScalingConfig.MaximumConcurrency` (2..1000)",
    ),
    ContextKey(
        "oldest_job_age_alarm_seconds",
        300,
        _bounded,
        "threshold of the `<prefix>-oldest-job-age` alarm",
    ),
    ContextKey(
        "alarm_email",
        "",
        _email,
        "adds an email subscription to the `<prefix>-alarms` topic",
        shown_default="none",
        option=bool,  # whether one is subscribed, not the address,
    ),
    # SQS counts a standard queue's message expiry from its first enqueue, also after a move to
    # the DLQ, and advises a DLQ retention longer than the source's; a FIFO queue resets it at the move.
    ContextKey(
        "job_retention_days",
        7,
        _bounded,
        "how long the jobs queue keeps a message (1..13)",
    ),
    ContextKey(
        "dead_letter_retention_days",
        14,
        _bounded,
        "how long the DLQ keeps one, counted from its **first** enqueue (SQS's rule for standard queues), so more than `job_retention_days`: a dead letter has at least the difference",
    ),
    ContextKey(
        "order_retention_days",
        "",
        _order_retention,
        "DynamoDB may delete an order item (TTL on `expires_at`) this many days after its write; then a copy is written again as a new order. At least jobs + DLQ retention + `producer_resend_days` (with `fifo`, the jobs retention twice: 28 days), or synth refuses ([reliability.md](reliability.md#the-duplicate-guards-lifecycle))",
        shown_default="none (kept for ever)",
    ),
    ContextKey(
        "producer_resend_days",
        0,
        _bounded,
        "how many days after its first send your producer may send an order again (outbox, replay); counted in `order_retention_days`' minimum",
    ),
    ContextKey(
        "tags",
        "",
        _tag_pairs,
        "`key=value,key2=value2`: tags on every resource that takes them (AWS's tag characters; no `aws:` keys)",
        shown_default="none",
        option=_tag_keys,
    ),
    ContextKey(
        "tracing",
        "false",
        _boolean,
        "`true`: X-Ray active tracing of the worker, whose role then also gets `xray:PutTraceSegments` and `xray:PutTelemetryRecords` (on `*`: X-Ray has no resource types)",
    ),
    ContextKey(
        "fifo",
        "false",
        _boolean,
        "`true`: FIFO queues `<prefix>-jobs.fifo` and `<prefix>-jobs-dlq.fifo`; orders of a message group are written in order, and a batch stops at its first failure ([sending to it](operations.md#fifo))",
    ),
    ContextKey(
        "content_based_deduplication",
        "false",
        _boolean,
        "with `fifo=true`: SQS deduplicates by the body's SHA-256 when a send gives no deduplication id",
    ),
)
CONTEXT_DEFAULTS: dict[str, Any] = {key.name: key.default for key in CONTEXT_KEYS}
CONTEXT_TABLE_HEADER = ("| key | default | meaning |", "|---|---|---|")


def context_table() -> str:
    """docs/deploy.md's table of context keys, rendered from CONTEXT_KEYS (tests/infra/test_config.py)."""
    return "\n".join([*CONTEXT_TABLE_HEADER, *(key.row() for key in CONTEXT_KEYS)])


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
        """The context values that shaped this stack, by CONTEXT_KEYS, as the stack's `Options`
        output carries them for `ops status` and the live view (each key's `option`)."""
        return {key.name: key.option(self._value(key.name)) for key in CONTEXT_KEYS}

    def _value(self, name: str) -> Any:
        return self.names.prefix if name == "prefix" else getattr(self, name)

    @classmethod
    def from_context(cls, get: Mapping[str, Any] | Any) -> StackConfig:
        """Build from a mapping or from a callable like `node.try_get_context`."""
        lookup = get.get if isinstance(get, Mapping) else get

        declared = {key.name: key for key in CONTEXT_KEYS}
        values: dict[str, Any] = {}

        def value_of(name: str) -> Any:
            """The key's value, read and checked on first use (a key may ask for another's)."""
            if name not in values:
                found = lookup(name)
                key = declared[name]
                values[name] = key.read(key.default if found is None else found, name, value_of)
            return values[name]

        for key in CONTEXT_KEYS:
            value_of(key.name)
        prefix, fifo = values["prefix"], values["fifo"]
        problem = settings_problem(
            fifo=fifo,
            job_days=values["job_retention_days"],
            dead_days=values["dead_letter_retention_days"],
            resend_days=values["producer_resend_days"],
            order_days=values["order_retention_days"],
            visibility_seconds=values["visibility_timeout_seconds"],
            timeout_seconds=values["function_timeout_seconds"],
            content_based_deduplication=values["content_based_deduplication"],
            records="an order",
            true="true",
        )
        if problem is not None:
            raise ConfigError(f"context {problem}")
        settings = {name: value for name, value in values.items() if name not in ("prefix", "fifo")}
        return cls(names=Names(prefix, fifo=fifo), **settings)
