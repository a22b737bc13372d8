"""The snapshot behind `python -m ops status` and the live view, against moto in-process (fast; the
browser tests run the real stack). The DLQ tools: tests/unit/test_dlq.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from typing import Any

import pytest
from moto import mock_aws

from local.session import ROOT, free_port
from ops.aws import CLIENT_CONFIG, Clients, Endpoint
from ops.observe import LogRecord
from ops.snapshot import deliveries, format_text, messages, resolve_target, take_snapshot
from stacks.config import StackConfig
from tests.view.fake_consumer import (
    ITEM,
    PREFIX,
    REGION,
    TEMPLATE,
    create_busy_day,
    create_resources,
    deploy_stack,
    error_line,
    job_line,
    write_line,
)

# Many in-process moto accounts and snapshots: started with the long modules, not after them.
pytestmark = [pytest.mark.long_wait(10)]


@pytest.fixture
def aws(monkeypatch):
    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield Clients(Endpoint(region=REGION))


def test_snapshot_reads_every_section_with_names_from_the_stack_outputs(aws):
    """Names come from the stack's outputs; counters, mapping, both tables, the write decisions
    (duplicate marked), worker errors and executions are all read."""
    deploy_stack(aws)
    create_resources(aws)
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert snapshot["error"] is None and snapshot["errors"] == {}
    assert snapshot["target"]["names_from"] == f"stack {PREFIX}-consumer outputs"
    assert snapshot["queues"]["jobs"] == {"visible": 2, "in_flight": 0, "delayed": 1}
    assert snapshot["queues"]["dlq"] == {"visible": 1, "in_flight": 0, "delayed": 0}
    assert [(m["source"], m["function"], m["batch_size"]) for m in snapshot["mappings"]] == [
        (f"{PREFIX}-jobs", f"{PREFIX}-worker", 1)
    ]
    assert snapshot["orders"] == [ITEM]
    assert snapshot["reference"] == [{"id": "reference", "note": "keep unchanged"}]
    assert [
        (d["id"], d["outcome"], d["decision"], d["previous"], d["stored"]) for d in snapshot["decisions"]
    ] == [
        ("dedup-order", "Accepted", "written", None, ITEM),
        ("dedup-order", "ConditionalCheckFailed", "duplicate", ITEM, ITEM),
        ("dedup-order", "ConditionalCheckFailed", "conflict", ITEM, ITEM),
    ]
    assert [e["message"] for e in snapshot["worker_errors"]] == [
        "missing field: quantity",
        "missing field: quantity",
        "order 'dedup-order' already stored with different details",
    ]
    assert [(d["message_id"], d["outcome"]) for d in snapshot["deliveries"]] == [
        ("m1", "accepted"),
        ("m3", "malformed"),
        ("m2", "duplicate"),
        ("m3", "malformed"),
        ("m4", "conflict"),
    ]
    assert [(m["message_id"], m["deliveries"], m["outcome"]) for m in snapshot["messages"]] == [
        ("m1", 1, "accepted"),
        ("m2", 1, "duplicate"),
        ("m3", 2, "malformed"),
        ("m4", 1, "conflict"),
    ]
    assert snapshot["executions"] == 5
    assert snapshot["summary"] == {
        "accepted": 1,
        "duplicate": 1,
        "conflict": 1,
        "malformed": 2,
        "write_failed": 0,
        "unfinished": 0,
        "records": 5,
        "messages": 4,
        "failed_records": 3,
        "invocation_errors": 0,
    }
    json.dumps(snapshot)  # what the page receives


def test_without_a_stack_a_fifo_deployments_queues_are_found_by_their_suffix(aws):
    """No stack, and the prefix's queues are FIFO (`-c fifo=true` names them `.fifo`): the
    fallback finds them instead of saying the jobs queue does not exist."""
    sqs = aws.client("sqs")
    fifo = {"FifoQueue": "true"}
    jobs = sqs.create_queue(QueueName=f"{PREFIX}-jobs.fifo", Attributes=fifo)["QueueUrl"]
    dlq = sqs.create_queue(QueueName=f"{PREFIX}-jobs-dlq.fifo", Attributes=fifo)["QueueUrl"]
    target = resolve_target(aws, PREFIX)
    assert (target.queue_url, target.dlq_url) == (jobs, dlq)
    assert target.names_from == f"prefix {PREFIX} (stack not found)"


def test_without_a_stack_the_names_come_from_the_prefix(aws):
    """No stack (or no cloudformation:DescribeStacks): the names stacks/config.py derives."""
    create_resources(aws)
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert snapshot["error"] is None
    assert snapshot["target"]["names_from"] == f"prefix {PREFIX} (stack not found)"
    assert snapshot["target"]["orders_table"] == f"{PREFIX}-orders"
    assert snapshot["orders"] == [ITEM]


def test_a_deleted_resource_is_absent_with_the_call_that_said_so_not_an_error(aws):
    """A table and a queue that AWS says do not exist are `absent`, each with the call and the
    code that said so; that is no error (the snapshot reads as complete), and the others still
    show."""
    deploy_stack(aws)
    urls = create_resources(aws)
    aws.client("dynamodb").delete_table(TableName=f"{PREFIX}-orders")
    aws.client("sqs").delete_queue(QueueUrl=urls["jobs"])
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert snapshot["error"] is None and snapshot["errors"] == {}
    resources = snapshot["resources"]
    assert (resources["orders"]["state"], resources["jobs"]["state"]) == ("absent", "absent")
    assert resources["orders"]["detail"].startswith("Scan: ResourceNotFoundException")
    assert resources["jobs"]["detail"].startswith(
        "GetQueueAttributes: AWS.SimpleQueueService.NonExistentQueue"
    )
    assert {name for name, found in resources.items() if found["state"] == "present"} == {
        "dlq",
        "mappings",
        "function",
        "reference",
        "alarms",
        "series",
        "log",
    }
    assert snapshot["orders"] is None and snapshot["reference"] and snapshot["decisions"]
    text = format_text(snapshot)
    assert "orders    absent (Scan: ResourceNotFoundException" in text
    assert (
        f"queue     {PREFIX}-jobs: absent (GetQueueAttributes: AWS.SimpleQueueService.NonExistentQueue"
        in text
    )
    assert " error: " not in text


def test_a_read_that_fails_otherwise_is_unreadable_and_the_others_still_show(aws, monkeypatch):
    """A denied read proves nothing about the resource: `unreadable`, an entry in `errors` with
    AWS's words, and the other sections still read."""
    from botocore.exceptions import ClientError

    deploy_stack(aws)
    create_resources(aws)
    dynamodb = aws.client("dynamodb")
    scan = dynamodb.scan

    def denied(**request):
        if request["TableName"] == f"{PREFIX}-orders":
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not allowed"}}, "Scan")
        return scan(**request)

    monkeypatch.setattr(dynamodb, "scan", denied)
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert list(snapshot["errors"]) == ["orders"]
    assert snapshot["resources"]["orders"] == {
        "state": "unreadable",
        "call": "Scan",
        "detail": "Scan: AccessDeniedException: not allowed",
    }
    assert snapshot["reference"] and snapshot["decisions"]
    assert "orders    error: Scan: AccessDeniedException: not allowed" in format_text(snapshot)


