"""The embedded AWS's message move task rules without moto: parameter checks, task handles,
pacing, the order messages move in, what ListMessageMoveTasks shows, and the one-active rule."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from embedded_aws.services.sqs.move_tasks import (
    CANCELLED,
    CANCELLING,
    COMPLETED,
    FAILED,
    RUNNING,
    MoveTask,
    MoveTaskError,
    MoveTasks,
    QueueRef,
    allowed_by,
    check_max_results,
    check_rate,
    decode_handle,
    due_at,
    encode_handle,
    oldest_first,
    parse_queue_arn,
    redrive_permissions,
)

DLQ = "arn:aws:sqs:us-east-1:123456789012:orders-dlq"
JOBS = "arn:aws:sqs:us-east-1:123456789012:orders"


def task(**overrides) -> MoveTask:
    fields = {"source_arn": DLQ, "destination_arn": None, "rate": None, "members": {"a", "b", "c"}}
    return MoveTask(**{**fields, **overrides})


@pytest.mark.parametrize("value,expected", [(None, None), (1, 1), (500, 500), ("10", 10)])
def test_rate_is_absent_or_1_to_500(value, expected):
    """MaxNumberOfMessagesPerSecond may be left out; given, it is a whole number 1..500."""
    assert check_rate(value) == expected


@pytest.mark.parametrize("value", [0, -1, 501, "fast", 2.5, ""])
def test_rate_out_of_range_is_invalid_parameter_value(value):
    """A rate outside 1..500 is refused with InvalidParameterValue naming the value."""
    with pytest.raises(MoveTaskError) as refused:
        check_rate(value)
    assert refused.value.code == "InvalidParameterValue"
    assert f"Value {value} for parameter MaxNumberOfMessagesPerSecond is invalid" in refused.value.message


@pytest.mark.parametrize("value,expected", [(None, 1), (1, 1), (10, 10)])
def test_max_results_defaults_to_one_and_stops_at_ten(value, expected):
    """ListMessageMoveTasks shows the most recent task unless asked for up to 10."""
    assert check_max_results(value) == expected


@pytest.mark.parametrize("value", [0, 11, "x"])
def test_max_results_out_of_range_is_refused(value):
    with pytest.raises(MoveTaskError, match="MaxResults is invalid"):
        check_max_results(value)


def test_task_handle_names_its_task_and_source_queue():
    """Cancel is authorized on the task's source queue: the handle carries its ARN."""
    assert decode_handle(encode_handle("t-1", DLQ)) == ("t-1", DLQ)


@pytest.mark.parametrize(
    "handle", ["", "not base64!", "bm90IGpzb24=", encode_handle("t", "not an arn"), None]
)
def test_a_handle_that_is_not_ours_is_invalid(handle):
    with pytest.raises(MoveTaskError) as refused:
        decode_handle(handle)
    assert (refused.value.code, refused.value.message) == (
        "InvalidParameterValue",
        "Value for parameter TaskHandle is invalid.",
    )


@pytest.mark.parametrize(
    "arn,expected",
    [
        (DLQ, QueueRef("us-east-1", "123456789012", "orders-dlq")),
        ("arn:aws:sqs:us-east-1:123456789012:q.fifo", QueueRef("us-east-1", "123456789012", "q.fifo")),
        ("arn:aws:sns:us-east-1:123456789012:topic", None),
        ("https://sqs.us-east-1.amazonaws.com/123456789012/q", None),
        ("arn:aws:sqs:us-east-1::q", None),
        (None, None),
    ],
)
def test_queue_arns_parse(arn, expected):
    assert parse_queue_arn(arn) == expected


def test_pacing_lets_message_k_go_at_k_over_rate():
    """20 messages at 10/s: the first goes at once, the last at 1.9 s."""
    assert allowed_by(0, 10) == 1
    assert allowed_by(0.099, 10) == 1
    assert allowed_by(0.1, 10) == 2
    assert allowed_by(1.9, 10) == 20
    assert due_at(19, 10) == pytest.approx(1.9)
    assert allowed_by(1.0, 500) == 501


