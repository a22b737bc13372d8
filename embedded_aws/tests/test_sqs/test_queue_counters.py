"""GetQueueAttributes' approximate counters, counted in one pass."""

from __future__ import annotations


def test_queue_counters_follow_motos_rules_in_one_pass():
    """Visible: past its visibility timeout and not delayed; in flight and delayed apart."""
    from types import SimpleNamespace

    from embedded_aws.services.sqs.backend import queue_counters

    now = 1_000_000
    messages = [
        SimpleNamespace(visible_at=now - 1, delayed_until=0),  # visible
        SimpleNamespace(visible_at=now - 1, delayed_until=0),  # visible
        SimpleNamespace(visible_at=now + 5000, delayed_until=0),  # in flight
        SimpleNamespace(visible_at=now - 1, delayed_until=now + 60),
    ]  # delayed
    assert queue_counters(messages, now) == {
        "ApproximateNumberOfMessages": 2,
        "ApproximateNumberOfMessagesNotVisible": 1,
        "ApproximateNumberOfMessagesDelayed": 1,
    }
