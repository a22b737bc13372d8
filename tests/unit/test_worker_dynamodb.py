"""The worker's shell against moto's DynamoDB: the conditional write, what is acknowledged,
what is reported as failed, and what the logs say."""

from __future__ import annotations

import json
import time
import uuid

import boto3
import pytest
from botocore.stub import Stubber

from guarded_consumer import contract as CONTRACT
from guarded_consumer import write_guard
from tests.unit.conftest import ORDERS_TABLE, create_table, mocked_aws

TABLE = ORDERS_TABLE
RECEIPT = "AQEB-receipt-handle-must-never-be-logged"


def record(body: str) -> dict:
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": RECEIPT,
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1"},
        "eventSource": "aws:sqs",
    }


def order(order_id: str, quantity: int) -> dict:
    return record(json.dumps({"id": order_id, "quantity": quantity}))


def items(client) -> list[dict]:
    scanned = client.scan(TableName=TABLE)["Items"]
    return sorted(
        (
            {
                "id": i["id"]["S"],
                "quantity": int(i["quantity"]["N"]),
                "total_cents": int(i["total_cents"]["N"]),
            }
            for i in scanned
        ),
        key=lambda i: i["id"],
    )


def log_lines(capsys, tag: str) -> list[dict]:
    out = capsys.readouterr().out
    assert RECEIPT not in out
    return [json.loads(line[len(tag) + 1 :]) for line in out.splitlines() if line.startswith(tag + " ")]


def test_first_write_stores_item_and_logs_write_result(worker, client, capsys):
    """A new order is written once with total_cents and reported processed; the logs carry only
    WRITE (Accepted) and RESULT lines in sorted-key JSON (no JOB line: they name the order) and
    never the receipt handle."""
    response = worker.handle_event({"Records": [order("dedup-order", 4)]}, client, TABLE)
    assert response == {"batchItemFailures": []}
    assert items(client) == [{"id": "dedup-order", "quantity": 4, "total_cents": 1100}]
    out = capsys.readouterr().out
    assert RECEIPT not in out
    lines = out.splitlines()
    assert [line.split(" ", 1)[0] for line in lines[:-1]] == ["WRITE", "RESULT"]
    assert json.loads(lines[-1])["Accepted"] == 1  # the batch's metrics line
    assert lines[1] == 'RESULT {"duplicate": false, "id": "dedup-order", "processed": true, "quantity": 4}'
    write = json.loads(lines[0][len("WRITE ") :])
    assert write["outcome"] == "Accepted"
    assert write["requested"] == {"id": "dedup-order", "quantity": 4, "total_cents": 1100}
    # Neither the constant condition nor the stored item (the requested one here) costs log bytes.
    # A first write has no previous item to log.
    assert set(write) == {"decision", "id", "outcome", "requested"}
    assert CONTRACT.stored_by(write) == write["requested"]


def test_identical_copy_is_acknowledged_as_duplicate_and_item_unchanged(worker, client, capsys):
    """A second delivery of the same order is a conditional rejection that is acknowledged."""
    worker.handle_event({"Records": [order("dedup-order", 4)]}, client, TABLE)
    capsys.readouterr()
    response = worker.handle_event({"Records": [order("dedup-order", 4)]}, client, TABLE)
    assert response == {"batchItemFailures": []}
    assert items(client) == [{"id": "dedup-order", "quantity": 4, "total_cents": 1100}]
    out = capsys.readouterr().out
    write = json.loads(next(l for l in out.splitlines() if l.startswith("WRITE "))[6:])
    assert write["outcome"] == "ConditionalCheckFailed" and write["decision"] == "duplicate"
    assert write["previous"] == {"id": "dedup-order", "quantity": 4, "total_cents": 1100}
    result = json.loads(next(l for l in out.splitlines() if l.startswith("RESULT "))[7:])
    assert result == {"id": "dedup-order", "quantity": 4, "processed": False, "duplicate": True}


