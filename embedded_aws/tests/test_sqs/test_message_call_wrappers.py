"""The wrappers `patch_message_calls` composes around moto's SQS message calls
(services/sqs/backend.py), each checked alone without moto."""

from __future__ import annotations

import threading
import time

import pytest

from embedded_aws.services.sqs import backend

pytestmark = pytest.mark.long_wait(3)  # long polls that time out


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


class _Queue:
    fifo_queue = False

    def __init__(self) -> None:
        self._messages_lock = threading.Condition()
        self.pending_messages: set[object] = set()


class _Backend:
    def __init__(self) -> None:
        self.queue = _Queue()

    def get_queue(self, queue_name: str) -> _Queue:
        return self.queue


def test_a_long_poll_that_finds_nothing_waits_for_a_change_not_for_visible_messages():
    """A long poll whose receives find nothing (as on a FIFO queue whose visible messages wait
    behind their group's message in flight) receives again only after a second or a change, not
    in a loop (it spun a core for the whole wait); a delete of that message wakes it at once."""
    backend_ = _Backend()
    receives: list[float] = []
    second, deleted = threading.Event(), threading.Event()
    lock = threading.RLock()

    def receive(
        sqs: object, queue_name: str, count: int, wait: int, visibility: int, names: object
    ) -> list[str]:
        receives.append(time.monotonic())
        if len(receives) == 2:
            second.set()
        return ["next of the group"] if deleted.is_set() else []

    def delete(sqs: object, queue_name: str, handle: str) -> None:
        deleted.set()

    poll = backend.long_polling(receive, lock, _Metrics())
    delete_waking = backend.locked(backend.notifying(delete), lock)

    def delete_after_the_second_receive() -> None:
        # Ordered by the receives, not by a timer: the delete comes while the poll waits after
        # its second receive (it takes `lock`, which the poll lets go only once it is waiting).
        if second.wait(timeout=30):
            delete_waking(backend_, "jobs", "handle")

    deleter = threading.Thread(target=delete_after_the_second_receive, daemon=True)
    deleter.start()
    found = poll(backend_, "jobs", 10, 20, 30)
    deleter.join(timeout=30)
    assert found == ["next of the group"]
    # One receive at the start, one after the first second (a wait nothing shortens: a spinning
    # poll made thousands at once), one woken by the delete; one more only if the deleting thread
    # was held up for a whole second. The poll returned long before its 20 s.
    assert receives[1] - receives[0] >= 0.99
    assert 3 <= len(receives) <= 4, len(receives)


def test_an_empty_long_poll_counts_one_empty_receive():
    """However often it looked, a long poll that ends with nothing counts one empty receive."""
    metrics = _Metrics()
    poll = backend.long_polling(lambda *args: [], threading.RLock(), metrics)
    assert poll(_Backend(), "jobs", 10, 1, 30) == []
    assert metrics.counts == [("jobs", "NumberOfEmptyReceives", 1)]