def test_decisions_read_once_outlive_the_log_group_as_history(aws, tmp_path):
    """What a snapshot read of the worker's log is kept; with the log group deleted, a later
    snapshot (a new History object on the same file, as after a restart) shows the same
    decisions marked as history, the log `absent`; without a history there are none, and
    clearing it forgets them."""
    from ops.history import History, scope_of

    deploy_stack(aws)
    create_resources(aws)
    first: Any = take_snapshot(aws, PREFIX, history=History(tmp_path / "history.sqlite3"))
    assert first["log_source"] == "log" and len(first["decisions"]) == 3
    aws.client("logs").delete_log_group(logGroupName=f"/aws/lambda/{PREFIX}-worker")

    later: Any = take_snapshot(aws, PREFIX, history=History(tmp_path / "history.sqlite3"))
    assert later["errors"] == {} and later["resources"]["log"]["state"] == "absent"
    assert later["log_source"] == "history"
    assert later["decisions"] == first["decisions"] and later["messages"] == first["messages"]
    assert later["summary"]["records"] == 5 and later["executions"] is None
    text = format_text(later)
    assert (
        f"log       /aws/lambda/{PREFIX}-worker: absent (FilterLogEvents: ResourceNotFoundException" in text
    )
    assert "the decisions below are history" in text
    assert "attribute_not_exists(id) -> Accepted  previous none" in text

    assert take_snapshot(aws, PREFIX)["decisions"] is None
    history = History(tmp_path / "history.sqlite3")
    scope = scope_of(later["endpoint"], later["region"], f"{PREFIX}-consumer", f"/aws/lambda/{PREFIX}-worker")
    assert history.clear(scope) == 11  # three JOB, three WRITE, two RESULT and three ERROR lines
    assert take_snapshot(aws, PREFIX, history=history)["decisions"] is None


