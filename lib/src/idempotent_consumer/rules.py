"""The rules a consumer's settings obey, with no CDK (the operators' tools read them too): the
ranges of its whole-number settings, the physical names (optional: none is forced), and the
arithmetic of retention and redelivery."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .alarms import (
    DEAD_LETTER_EXPIRY_WARNING_DAYS,
    AlarmSettings,
    dead_letter_expiry_age_seconds,
    dead_letter_expiry_periods,
)

# Lambda: "set the source queue's visibility timeout to at least six times the timeout that you
# configure on your function", so a retried batch is not delivered again while still running.
VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO = 6
# The worker starts a write only if one whole attempt (its client's connect and read timeouts,
# 1.3 s, and a margin) can end before the function's deadline; a shorter timeout could write
# nothing. tests/unit/test_worker_dynamodb.py pins that the two agree.
MIN_FUNCTION_TIMEOUT_SECONDS = 2
# Lambda gives a function CPU in proportion to its memory (one vCPU at 1,769 MB), and the worker's
# CPU per record is what it spends most of its billed time on (docs/benchmarks.md): 256 MB leaves
# room for boto3 and is billed as a quarter of a GB.
FUNCTION_MEMORY_MB = 256
# SQS's MessageRetentionPeriod range is 60 s to 14 days; whole days here.
MAX_RETENTION_DAYS = 14
# Upper bounds that only keep a typo out: a century of records, ten years of resends.
MAX_ORDER_RETENTION_DAYS = 36_500
MAX_PRODUCER_RESEND_DAYS = 3_650
# The one log stream of the audit log group that `ops dlq discard` records in.
DLQ_AUDIT_STREAM = "discards"

# The whole-number props and the ranges AWS (or the guard) allows them: batch size (SQS event
# source mappings, without a batching window), ScalingConfig.MaximumConcurrency, visibility
# timeout (SQS, up to 12 h), the function's timeout (Lambda, up to 15 min), maxReceiveCount
# (SQS redrive policy), the retentions. The lab's context (stacks/config.py) reads the same table.
BOUNDS: dict[str, tuple[int, int]] = {
    "batch_size": (1, 10),
    "max_concurrency": (2, 1000),
    "visibility_timeout_seconds": (1, 43_200),
    "function_timeout_seconds": (MIN_FUNCTION_TIMEOUT_SECONDS, 900),
    "max_receive_count": (1, 1000),
    # SQS keeps a message at most 14 days; an age threshold beyond that could never fire.
    "oldest_job_age_alarm_seconds": (60, 1_209_600),
    "job_retention_days": (1, MAX_RETENTION_DAYS - 1),
    "dead_letter_retention_days": (2, MAX_RETENTION_DAYS),
    "order_retention_days": (1, MAX_ORDER_RETENTION_DAYS),
    "producer_resend_days": (0, MAX_PRODUCER_RESEND_DAYS),
    "memory_size_mb": (128, 10_240),
}

# Lowercase letters, digits and inner hyphens; short enough that the longest derived name (the lab's
# `<prefix>-reference-seeder`, a Lambda name, max 64) and queue names (max 80) stay valid.
PREFIX_RE = re.compile(r"^[a-z][a-z0-9-]{0,38}[a-z0-9]$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# DynamoDB attribute names are 1-255 bytes; a key attribute here is a plain identifier.
ATTRIBUTE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,254}$")


class PropsError(ValueError):
    """A prop that cannot give a working consumer; the message names it in one line."""


@dataclass(frozen=True)
class ConsumerNames:
    """Physical names, all derived from one prefix; with no prefix (the default) every name is
    None and CloudFormation names each resource itself."""

    prefix: str | None = None
    # SQS: "The name of a FIFO queue must end with the .fifo suffix" (CreateQueue).
    fifo: bool = False

    def problem(self) -> str | None:
        """What is wrong with the prefix, in one line; None if it makes valid names."""
        if self.prefix is not None and (not PREFIX_RE.match(self.prefix) or "--" in self.prefix):
            return (
                f"names.prefix={self.prefix!r} is invalid: use 2-40 lowercase letters, digits and single "
                "inner hyphens, starting with a letter"
            )
        return None

    def _named(self, suffix: str) -> str | None:
        return None if self.prefix is None else f"{self.prefix}{suffix}"

    @property
    def _queue_suffix(self) -> str:
        return ".fifo" if self.fifo else ""

    @property
    def jobs_queue(self) -> str | None:
        return self._named(f"-jobs{self._queue_suffix}")

    @property
    def dead_letter_queue(self) -> str | None:
        # "The dead-letter queue of a FIFO queue must also be a FIFO queue" (SQS dead-letter queues).
        return self._named(f"-jobs-dlq{self._queue_suffix}")

    @property
    def orders_table(self) -> str | None:
        return self._named("-orders")

    @property
    def worker_function(self) -> str | None:
        return self._named("-worker")

    @property
    def dlq_audit_log_group(self) -> str | None:
        return self._named("-dlq-audit")

    @property
    def operator_policy(self) -> str | None:
        return self._named("-operator")

    @property
    def alarm_topic(self) -> str | None:
        return self._named("-alarms")

    def alarm(self, what: str) -> str | None:
        """`<prefix>-conflicting-orders`, `<prefix>-dead-letters`, ... (`what` from ALARMS)."""
        return self._named(f"-{what}")

    @property
    def dashboard(self) -> str | None:
        return self.prefix

    def query(self, what: str) -> str | None:
        return self._named(f"/{what}")

    @staticmethod
    def log_group_of(function_name: str) -> str:
        return f"/aws/lambda/{function_name}"


def dead_letter_days(fifo: bool, job_days: int, dead_days: int) -> int:
    """Days a dead letter has in the DLQ at least: all of the DLQ's retention on a FIFO queue (its
    enqueue time resets at the move), else what the jobs queue may have used of it."""
    return dead_days if fifo else dead_days - job_days


def redelivery_window_days(fifo: bool, job_days: int, dead_days: int, resend_days: int) -> int:
    """Days after a record's first send that a copy of it can still reach the worker: the
    producer's resend window, then a copy that waits out its DLQ life and is sent back by `ops dlq`
    as a new message that waits the jobs retention again. A standard dead letter's DLQ life ends
    at its first enqueue plus the DLQ's retention; a FIFO one's at its move, which may come a
    whole jobs retention after the send, plus the DLQ's retention."""
    dlq_life_ends = job_days + dead_days if fifo else dead_days
    return resend_days + dlq_life_ends + job_days


