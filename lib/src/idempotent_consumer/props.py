"""What a team sets on an IdempotentConsumer, typed and checked when it is made: a prop that
cannot give a working consumer stops the synth with one line naming it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aws_cdk import RemovalPolicy

from guarded_consumer import contract

from .alarms import AlarmSettings
from .rules import (
    ATTRIBUTE_RE,
    BOUNDS,
    DLQ_AUDIT_STREAM,
    EMAIL_RE,
    FUNCTION_MEMORY_MB,
    ConsumerNames,
    PropsError,
    alarm_settings,
    redelivery_window_days,
    settings_problem,
)

if TYPE_CHECKING:
    from aws_cdk import aws_dynamodb as dynamodb
    from aws_cdk import aws_sns as sns
    from aws_cdk import aws_sqs as sqs

__all__ = ["DLQ_AUDIT_STREAM", "FUNCTION_MEMORY_MB", "ConsumerNames", "ConsumerProps", "PropsError"]


def _whole(name: str, value: Any) -> None:
    low, high = BOUNDS[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise PropsError(f"{name}={value!r} is invalid: use a whole number from {low} to {high}")


@dataclass(frozen=True, kw_only=True)
class ConsumerProps:
    """Everything an IdempotentConsumer is made from. Only `handler` is required.

    handler: the directory of the team's Lambda code; its `app.py` defines `handler` (usually
      `guarded_consumer.guarded_handler(...)`). The construct bundles guarded_consumer beside it.
    key_attribute: the table's partition key, the attribute the one conditional write guards
      (`attribute_not_exists(<key_attribute>)`); the handler must guard the same one.
    """

    handler: Path
    key_attribute: str = contract.ID_FIELD
    names: ConsumerNames = field(default_factory=ConsumerNames)
    # The event source mapping: records per invocation, concurrent invocations at most.
    batch_size: int = 1
    max_concurrency: int = 10
    fifo: bool = False
    # With fifo: SQS takes a SHA-256 of the body as the deduplication id when a send gives none.
    content_based_deduplication: bool = False
    visibility_timeout_seconds: int = 30
    function_timeout_seconds: int = 5
    memory_size_mb: int = FUNCTION_MEMORY_MB
    # Receives of a message before SQS moves it to the dead-letter queue. AWS advises at least 5
    # so that throttled batches (which count) do not dead-letter good records.
    max_receive_count: int = 5
    job_retention_days: int = 7
    dead_letter_retention_days: int = 14
    # None: records are kept for ever, the guard never lapses. N: DynamoDB may delete a record N
    # days after its write, which must outlast every copy that can still be delivered.
    order_retention_days: int | None = None
    # How many days after its first send a producer may send the same record again.
    producer_resend_days: int = 0
    # RETAIN (the default) keeps the table, the guard, and protects it from deletion; DESTROY is
    # for throwaway stacks: deleting the table lets every key be written again.
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    tracing: bool = False
    # Alarms notify this topic if given (its policy must let CloudWatch publish); else a topic of
    # the consumer's own, with alarm_email subscribed if given.
    alarm_topic: sns.ITopic | None = None
    alarm_email: str | None = None
    oldest_job_age_alarm_seconds: int = 300
    dashboard: bool = True
    operator_policy: bool = True
    metrics_namespace: str = contract.METRICS_NAMESPACE
    function_description: str = "Idempotent consumer: one conditional PutItem per key"
    # Bring your own: the table (keyed on key_attribute: the construct cannot read an imported
    # table's key schema), or the jobs queue with the dead-letter queue its redrive policy names
    # (both, or neither; their settings are yours). The construct then makes none of its own.
    existing_table: dynamodb.ITable | None = None
    existing_queue: sqs.IQueue | None = None
    existing_dead_letter_queue: sqs.IQueue | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.handler, Path) or not (self.handler / "app.py").is_file():
            raise PropsError(
                f"handler={str(self.handler)!r} is invalid: use the directory that holds the handler's app.py"
            )
        if not isinstance(self.key_attribute, str) or not ATTRIBUTE_RE.match(self.key_attribute):
            raise PropsError(
                f"key_attribute={self.key_attribute!r} is invalid: use an attribute name such as payment_id"
            )
        named = self.names.problem()
        if named is not None:
            raise PropsError(named)
        if self.names.fifo != self.fifo:
            raise PropsError(
                f"names.fifo={self.names.fifo} differs from fifo={self.fifo}: a FIFO queue's name ends in .fifo"
            )
        for name in BOUNDS:
            value = getattr(self, name)
            if not (name == "order_retention_days" and value is None):
                _whole(name, value)
        for name in ("fifo", "content_based_deduplication", "tracing", "dashboard", "operator_policy"):
            if not isinstance(getattr(self, name), bool):
                raise PropsError(f"{name}={getattr(self, name)!r} is invalid: use True or False")
        self._check_together()

    def _check_together(self) -> None:
        problem = settings_problem(
            fifo=self.fifo,
            job_days=self.job_retention_days,
            dead_days=self.dead_letter_retention_days,
            resend_days=self.producer_resend_days,
            order_days=self.order_retention_days,
            visibility_seconds=self.visibility_timeout_seconds,
            timeout_seconds=self.function_timeout_seconds,
            content_based_deduplication=self.content_based_deduplication,
        )
        if problem is not None:
            raise PropsError(problem)
        if self.alarm_email is not None and not EMAIL_RE.match(self.alarm_email):
            raise PropsError(f"alarm_email={self.alarm_email!r} is invalid: use an email address, or None")
        if (self.existing_queue is None) != (self.existing_dead_letter_queue is None):
            raise PropsError(
                "existing_queue and existing_dead_letter_queue go together: the alarms and `ops dlq` "
                "need the dead-letter queue the jobs queue redrives to"
            )
        if self.existing_queue is not None and self.existing_queue.fifo != self.fifo:
            raise PropsError(
                f"existing_queue is {'' if self.existing_queue.fifo else 'not '}FIFO: set fifo={self.existing_queue.fifo}"
            )
        if self.existing_table is not None and self.order_retention_days is not None:
            raise PropsError(
                "order_retention_days needs the consumer's own table: an existing table's time to live "
                "is not the construct's to set (turn it on for expires_at yourself, and leave this None)"
            )
        if self.alarm_email is not None and self.alarm_topic is not None:
            raise PropsError(
                "alarm_email is for the consumer's own topic: subscribe it to alarm_topic instead"
            )

    @property
    def redelivery_window_days(self) -> int:
        return redelivery_window_days(
            self.fifo, self.job_retention_days, self.dead_letter_retention_days, self.producer_resend_days
        )

    @property
    def order_retention_seconds(self) -> int | None:
        return None if self.order_retention_days is None else self.order_retention_days * 86_400

    @property
    def alarm_settings(self) -> AlarmSettings:
        return alarm_settings(
            fifo=self.fifo,
            job_days=self.job_retention_days,
            dead_days=self.dead_letter_retention_days,
            oldest_job_age_alarm_seconds=self.oldest_job_age_alarm_seconds,
        )
