"""The wrappers `patch_message_calls` composes around moto's SQS message calls
(services/sqs/backend.py), each checked alone without moto."""

from __future__ import annotations

import threading

import pytest

from embedded_aws.services.sqs import backend


class _Metrics:
    def __init__(self) -> None:
        self.counts: list[tuple[str, str, int]] = []

    def count(self, sqs: object, queue_name: str, metric: str, amount: int) -> None:
        self.counts.append((queue_name, metric, amount))


@pytest.mark.parametrize(
    ("name", "result", "amount"),
    [
        ("receive_message", ["m1", "m2", "m3"], 3),
        ("receive_message", [], 0),
        ("delete_message_batch", (["a", "b"], [{"Id": "c"}]), 2),
        ("send_message", object(), 1),
        ("delete_message", None, 1),
    ],
)
def test_a_call_counts_the_messages_it_moved(name, result, amount):
    """Receives count the messages returned, a batch delete only the entries that succeeded."""
    assert backend.counted_amount(name, result) == amount


def test_a_counted_call_answers_as_before_and_counts_its_metric():
    """The wrapped call's answer is unchanged; its metric is the one `_COUNTED` names."""
    metrics = _Metrics()
    call = backend.counted("delete_message_batch", lambda sqs, queue, entries: (entries, []), metrics)
    assert call(None, "jobs", ["a", "b"]) == (["a", "b"], [])
    assert metrics.counts == [("jobs", "NumberOfMessagesDeleted", 2)]


def test_a_locked_call_holds_the_lock_while_it_runs():
    """Every call that changes a queue's messages runs under the one lock."""
    lock = threading.RLock()
    call = backend.locked(lambda sqs: lock._is_owned(), lock)  # type: ignore[attr-defined]  # CPython's, not in typeshed
    assert call(None) is True
    assert not lock._is_owned()  # type: ignore[attr-defined]


def test_a_send_is_marked_while_it_runs_and_unmarked_after_even_when_it_fails():
    """`Queue.attributes` sees the mark only during a send, and a failed send leaves no mark."""

    def fails(sqs: object) -> None:
        assert backend._sending.active
        raise ValueError("refused")

    assert backend.sending(lambda sqs: backend._sending.active)(None) is True
    with pytest.raises(ValueError, match="refused"):
        backend.sending(fails)(None)
    assert not getattr(backend._sending, "active", False)
