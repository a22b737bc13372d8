"""One context that sets every key of the context table (docs/deploy.md) to a valid value other than its
default, as `make up CONTEXT="..."` takes it; the local deploy of it and its parse test share it."""

from __future__ import annotations

import shlex

# Short timeouts within the 6x rule, two receives (target=local), and an order retention exactly
# as long as the redelivery window synth requires with fifo: jobs 3 twice + DLQ 5 + resends 1 days.
FULL_CONTEXT = {
    "prefix": "allopts",
    "batch_size": "10",
    "removal": "destroy",
    "visibility_timeout_seconds": "12",
    "function_timeout_seconds": "2",
    "max_receive_count": "2",
    "target": "local",
    "max_concurrency": "3",
    "oldest_job_age_alarm_seconds": "120",
    "alarm_email": "oncall@example.com",
    "job_retention_days": "3",
    "dead_letter_retention_days": "5",
    "order_retention_days": "12",
    "producer_resend_days": "1",
    "tags": "team=orders,cost-center=cc-42",
    "tracing": "true",
    "fifo": "true",
    "content_based_deduplication": "true",
}

# What the stack's Options output must say for FULL_CONTEXT, typed as the output carries it.
FULL_OPTIONS = {
    "prefix": "allopts",
    "batch_size": 10,
    "removal": "destroy",
    "visibility_timeout_seconds": 12,
    "function_timeout_seconds": 2,
    "max_receive_count": 2,
    "target": "local",
    "max_concurrency": 3,
    "oldest_job_age_alarm_seconds": 120,
    "alarm_email": True,
    "job_retention_days": 3,
    "dead_letter_retention_days": 5,
    "order_retention_days": 12,
    "producer_resend_days": 1,
    "tags": ["team", "cost-center"],
    "tracing": True,
    "fifo": True,
    "content_based_deduplication": True,
}


def make_up_words() -> str:
    """FULL_CONTEXT as the words of `make up CONTEXT="..."`."""
    return " ".join(f"{key}={shlex.quote(value)}" for key, value in FULL_CONTEXT.items())