def test_conflicting_copy_is_reported_failed_and_item_unchanged(worker, client, capsys):
    """Same id, other quantity: never acknowledged (it goes back to the queue, then the DLQ)."""
    worker.handle_event({"Records": [order("o-1", 2)]}, client, TABLE)
    capsys.readouterr()
    conflicting = order("o-1", 3)
    response = worker.handle_event({"Records": [conflicting]}, client, TABLE)
    assert response == {"batchItemFailures": [{"itemIdentifier": conflicting["messageId"]}]}
    assert items(client) == [{"id": "o-1", "quantity": 2, "total_cents": 600}]
    errors = log_lines(capsys, "ERROR")
    assert errors[0]["error"] == "ConflictingOrder"
    assert "already stored with different details" in errors[0]["message"]


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        '{"id": "a"}',
        '{"quantity": 1}',
        '{"id": "a", "quantity": 1, "x": 1}',
        '{"id": 5, "quantity": 1}',
        '{"id": "", "quantity": 1}',
        '{"id": "a", "quantity": true}',
        '{"id": "a", "quantity": 0}',
        '{"id": "a", "quantity": 11}',
        '{"id": "a", "quantity": 2.5}',
        "[]",
    ],
)
def test_bad_input_is_reported_failed_and_nothing_written(worker, client, capsys, body):
    """Bad input is a failure (never acknowledged silently) and writes nothing."""
    bad = record(body)
    response = worker.handle_event({"Records": [bad]}, client, TABLE)
    assert response == {"batchItemFailures": [{"itemIdentifier": bad["messageId"]}]}
    assert items(client) == []
    errors = log_lines(capsys, "ERROR")
    assert len(errors) == 1 and errors[0]["error"] == "JobError"


@pytest.mark.parametrize(
    "code,status,attempts",
    [
        ("ProvisionedThroughputExceededException", 400, 4),
        ("ThrottlingException", 400, 4),
        ("InternalServerError", 500, 4),
        ("AccessDeniedException", 400, 1),
        ("ValidationException", 400, 1),
    ],
)
def test_service_errors_are_retried_while_worth_it_then_reported(
    worker, client, capsys, code, status, attempts
):
    """Throttling and 5xx are retried up to MAX_ATTEMPTS, access denied and validation errors not
    at all; then the record is reported failed with the AWS error code, never acknowledged and
    never mistaken for a duplicate."""
    stubber = Stubber(client)
    for _ in range(attempts):
        stubber.add_client_error("put_item", service_error_code=code, http_status_code=status)
    failed = order("a", 1)
    with stubber:
        response = worker.handle_event({"Records": [failed]}, client, TABLE)
        stubber.assert_no_pending_responses()
    assert response == {"batchItemFailures": [{"itemIdentifier": failed["messageId"]}]}
    (error,) = log_lines(capsys, "ERROR")
    assert error["error"] == code
    assert error["message"].startswith(f"PutItem failed after {attempts} attempt")
    assert items(client) == []


class FlakyClient:
    """A DynamoDB client stand-in that fails each PutItem with the next error from a script."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    def put_item(self, **request):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return {}


def throttled(worker):
    from botocore.exceptions import ClientError

    return ClientError(
        {
            "Error": {"Code": "ThrottlingException", "Message": "slow down"},
            "ResponseMetadata": {"HTTPStatusCode": 400},  # type: ignore[typeddict-item]  # only the status read
        },
        "PutItem",
    )


def test_a_write_that_cannot_finish_in_the_time_left_fails_fast(worker, capsys):
    """With less time left than one attempt may take, the record is not tried at all: it is
    reported failed (OutOfTime) instead of running into the function's timeout."""
    client = FlakyClient()
    failed = order("late", 1)
    response = worker.handle_event({"Records": [failed]}, client, TABLE, remaining=lambda: 1.0)
    assert response == {"batchItemFailures": [{"itemIdentifier": failed["messageId"]}]}
    assert client.calls == 0
    (error,) = log_lines(capsys, "ERROR")
    assert error["error"] == "OutOfTime" and "1.00 s left" in error["message"]


def test_retries_stop_when_the_next_attempt_could_not_end_in_time(worker, guard):
    """Each retry waits a jittered backoff and starts only if a whole attempt still fits before
    the deadline: with the clock running out after the second attempt, there is no third."""
    budget = worker.ATTEMPT_SECONDS + worker.DEADLINE_MARGIN_SECONDS
    clock = iter([budget + 1, budget - 0.01])
    client = FlakyClient(throttled(worker), throttled(worker), throttled(worker))
    slept: list[float] = []
    with pytest.raises(worker.WriteFailed) as raised:
        worker.put_order(client, {}, remaining=lambda: next(clock), sleep=slept.append)
    assert (client.calls, raised.value.attempts, len(slept)) == (2, 2, 1)
    assert 0 <= slept[0] <= guard.BACKOFF_BASE_SECONDS


