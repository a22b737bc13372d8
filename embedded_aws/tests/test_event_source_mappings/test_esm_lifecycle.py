"""Changes to a mapping or its function while the host runs: new code runs at the next delivery
and the old code's sandboxes are closed; a new role is used for the next receive; disabling lets
the batch in flight finish and receives nothing more; deleting the mapping or the function stops
its pollers (a message sent afterwards is first received, with receive count 1, when polling
resumes)."""

from __future__ import annotations

import os

import pytest

from local.session import wait_for
from test_event_source_mappings.support import (
    bodies,
    counters,
    drained,
    invocations,
    make,
    new_code,
    queue_arn,
    recorder,
    wait_for_bodies,
    wait_until_stopped_polling,
)
from tests.e2e.conftest import ACCOUNT, consume_statement, emulator, function_zip, logs_statement, make_role  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(20)]


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_new_code_runs_at_the_next_delivery_and_the_old_sandbox_closes(emulator):
    """update-function-code: the next message is handled by the new code, and the sandbox
    process of the old code is gone (no leak)."""
    p = make(emulator, "esm-update")
    sqs = emulator.client("sqs")
    sqs.send_message(QueueUrl=p.queue_url, MessageBody="before")
    old = wait_for_bodies(emulator, p.name, 1)[0]
    assert old["version"] == "1"
    new_code(emulator, p.name, recorder("2"))
    sqs.send_message(QueueUrl=p.queue_url, MessageBody="after")
    # By the message, not by the count: on a busy machine "before" can come back once more (its
    # delete landed after the 1 s visibility timeout), as SQS may deliver any message twice.
    wait_for(
        lambda: "after" in bodies(emulator, p.name), timeout=30, what="the message sent after the update"
    )
    handled_after = [
        i for i in invocations(emulator, p.name) if any(r["body"] == "after" for r in i["records"])
    ]
    assert {i["version"] for i in handled_after} == {"2"}
    wait_for(lambda: not process_alive(old["pid"]), timeout=10, what="the old code's sandbox to close")


def test_a_new_role_is_used_for_the_next_receive(emulator):
    """A function whose role may not receive from the queue: nothing is processed (the message
    stays). update-function-configuration to a role that may: the message is processed."""
    p = make(emulator, "esm-role", create_mapping=False)
    lambda_api = emulator.client("lambda")
    powerless = make_role(emulator, f"{p.name}-powerless", [logs_statement(p.name)])
    lambda_api.update_function_configuration(FunctionName=p.name, Role=powerless)
    mapping_id = lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=1
    )["UUID"]
    emulator.client("sqs").send_message(QueueUrl=p.queue_url, MessageBody="needs the new role")
    wait_for(
        lambda: f"mapping {mapping_id}: " in _log_tail(emulator, "AccessDenied"),
        timeout=20,
        what="a receive denied to the powerless role",
    )
    assert counters(emulator, p)["visible"] == 1
    allowed = make_role(
        emulator, f"{p.name}-allowed", [consume_statement(queue_arn(p)), logs_statement(p.name)]
    )
    lambda_api.update_function_configuration(FunctionName=p.name, Role=allowed)
    assert [r["body"] for r in wait_for_bodies(emulator, p.name, 1)[0]["records"]] == ["needs the new role"]


def _log_tail(emulator, needle: str) -> str:
    from test_event_source_mappings.support import emulator_log

    return "\n".join(line for line in emulator_log(emulator).splitlines() if needle in line)


# Marks its start, then runs until the test lets it finish (a file beside the marker): the
# mapping is disabled while it runs, whatever the machine's speed (a 2 s sleep had a slow test
# disable the mapping after the invocation had already ended).
MARKING = """
import json, os, pathlib, time

def handler(event, context):
    records = event["Records"]
    marker = pathlib.Path(os.environ["MARKER"])
    marker.write_text("started")
    while not marker.with_suffix(".release").exists():
        time.sleep(0.05)
    print("RECORDS " + json.dumps({"records": records, "pid": os.getpid(), "version": "1",
                                   "start": 0, "end": 0}))
    return {}
"""