def settings_problem(
    *,
    fifo: bool,
    job_days: int,
    dead_days: int,
    resend_days: int,
    order_days: int | None,
    visibility_seconds: int,
    timeout_seconds: int,
    content_based_deduplication: bool,
    records: str = "a record",
    true: str = "True",
) -> str | None:
    """The first rule the settings break together, in one line naming the setting; None if they
    hold. `records` names what is delivered (the lab says "an order"), `true` how its caller
    spells a flag that is on (the lab's context says "true")."""
    ratio = VISIBILITY_TO_FUNCTION_TIMEOUT_RATIO
    if visibility_seconds < ratio * timeout_seconds:
        return (
            f"visibility_timeout_seconds={visibility_seconds} is below {ratio} x "
            f"function_timeout_seconds={timeout_seconds} (needs at least {ratio * timeout_seconds})"
        )
    if dead_days <= job_days:
        # On FIFO queues the DLQ's retention restarts at the move; SQS still advises it longer.
        why = (
            "SQS advises a DLQ retention longer than the source's"
            if fifo
            else "SQS counts a dead letter's expiry from its first enqueue"
        )
        return (
            f"dead_letter_retention_days={dead_days} is invalid: it must exceed "
            f"job_retention_days={job_days} ({why})"
        )
    window = redelivery_window_days(fifo, job_days, dead_days, resend_days)
    if order_days is not None and order_days < window:
        jobs_term = f"2 x job_retention_days={job_days}" if fifo else f"job_retention_days={job_days}"
        why = ": a FIFO queue restarts a message's retention at its move into the DLQ" if fifo else ""
        return (
            f"order_retention_days={order_days} is shorter than the {window} days a copy of "
            f"{records} can still be delivered ({jobs_term} + dead_letter_retention_days={dead_days} "
            f"+ producer_resend_days={resend_days}{why})"
        )
    if content_based_deduplication and not fifo:
        return f"content_based_deduplication={true} needs fifo={true}: only a FIFO queue deduplicates"
    return None


def alarm_settings(
    *, fifo: bool, job_days: int, dead_days: int, oldest_job_age_alarm_seconds: int
) -> AlarmSettings:
    """What the alarm table (alarms.py) takes from a consumer's settings."""
    guaranteed = dead_letter_days(fifo, job_days, dead_days)
    warn_within = max(0, guaranteed - DEAD_LETTER_EXPIRY_WARNING_DAYS) * 86_400
    return AlarmSettings(
        oldest_job_age_alarm_seconds=oldest_job_age_alarm_seconds,
        dead_letter_days_guaranteed=guaranteed,
        dead_letter_expiry_periods=dead_letter_expiry_periods(warn_within),
        fifo=fifo,
        dead_letter_expiry_counted_from="its move into the DLQ" if fifo else "its first enqueue",
        dead_letter_expiry_age_seconds=dead_letter_expiry_age_seconds(warn_within) if fifo else 0,
    )