def test_a_timed_out_attempt_is_retried_and_its_own_write_counts_as_a_duplicate(worker, client, capsys):
    """A read timeout leaves it unknown whether the write went in; the retry is safe because it
    is conditional: here the first attempt did write, so the retry is rejected with the identical
    item and the delivery is acknowledged as a duplicate."""
    from botocore.exceptions import ReadTimeoutError

    class WritesThenTimesOut:
        calls = 0

        def put_item(self, **request):
            self.calls += 1
            result = client.put_item(**request)
            if self.calls == 1:
                raise ReadTimeoutError(endpoint_url="http://dynamodb")
            return result

    flaky = WritesThenTimesOut()
    response = worker.handle_event({"Records": [order("ambiguous", 2)]}, flaky, TABLE)
    assert response == {"batchItemFailures": []} and flaky.calls == 2
    out = capsys.readouterr().out
    (write,) = [json.loads(line[6:]) for line in out.splitlines() if line.startswith("WRITE ")]
    assert (write["decision"], write["retried_after"]) == ("duplicate", ["ReadTimeoutError"])
    (result,) = [json.loads(line[7:]) for line in out.splitlines() if line.startswith("RESULT ")]
    assert result == {"id": "ambiguous", "quantity": 2, "processed": False, "duplicate": True}
    assert items(client) == [{"id": "ambiguous", "quantity": 2, "total_cents": 600}]


def test_the_client_fails_fast_and_the_retry_budget_fits_the_function_timeout(worker, guard):
    """The client's own timeouts bound each attempt and it does not retry on its own; the
    smallest function timeout the stack allows leaves room for at least one whole attempt."""
    from stacks.config import MIN_FUNCTION_TIMEOUT_SECONDS

    config = guard.CLIENT_CONFIG
    assert (config.connect_timeout, config.read_timeout) == (
        guard.CONNECT_TIMEOUT_SECONDS,
        guard.READ_TIMEOUT_SECONDS,
    )
    assert config.retries == {"total_max_attempts": 1}
    assert worker.ATTEMPT_SECONDS + worker.DEADLINE_MARGIN_SECONDS <= MIN_FUNCTION_TIMEOUT_SECONDS


def test_mixed_batch_reports_only_the_failed_records(worker, client, capsys):
    """In one batch: new, duplicate, conflict, bad input, new. Only conflict and bad input are
    reported; the others are acknowledged."""
    worker.handle_event({"Records": [order("seen", 1)]}, client, TABLE)
    batch = [order("fresh", 2), order("seen", 1), order("seen", 9), record("{}"), order("fresh-2", 10)]
    response = worker.handle_event({"Records": batch}, client, TABLE)
    assert response == {
        "batchItemFailures": [
            {"itemIdentifier": batch[2]["messageId"]},
            {"itemIdentifier": batch[3]["messageId"]},
        ]
    }
    assert items(client) == [
        {"id": "fresh", "quantity": 2, "total_cents": 600},
        {"id": "fresh-2", "quantity": 10, "total_cents": 2600},
        {"id": "seen", "quantity": 1, "total_cents": 350},
    ]


def test_lab_scenario_figures(worker, client, capsys):
    """The lab: dedup-order x3 and other-order x1 give two accepted writes, two conditional
    rejections, both copies acknowledged as duplicates, and the table holds 4/1100 and 1/350."""
    for body in [
        order("dedup-order", 4),
        order("dedup-order", 4),
        order("dedup-order", 4),
        order("other-order", 1),
    ]:
        assert worker.handle_event({"Records": [body]}, client, TABLE) == {"batchItemFailures": []}
    out = capsys.readouterr().out
    writes = [json.loads(l[6:]) for l in out.splitlines() if l.startswith("WRITE ")]
    assert [w["outcome"] for w in writes] == [
        "Accepted",
        "ConditionalCheckFailed",
        "ConditionalCheckFailed",
        "Accepted",
    ]
    results = [json.loads(l[7:]) for l in out.splitlines() if l.startswith("RESULT ")]
    assert [r["duplicate"] for r in results] == [False, True, True, False]
    assert items(client) == [
        {"id": "dedup-order", "quantity": 4, "total_cents": 1100},
        {"id": "other-order", "quantity": 1, "total_cents": 350},
    ]