def test_oldest_message_moves_first_and_ties_keep_queue_order():
    """SentTimestamp orders the move (a redriven message keeps its original timestamp)."""
    messages = [
        SimpleNamespace(id=name, sent_timestamp=ts)
        for name, ts in [("late", 300), ("first", 100), ("tie-1", 200), ("tie-2", 200)]
    ]
    assert [m.id for m in oldest_first(messages)] == ["first", "tie-1", "tie-2", "late"]


def test_a_running_task_shows_its_handle_and_leaves_out_what_was_not_given():
    """TaskHandle only while RUNNING; DestinationArn and the rate only if they were given."""
    entry = task().entry()
    assert entry["Status"] == RUNNING and decode_handle(entry["TaskHandle"])[1] == DLQ
    assert entry["ApproximateNumberOfMessagesToMove"] == 3 and entry["ApproximateNumberOfMessagesMoved"] == 0
    assert isinstance(entry["StartedTimestamp"], int) and entry["StartedTimestamp"] > 1_600_000_000_000
    assert {"DestinationArn", "MaxNumberOfMessagesPerSecond", "FailureReason"}.isdisjoint(entry)
    given = task(destination_arn=JOBS, rate=5).entry()
    assert (given["DestinationArn"], given["MaxNumberOfMessagesPerSecond"]) == (JOBS, 5)


def test_a_failed_task_shows_its_reason_and_no_handle():
    failed = task()
    failed.finish(FAILED, "CouldNotDetermineMessageSource")
    entry = failed.entry()
    assert entry["Status"] == FAILED and entry["FailureReason"] == "CouldNotDetermineMessageSource"
    assert "TaskHandle" not in entry


def test_cancel_goes_through_cancelling_to_cancelled_and_only_while_running():
    """Cancel answers the count moved so far; a task no longer RUNNING cannot be cancelled."""
    running = task()
    running.moved = 2
    assert running.cancel() == 2
    assert running.status == CANCELLING and running.cancel_requested.is_set()
    with pytest.raises(MoveTaskError) as refused:
        running.cancel()
    assert refused.value.code == "ResourceNotFoundException"
    running.finish(COMPLETED)  # the thread reached the end while the cancel was on its way
    assert running.status == CANCELLED
    done = task()
    done.finish(COMPLETED)
    with pytest.raises(MoveTaskError):
        done.cancel()


def test_one_active_task_per_source_queue_and_most_recent_first():
    """A second task on a queue is refused while one is RUNNING or CANCELLING; tasks list newest
    first, limited to MaxResults."""
    tasks = MoveTasks()
    first = task()
    tasks.add(first)
    with pytest.raises(MoveTaskError, match="Only one active task is allowed"):
        tasks.add(task())
    tasks.add(task(source_arn=JOBS))  # another queue: its own task
    first.cancel()
    with pytest.raises(MoveTaskError):
        tasks.add(task())  # CANCELLING is still active
    first.finish(CANCELLED)
    second = task()
    tasks.add(second)
    assert tasks.of(DLQ, 10) == [second, first]
    assert tasks.of(DLQ, 1) == [second]
    assert tasks.find(first.task_id) is first
    with pytest.raises(MoveTaskError):
        tasks.find("no-such-task")


def test_redrive_needs_consume_on_the_dlq_and_send_on_each_destination():
    """Besides StartMessageMoveTask: receive, delete, get attributes on the DLQ; send on the
    destination, or on every queue whose redrive policy names the DLQ."""
    dlq = SimpleNamespace(queue_arn=DLQ, dead_letter_queue=None)
    jobs = SimpleNamespace(queue_arn=JOBS, dead_letter_queue=dlq)
    other = SimpleNamespace(queue_arn=JOBS + "-2", dead_letter_queue=dlq)
    backend = SimpleNamespace(queues={"orders-dlq": dlq, "orders": jobs, "orders-2": other})
    consume = [(action, DLQ) for action in ("ReceiveMessage", "DeleteMessage", "GetQueueAttributes")]
    assert redrive_permissions(backend, DLQ, "arn:aws:sqs:us-east-1:123456789012:x") == [
        *consume,
        ("SendMessage", "arn:aws:sqs:us-east-1:123456789012:x"),
    ]
    assert redrive_permissions(backend, DLQ, None) == [
        *consume,
        ("SendMessage", JOBS),
        ("SendMessage", JOBS + "-2"),
    ]