def test_disabling_finishes_the_batch_in_flight_and_receives_nothing_more(emulator, tmp_path):
    """An invocation is running when the mapping is disabled: it finishes and its message is
    deleted; once the pollers have stopped, a new message is left alone, and after re-enabling it
    arrives with receive count 1 (it was never received while disabled)."""
    marker = tmp_path / "started"
    p = make(
        emulator,
        "esm-disable",
        source=MARKING,
        environment={"MARKER": str(marker)},
        timeout=30,
        visibility=60,
    )
    lambda_api, sqs = emulator.client("lambda"), emulator.client("sqs")
    sqs.send_message(QueueUrl=p.queue_url, MessageBody="in flight")
    wait_for(marker.exists, timeout=20, what="the invocation to start")
    lambda_api.update_event_source_mapping(UUID=p.mapping_id, Enabled=False)
    marker.with_suffix(".release").touch()  # the invocation may finish now, the mapping disabled
    wait_for_bodies(emulator, p.name, 1)
    wait_for(lambda: drained(emulator, p), timeout=20, what="the in-flight message to be deleted")
    wait_until_stopped_polling(emulator, p.mapping_id)
    sqs.send_message(QueueUrl=p.queue_url, MessageBody="while disabled")
    assert counters(emulator, p) == {"visible": 1, "in_flight": 0, "delayed": 0}
    lambda_api.update_event_source_mapping(UUID=p.mapping_id, Enabled=True)
    record = wait_for_bodies(emulator, p.name, 2)[-1]["records"][0]
    assert (record["body"], record["attributes"]["ApproximateReceiveCount"]) == ("while disabled", "1")
    assert [r["body"] for i in invocations(emulator, p.name) for r in i["records"]].count("in flight") == 1


def test_deleting_the_mapping_or_the_function_stops_its_pollers(emulator):
    """Delete the mapping: its pollers stop, a message sent then stays until a new mapping
    receives it (count 1). Delete the function: the mapping's pollers stop; re-create the
    function and the same mapping resumes, receiving the waiting message first time (count 1)."""
    # 30 s of visibility: every message here is handled at its first receive, and the receive
    # counts asserted are 1. With 1 s, a sandbox starting up for longer than that (the re-created
    # function's cold start, on a loaded machine) let the message be received a second time.
    p = make(emulator, "esm-delete", visibility=30)
    lambda_api, sqs = emulator.client("lambda"), emulator.client("sqs")
    sqs.send_message(QueueUrl=p.queue_url, MessageBody="first")
    wait_for_bodies(emulator, p.name, 1)
    lambda_api.delete_event_source_mapping(UUID=p.mapping_id)
    wait_until_stopped_polling(emulator, p.mapping_id)
    sqs.send_message(QueueUrl=p.queue_url, MessageBody="after the mapping")
    assert counters(emulator, p)["visible"] == 1
    mapping_id = lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=1
    )["UUID"]
    record = wait_for_bodies(emulator, p.name, 2)[-1]["records"][0]
    assert (record["body"], record["attributes"]["ApproximateReceiveCount"]) == ("after the mapping", "1")

    role = lambda_api.get_function_configuration(FunctionName=p.name)["Role"]
    lambda_api.delete_function(FunctionName=p.name)
    wait_until_stopped_polling(emulator, mapping_id)
    sqs.send_message(QueueUrl=p.queue_url, MessageBody="after the function")
    assert counters(emulator, p)["visible"] == 1
    lambda_api.create_function(
        FunctionName=p.name,
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Timeout=1,
        Code={"ZipFile": function_zip(recorder("3"))},
    )
    newest = wait_for_bodies(emulator, p.name, 3)[-1]
    record = newest["records"][0]
    assert (newest["version"], record["body"], record["attributes"]["ApproximateReceiveCount"]) == (
        "3",
        "after the function",
        "1",
    )