def test_each_record_counts_its_decision_in_a_metrics_line_printed_with_its_lines(
    worker, client, capsys, monkeypatch
):
    """Each record's decision is one embedded-metric-format line printed right after the
    record's own lines (a batch stopped at its timeout keeps the counts of the records already
    decided): every decision kind sent (zeros too), in the stack's namespace, with the function
    name as the only dimension and never an order id."""
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "labex-q05-worker")
    monkeypatch.setenv(worker.METRICS_NAMESPACE_ENV, "TestNamespace")
    worker.handle_event({"Records": [order("seen", 1)]}, client, TABLE)
    capsys.readouterr()
    batch = [order("fresh", 2), order("seen", 1), order("seen", 9), record("{}"), order("fresh-2", 10)]
    worker.handle_event({"Records": batch}, client, TABLE)
    lines = capsys.readouterr().out.splitlines()
    metrics = [(index, json.loads(line)) for index, line in enumerate(lines) if line.startswith("{")]
    decided = [[name for name in CONTRACT.DECISIONS if name in emf] for _, emf in metrics]
    assert decided == [["Accepted"], ["Duplicate"], ["Conflict"], ["Malformed"], ["Accepted"]]
    for (_, emf), (name,) in zip(metrics, decided, strict=True):
        assert emf[name] == 1
        (directive,) = emf["_aws"]["CloudWatchMetrics"]
        assert directive == {
            "Namespace": "TestNamespace",
            "Dimensions": [["FunctionName"]],
            "Metrics": [{"Name": name, "Unit": "Count"}],
        }
        assert emf["FunctionName"] == "labex-q05-worker"
        assert abs(emf["_aws"]["Timestamp"] - time.time() * 1000) < 60_000
        assert "seen" not in json.dumps(emf) and "fresh" not in json.dumps(emf)  # never an order id
    # Each metrics line follows its record's RESULT or ERROR line.
    for index, _ in metrics:
        assert lines[index - 1].startswith(("RESULT ", "ERROR "))


def test_an_empty_event_emits_no_metrics(worker, client, capsys):
    assert worker.handle_event({"Records": []}, client, TABLE) == {"batchItemFailures": []}
    assert capsys.readouterr().out == ""


def test_handler_reads_table_from_env_and_creates_one_client(worker, guard, monkeypatch):
    """`handler` uses TABLE_NAME from the environment and one boto3 client per process."""
    created = []
    real_client = boto3.client

    def counting_client(*args, **kwargs):
        created.append(args)
        return real_client(*args, **kwargs)

    with mocked_aws():
        create_table(real_client("dynamodb"), "from-env")
        monkeypatch.setenv(worker.TABLE_NAME_ENV, "from-env")
        monkeypatch.setattr(guard, "_CLIENT", None)
        monkeypatch.setattr(guard.boto3, "client", counting_client)
        assert worker.handler({"Records": [order("a", 1)]}, None) == {"batchItemFailures": []}
        assert worker.handler({"Records": [order("b", 1)]}, None) == {"batchItemFailures": []}
        assert created == [("dynamodb",)]
        assert real_client("dynamodb").get_item(TableName="from-env", Key={"id": {"S": "b"}})["Item"]


class AtomicWrites:
    """moto's in-process DynamoDB checks a condition and stores in two steps; DynamoDB does both
    in one. One lock stands in for that (the embedded AWS serializes writes the same way). It
    counts the writes in flight; with `together`, each PutItem first waits until that many are
    in flight at once."""

    def __init__(self, client, together: int = 0) -> None:
        import threading

        self.client, self.lock, self.count_lock = client, threading.Lock(), threading.Lock()
        self.barrier = threading.Barrier(together) if together else None
        self.in_flight = self.most_in_flight = 0

    def put_item(self, **request):
        with self.count_lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.barrier is not None:
                self.barrier.wait(timeout=10)  # broken (an error) if the writes came one at a time
            with self.lock:
                return self.client.put_item(**request)
        finally:
            with self.count_lock:
                self.in_flight -= 1