def test_history_cli_says_what_is_kept_and_clears_it(aws, capsys, tmp_path, monkeypatch):
    """`ops history` counts this deployment's kept lines and names the file; `--clear` forgets them."""
    from ops.__main__ import main

    path = tmp_path / "history.sqlite3"
    monkeypatch.setenv("OPS_HISTORY", str(path))
    deploy_stack(aws)
    create_resources(aws)
    assert main(["status", "--prefix", PREFIX]) == 0
    capsys.readouterr()
    assert main(["history", "--prefix", PREFIX]) == 0
    assert capsys.readouterr().out == f"11 kept line(s) of {PREFIX}-consumer in {path}\n"
    assert main(["history", "--prefix", PREFIX, "--clear"]) == 0
    assert capsys.readouterr().out == f"forgot 11 kept line(s) of {PREFIX}-consumer in {path}\n"
    assert main(["history", "--prefix", PREFIX]) == 0
    assert capsys.readouterr().out.startswith("0 kept line(s)")


def test_the_labs_end_state_passes_every_cleanup_check_and_exits_0(aws, capsys, tmp_path, monkeypatch):
    """After the lab's clean-up (mapping, jobs queue, both orders and the log group deleted),
    `ops status --cleanup` prints one passing line per check, each with its evidence, and
    exits 0; before it, the checks that do not hold fail with what was found, exit 1."""
    from ops.__main__ import main

    monkeypatch.setenv("OPS_HISTORY", str(tmp_path / "history.sqlite3"))
    deploy_stack(aws)
    urls = create_resources(aws)
    assert main(["status", "--prefix", PREFIX, "--cleanup"]) == 1
    before = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in before] == ["FAIL", "FAIL", "FAIL", "ok", "ok", "ok", "ok"]

    lambda_api = aws.client("lambda")
    for mapping in lambda_api.list_event_source_mappings(FunctionName=f"{PREFIX}-worker")[
        "EventSourceMappings"
    ]:
        lambda_api.delete_event_source_mapping(UUID=mapping["UUID"])
    aws.client("sqs").delete_queue(QueueUrl=urls["jobs"])
    aws.client("dynamodb").delete_item(TableName=f"{PREFIX}-orders", Key={"id": {"S": "dedup-order"}})
    aws.client("logs").delete_log_group(logGroupName=f"/aws/lambda/{PREFIX}-worker")
    assert main(["status", "--prefix", PREFIX, "--cleanup"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [re.split(r"\s{2,}", line)[:2] for line in lines] == [
        ["ok", f"no event source mapping for {PREFIX}-worker"],
        ["ok", f"no jobs queue {PREFIX}-jobs"],
        ["ok", f"no order items in {PREFIX}-orders"],
        ["ok", f"the reference item in {PREFIX}-reference unchanged"],
        ["ok", f"the worker function {PREFIX}-worker still there"],
        ["ok", f"the orders table {PREFIX}-orders still there"],
        ["ok", f"the reference table {PREFIX}-reference still there"],
    ]
    assert "GetQueueAttributes: AWS.SimpleQueueService.NonExistentQueue" in lines[1]
    assert main(["status", "--prefix", PREFIX]) == 0  # absent resources are not read errors


def test_an_unreadable_resource_fails_its_cleanup_check_with_the_reason(aws, capsys, monkeypatch):
    """A queue whose read is denied is not "deleted": its check fails and says why."""
    from botocore.exceptions import ClientError

    from ops.cleanup_check import checks

    deploy_stack(aws)
    urls = create_resources(aws)
    aws.client("sqs").delete_queue(QueueUrl=urls["jobs"])
    sqs = aws.client("sqs")
    read = sqs.get_queue_attributes

    def denied(**request):
        if request["QueueUrl"] == urls["jobs"]:
            raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "GetQueueAttributes")
        return read(**request)

    monkeypatch.setattr(sqs, "get_queue_attributes", denied)
    (queue_check,) = [
        c for c in checks(take_snapshot(aws, PREFIX)) if c.check == f"no jobs queue {PREFIX}-jobs"
    ]
    assert not queue_check.ok
    assert queue_check.evidence == "cannot tell: GetQueueAttributes: AccessDenied: no"


def test_nothing_deployed_is_one_plain_error(aws):
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert snapshot["error"].startswith(f"stack {PREFIX}-consumer not found, and GetQueueUrl:")
    assert "deploy the stack" in snapshot["error"]


def test_unreachable_endpoint_is_one_plain_error_within_seconds():
    """Within seconds by construction, not by a stopwatch (whose verdict a loaded machine
    decides): the snapshot stops at its first unreachable call, whose client tries three times
    (standard retries, max_attempts 2: backoffs of at most 1 and 2 s) with a 3 s connect
    timeout, so at most 12 s; a refused connection fails at once."""
    port = free_port()
    clients = Clients(Endpoint(f"http://127.0.0.1:{port}", REGION, "a", "b"))
    attempts: list[str] = []
    clients._boto_session().events.register("before-send", lambda request, **_: attempts.append(request.url))
    snapshot: Any = take_snapshot(clients)
    assert snapshot["error"] == f"cannot reach AWS at http://127.0.0.1:{port}/: connection failed"
    assert attempts == [f"http://127.0.0.1:{port}/"] * 3
    config: Any = CLIENT_CONFIG  # botocore's stubs do not list Config's options
    assert config.connect_timeout == 3  # for an endpoint that never answers
    assert format_text(snapshot).endswith(f"error     {snapshot['error']}")


def test_format_text_shows_the_same_facts(aws):
    deploy_stack(aws)
    create_resources(aws)
    text = format_text(take_snapshot(aws, PREFIX))
    assert f"queue     {PREFIX}-jobs: visible 2, in flight 0, delayed 1" in text
    assert f"mapping   {PREFIX}-jobs -> {PREFIX}-worker, batch size 1, Enabled" in text
    assert '{"id": "reference", "note": "keep unchanged"}' in text
    assert (
        "5 invocation(s), 0 invocation error(s); 5 record(s) of 4 message(s): 1 accepted, 1 duplicate, "
        "3 failed (1 conflict, 2 malformed, 0 write failed)"
    ) in text
    assert (
        'dedup-order  duplicate  attribute_not_exists(id) -> ConditionalCheckFailed  previous {"quantity": 4, '
        '"total_cents": 1100}  stored {"quantity": 4, "total_cents": 1100}  (message m2)'
    ) in text


def test_status_lists_the_records_in_time_order_and_a_conflict_side_by_side(aws):
    """`ops status` prints one line per record in the order the worker handled them (a malformed
    body between two writes stays between them); each write as the lab's View shows it (the
    condition and its outcome, the previous item, "none" for a first write, then the stored
    one), and a conflict's line has the requested details before them."""
    deploy_stack(aws)
    create_resources(aws)
    text = format_text(take_snapshot(aws, PREFIX))
    records = [
        re.split(r"\s{2,}", line.strip()) for line in text.splitlines() if line.startswith("          20")
    ]
    assert [(fields[1], fields[2]) for fields in records] == [
        ("dedup-order", "accepted"),
        ("-", "malformed"),
        ("dedup-order", "duplicate"),
        ("-", "malformed"),
        ("dedup-order", "conflict"),
    ]
    assert records[0][3:6] == [
        "attribute_not_exists(id) -> Accepted",
        "previous none",
        'stored {"quantity": 4, "total_cents": 1100}',
    ]
    assert records[-1][3:] == [
        'requested {"quantity": 5, "total_cents": 1350}',
        "attribute_not_exists(id) -> ConditionalCheckFailed",
        'previous {"quantity": 4, "total_cents": 1100}',
        'stored {"quantity": 4, "total_cents": 1100}',
        "(message m4, receive 1)",
    ]
    assert "JobError: missing field: quantity  (message m3, receive 2)" in text


def test_status_cli_reads_the_standard_aws_environment_and_exits_1_on_error():
    """`python -m ops status --json` with AWS_ENDPOINT_URL pointing nowhere: JSON with the
    error, exit 1; the text form says it on stderr in one line."""
    port = free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "a",
        "AWS_SECRET_ACCESS_KEY": "b",
    }
    as_json = subprocess.run(
        [sys.executable, "-m", "ops", "status", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert as_json.returncode == 1
    snapshot = json.loads(as_json.stdout)
    assert snapshot["error"] == f"cannot reach AWS at http://127.0.0.1:{port}/: connection failed"
    assert snapshot["endpoint"] == f"http://127.0.0.1:{port}"
    as_text = subprocess.run(
        [sys.executable, "-m", "ops", "status"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert as_text.returncode == 1
    assert as_text.stderr.strip() == f"error: {snapshot['error']}"


def test_status_text_escapes_control_characters_from_the_data(aws):
    """An order id that passes the worker's validation can carry terminal escape sequences (clear
    the screen, set the title) and a bidirectional override; `ops status` prints them as visible
    escapes, never raw, so data cannot act on the operator's terminal or forge a line."""
    deploy_stack(aws)
    create_resources(aws)
    hostile = "evil\x1b[2J\x1b]0;pwned\x07\u202eredro\nforged line\x9b31m"
    aws.client("dynamodb").put_item(
        TableName=f"{PREFIX}-orders",
        Item={"id": {"S": hostile}, "quantity": {"N": "1"}, "total_cents": {"N": "350"}},
    )
    logs = aws.client("logs")
    logs.create_log_stream(logGroupName=f"/aws/lambda/{PREFIX}-worker", logStreamName="s2")
    logs.put_log_events(
        logGroupName=f"/aws/lambda/{PREFIX}-worker",
        logStreamName="s2",
        logEvents=[
            {
                "timestamp": int(time.time() * 1000),
                "message": "ERROR "
                + json.dumps(
                    {"error": "ConflictingOrder", "message": hostile, "message_id": "m9"}, ensure_ascii=False
                ),
            }
        ],
    )
    text = format_text(take_snapshot(aws, PREFIX))
    assert not any(char in text for char in "\x1b\x07\x9b\u202e")
    assert "forged line" in text and not any(line.startswith("forged line") for line in text.splitlines())
    assert "ConflictingOrder: evil\\x1b[2J\\x1b]0;pwned\\x07\\u202eredro\\x0aforged line\\x9b31m" in text


def test_status_lists_the_alarms_with_their_states(aws):
    """`ops status` names each of the consumer's alarms with its state and reason."""
    deploy_stack(aws)
    create_resources(aws)
    cloudwatch = aws.client("cloudwatch")
    for name in (f"{PREFIX}-dead-letters", f"{PREFIX}-conflicting-orders", "other-stack-alarm"):
        cloudwatch.put_metric_alarm(
            AlarmName=name,
            MetricName="m",
            Namespace="n",
            Statistic="Sum",
            Period=60,
            EvaluationPeriods=1,
            Threshold=1,
            ComparisonOperator="GreaterThanOrEqualToThreshold",
        )
    cloudwatch.set_alarm_state(
        AlarmName=f"{PREFIX}-dead-letters", StateValue="ALARM", StateReason="1 message waits"
    )
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert [(a["name"], a["state"]) for a in snapshot["alarms"]] == [
        (f"{PREFIX}-conflicting-orders", "OK"),
        (f"{PREFIX}-dead-letters", "ALARM"),
    ]
    text = format_text(snapshot)
    assert f"alarm     {PREFIX}-dead-letters: ALARM  1 message waits" in text
    assert "other-stack-alarm" not in text


def records(*lines: tuple[str, str]) -> list[LogRecord]:
    """(stream, line) pairs as the worker log reads them, one millisecond apart."""
    split = [(stream, *line.split(" ", 1)) for stream, line in lines]
    return [
        LogRecord(1000 + index, stream, tag, json.loads(data))
        for index, (stream, tag, data) in enumerate(split)
    ]


def test_a_message_delivered_n_times_is_one_message_with_n_deliveries():
    """A malformed body the queue delivers four times is four failed records and one message with
    four deliveries, each of them malformed; its latest receive count is kept."""
    lines = [("s1", error_line("JobError", "missing field: quantity", "bad", n)) for n in range(1, 5)]
    delivered = deliveries(records(*lines))
    assert [d["outcome"] for d in delivered] == ["malformed"] * 4
    (message,) = messages(delivered)
    assert (message["message_id"], message["deliveries"], message["outcome"]) == ("bad", 4, "malformed")
    assert message["outcomes"] == {"malformed": 4}
    assert message["receive_count"] == "4" and message["first_ms"] == 1000 and message["time_ms"] == 1003


def test_records_of_concurrent_invocations_are_told_apart_by_their_log_stream():
    """Two execution environments write at the same time: each WRITE and ERROR line belongs to the
    JOB line before it in its own stream, not to the one just before it in the merged log. A
    message that first failed and then went through is one message whose latest outcome is the
    accepted write."""
    other = {"id": "other", "quantity": 2, "total_cents": 600}
    delivered = deliveries(
        records(
            ("a", job_line(ITEM, "m1")),
            ("b", job_line(other, "m2")),
            (
                "b",
                error_line(
                    "ProvisionedThroughputExceededException", "PutItem failed after 4 attempts", "m2", 1
                ),
            ),
            ("a", write_line("written", None)),
            ("b", job_line(other, "m2")),
            ("b", write_line("written", None, other)),
        )
    )
    assert [(d["message_id"], d["id"], d["outcome"]) for d in delivered] == [
        ("m1", "dedup-order", "accepted"),
        ("m2", "other", "write_failed"),
        ("m2", "other", "accepted"),
    ]
    assert delivered[1]["requested"] == other and delivered[1]["stored"] is None
    grouped = messages(delivered)
    assert [(m["message_id"], m["deliveries"], m["outcome"], m["outcomes"]) for m in grouped] == [
        ("m1", 1, "accepted", {"accepted": 1}),
        ("m2", 2, "accepted", {"accepted": 1, "write_failed": 1}),
    ]


def test_lines_of_the_current_worker_without_job_lines_come_to_their_deliveries_and_messages():
    """The worker prints no JOB line: an ERROR line names the message and the order, WRITE and
    RESULT the order. A conflict's WRITE and ERROR are one delivery; a message that failed and was
    then written is one message of two deliveries; an accepted order that never failed is a
    message of its own."""
    other = {"id": "other", "quantity": 2, "total_cents": 600}

    def error(code: str, message_id: str, order: dict) -> str:
        payload = {"error": code, "message": code, "message_id": message_id, "receive_count": "1"}
        return "ERROR " + json.dumps(
            {**payload, "id": order["id"], "quantity": order["quantity"]}, sort_keys=True
        )

    delivered = deliveries(
        records(
            ("a", write_line("written", None)),
            ("a", 'RESULT {"duplicate": false, "id": "dedup-order", "processed": true, "quantity": 4}'),
            ("b", error("ThrottlingException", "m2", other)),
            ("b", write_line("written", None, other)),
            ("b", 'RESULT {"duplicate": false, "id": "other", "processed": true, "quantity": 2}'),
            ("b", write_line("conflict", other, {**other, "quantity": 3})),
            ("b", error("ConflictingOrder", "m3", {**other, "quantity": 3})),
        )
    )
    assert [(d["message_id"], d["id"], d["outcome"]) for d in delivered] == [
        (None, "dedup-order", "accepted"),
        ("m2", "other", "write_failed"),
        (None, "other", "accepted"),
        ("m3", "other", "conflict"),
    ]
    assert delivered[1]["requested"] == {"id": "other", "quantity": 2}
    grouped = messages(delivered)
    assert [(m["message_id"], m["deliveries"], m["outcome"]) for m in grouped] == [
        (None, 1, "accepted"),
        ("m2", 2, "accepted"),
        ("m3", 1, "conflict"),
    ]


def test_a_record_without_its_job_line_or_its_end_still_shows():
    """A WRITE whose JOB line is older than the log window is a message of its own (its id
    unknown), two such WRITEs are two; a JOB with nothing after it is `unfinished`."""
    delivered = deliveries(
        records(
            ("s", write_line("written", None)),
            ("s", write_line("duplicate", ITEM)),
            ("t", job_line(ITEM, "m9")),
        )
    )
    assert [(d["message_id"], d["outcome"]) for d in delivered] == [
        (None, "accepted"),
        (None, "duplicate"),
        ("m9", "unfinished"),
    ]
    assert [m["deliveries"] for m in messages(delivered)] == [1, 1, 1]


def test_status_counts_invocation_errors_apart_from_failed_records(aws):
    """Invocation errors come from Lambda's Errors metric (what the worker-errors alarm watches),
    failed records from the worker's ERROR lines: on the busy day 1 and 19, each under its own
    name; with --since beyond the hour the metrics cover, the line says so."""
    create_busy_day(aws)
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert (snapshot["summary"]["invocation_errors"], snapshot["summary"]["failed_records"]) == (1, 19)
    assert "1 invocation error(s); 22 record(s) of 7 message(s)" in format_text(snapshot)
    assert ", 1 invocation error(s) (last 60 min); " in format_text(
        take_snapshot(aws, PREFIX, since_minutes=120)
    )


def test_status_shows_the_options_from_the_stacks_options_output(aws):
    """The stack's Options output (the context it was synthesized with, stacks/config.py) is the
    snapshot's `options` (what --json and the live view read) and one `options` line of the text."""
    config = StackConfig.from_context(
        {"prefix": PREFIX, "batch_size": "10", "fifo": "true", "tags": "team=orders", "tracing": "true"}
    )
    template = {
        **TEMPLATE,
        "Outputs": {
            **TEMPLATE["Outputs"],
            "Options": {"Value": json.dumps(config.options(), separators=(",", ":"))},
        },
    }
    aws.client("cloudformation").create_stack(
        StackName=f"{PREFIX}-consumer", TemplateBody=json.dumps(template)
    )
    create_resources(aws)
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert snapshot["options"] == {"from": "stack output Options", "values": config.options()}
    assert json.loads(json.dumps(snapshot))["options"]["values"]["batch_size"] == 10
    (line,) = [line for line in format_text(snapshot).splitlines() if line.startswith("options")]
    assert line.startswith(f"options   prefix={PREFIX} batch_size=10 removal=retain ")
    assert " alarm_email=false " in line and " order_retention_days=none " in line
    assert line.endswith(
        "tags=team tracing=true fifo=true content_based_deduplication=false  (from stack output Options)"
    )


def test_a_stack_without_the_options_output_shows_what_its_resources_say(aws):
    """A stack deployed before the Options output existed: batch size from the mapping, fifo from
    the jobs queue's name, and the line says they come from the resources."""
    deploy_stack(aws)
    create_resources(aws)
    snapshot: Any = take_snapshot(aws, PREFIX)
    assert snapshot["options"]["values"] == {"fifo": False, "batch_size": 1}
    assert snapshot["options"]["from"].startswith("the resources")
    assert (
        "options   fifo=false batch_size=1  (from the resources (no usable stack output Options))"
        in format_text(snapshot).splitlines()
    )