def test_writes_go_one_after_another_below_a_whole_vcpu_and_two_at_a_time_with_one(worker):
    """Lambda gives a function one vCPU at 1,769 MB; below that a write's CPU outlasts a round
    trip and a second write in flight does not help."""
    memories = (None, 128, 256, 1768, 1769, 10240)
    assert [worker.writes_in_flight(memory) for memory in memories] == [1, 1, 1, 1, 2, 2]


@pytest.mark.parametrize(("memory", "in_flight"), [("256", 1), ("1769", 2)])
def test_the_handler_sizes_its_writes_in_flight_by_the_functions_memory(
    worker, client, monkeypatch, capsys, memory, in_flight
):
    """At 1,769 MB every PutItem waits until two are in flight (only concurrent writes get
    past that); at 256 MB no two ever are."""
    writes = AtomicWrites(client, together=in_flight if in_flight > 1 else 0)
    monkeypatch.setenv(worker.TABLE_NAME_ENV, TABLE)
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", memory)
    # The handler runs the library's invocation (guarded_consumer.run), which takes the guard's client.
    monkeypatch.setattr(write_guard, "dynamodb_client", lambda: writes)
    batch = [order(f"sized-{memory}-{n}", 1) for n in range(10)]
    assert worker.handler({"Records": batch}, None) == {"batchItemFailures": []}
    assert writes.most_in_flight == in_flight


def test_by_default_a_batch_is_written_one_record_after_another(worker, client, capsys):
    writes = AtomicWrites(client)
    batch = [order(f"alone-{n}", 1) for n in range(5)]
    assert worker.handle_event({"Records": batch}, writes, TABLE) == {"batchItemFailures": []}
    assert writes.most_in_flight == 1
    assert len(items(client)) == 5


def test_with_two_in_flight_the_records_of_a_batch_are_written_two_at_a_time(worker, client, capsys):
    """Ten new orders: each PutItem waits until two are in flight, which only concurrent writes
    can satisfy; never more than two are; all ten are written and acknowledged."""
    writes = AtomicWrites(client, together=2)
    batch = [order(f"together-{n}", 1) for n in range(10)]
    assert worker.handle_event({"Records": batch}, writes, TABLE, in_flight=2) == {"batchItemFailures": []}
    assert writes.most_in_flight == 2
    assert len(items(client)) == 10


class Staggered(AtomicWrites):
    """Writes that finish in the reverse of the batch's order: each waits until the writes of
    the records after it have been answered."""

    def __init__(self, client, ids: list[str]) -> None:
        import threading

        super().__init__(client)
        self.done = {order_id: threading.Event() for order_id in ids}
        self.after = {order_id: ids[index + 1 :] for index, order_id in enumerate(ids)}

    def put_item(self, **request):
        order_id = request["Item"]["id"]["S"]
        for later in self.after[order_id]:
            assert self.done[later].wait(timeout=10)
        try:
            return super().put_item(**request)
        finally:
            self.done[order_id].set()


def test_each_records_lines_are_printed_together_as_soon_as_it_is_done(worker, client, capsys):
    """Records finish out of order; each record's lines come out in one piece when it is done
    (not held for the batch: lines held back are lost if the function is stopped at its
    timeout), its metrics line last."""
    batch = [order("a", 1), record("{}"), order("b", 2)]
    worker.handle_event({"Records": batch}, Staggered(client, ["a", "b"]), TABLE, in_flight=2)
    lines = capsys.readouterr().out.splitlines()
    written = [
        ("EMF", next(name for name in CONTRACT.DECISIONS if name in json.loads(line)))
        if line.startswith("{")
        else (line.split(" ", 1)[0], json.loads(line.split(" ", 1)[1]).get("id"))
        for line in lines
    ]
    assert written[:2] == [("ERROR", None), ("EMF", "Malformed")]
    assert written[2:] == [
        line for order_id in "ba" for line in (("WRITE", order_id), ("RESULT", order_id), ("EMF", "Accepted"))
    ]


def test_malformed_records_are_reported_first_and_a_lone_order_is_written_on_the_calling_thread(
    worker, client, capsys
):
    """Bodies are parsed before any write: the malformed ones are reported at once, without a
    thread, and a batch with one order left writes it on the plain path."""
    import threading

    writers = []

    class Recording:
        def put_item(self, **request):
            writers.append(threading.current_thread())
            return client.put_item(**request)

    batch = [record("{}"), order("lone", 3), record("not json")]
    result = worker.handle_event({"Records": batch}, Recording(), TABLE, in_flight=2)
    assert result == {
        "batchItemFailures": [
            {"itemIdentifier": batch[0]["messageId"]},
            {"itemIdentifier": batch[2]["messageId"]},
        ]
    }
    assert writers == [threading.current_thread()]
    tags = [
        line.split(" ", 1)[0] for line in capsys.readouterr().out.splitlines() if not line.startswith("{")
    ]
    assert tags == ["ERROR", "ERROR", "WRITE", "RESULT"]


def test_two_copies_of_an_order_in_one_batch_write_once_and_both_are_acknowledged(worker, client, capsys):
    """Written at the same time, the conditional write lets one in; the other sees the identical
    item and is a duplicate."""
    batch = [order("twin", 2), order("twin", 2)]
    assert worker.handle_event({"Records": batch}, AtomicWrites(client, together=2), TABLE, in_flight=2) == {
        "batchItemFailures": []
    }
    results = log_lines(capsys, "RESULT")
    assert sorted(r["duplicate"] for r in results) == [False, True]
    assert items(client) == [{"id": "twin", "quantity": 2, "total_cents": 600}]


def test_under_throttling_in_a_batch_only_what_was_written_is_acknowledged(
    worker, guard, client, capsys, monkeypatch
):
    """One order's writes are throttled past every retry while four others go in: exactly that
    one is reported failed, and it was not written; none written is reported failed."""
    from botocore.exceptions import ClientError

    monkeypatch.setattr(guard, "BACKOFF_BASE_SECONDS", 0.001)
    atomic = AtomicWrites(client)

    class HotKey:
        def put_item(self, **request):
            if request["Item"]["id"]["S"] == "hot":
                raise ClientError(
                    {
                        "Error": {"Code": "ProvisionedThroughputExceededException", "Message": "hot"},
                        "ResponseMetadata": {"HTTPStatusCode": 400},  # type: ignore[typeddict-item]  # only the status read
                    },
                    "PutItem",
                )
            return atomic.put_item(**request)

    batch = (
        [order(f"cool-{n}", 1) for n in range(2)]
        + [order("hot", 1)]
        + [order(f"cool-{n}", 1) for n in range(2, 4)]
    )
    response = worker.handle_event({"Records": batch}, HotKey(), TABLE)
    assert response == {"batchItemFailures": [{"itemIdentifier": batch[2]["messageId"]}]}
    assert [i["id"] for i in items(client)] == ["cool-0", "cool-1", "cool-2", "cool-3"]
    (error,) = log_lines(capsys, "ERROR")
    assert error["error"] == "ProvisionedThroughputExceededException"


def test_an_error_line_names_the_order_as_far_as_the_body_parsed(worker, client, capsys):
    """Every failure of an order is found by its id: a bad quantity or an unexpected field after a
    valid id names the id; a conflict and a refused write name the id and the quantity; a body
    with no valid id names none. Nothing else is printed for a failed record (no JOB line)."""
    from botocore.exceptions import ClientError

    worker.handle_event({"Records": [order("taken", 2)]}, client, TABLE)
    capsys.readouterr()
    bodies = [
        '{"id": "too-many", "quantity": 11}',
        '{"id": "extra", "quantity": 1, "note": "x"}',
        '{"id": "", "quantity": 1}',
        json.dumps({"id": "taken", "quantity": 3}),
    ]
    worker.handle_event({"Records": [record(body) for body in bodies]}, client, TABLE)

    class Refusing:
        def put_item(self, **request):
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "PutItem")

    worker.handle_event({"Records": [order("denied", 4)]}, Refusing(), TABLE)
    out = capsys.readouterr().out
    assert not any(line.startswith("JOB ") for line in out.splitlines())
    errors = [json.loads(line[len("ERROR ") :]) for line in out.splitlines() if line.startswith("ERROR ")]
    assert [(e["error"], e.get("id"), e.get("quantity")) for e in errors] == [
        ("JobError", "too-many", None),
        ("JobError", "extra", None),
        ("JobError", None, None),
        ("ConflictingOrder", "taken", 3),
        ("AccessDeniedException", "denied", 4),
    ]
    assert all(e["message_id"] for e in errors)
