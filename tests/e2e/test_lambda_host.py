"""The local Lambda host behaves like the Lambda service for any function and SQS mapping the
embedded AWS holds: partial batch responses, visibility-timeout retry and redrive to the DLQ,
disabled mappings left alone, IAM enforced with the function's own role, real code on Invoke."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from local.session import wait_for
from ops import observe
from stacks.lambda_code import package_files
from tests.e2e.conftest import (
    ACCOUNT,
    REGION,
    WORKER_TIMEOUT,
    batches,
    dead_letters,
    drained,
    pipeline,
    put_item_on,
    table,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(25)]

PROBE = """
import json, time

def handler(event, context):
    records = event.get("Records", [])
    print("BATCH " + json.dumps({"bodies": [r["body"] for r in records],
                                 "receive_counts": [r["attributes"]["ApproximateReceiveCount"] for r in records],
                                 "request_id": context.aws_request_id}))
    failures = []
    for record in records:
        if record["body"].startswith("boom"):
            raise RuntimeError("boom: " + record["body"])
        if record["body"].startswith("slow"):
            time.sleep(30)
        if record["body"].startswith("fail"):
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
"""


def test_poison_message_redrives_to_dlq_with_body_intact(emulator):
    """A message whose invocation fails is not deleted; it comes back after the visibility
    timeout and, after maxReceiveCount (2) receives, the queue moves it to the DLQ unchanged."""
    p = pipeline(emulator, "poison", source=PROBE)
    body = 'boom {"id": "x", "quantity": 1} ünïcode'
    emulator.client("sqs").send_message(QueueUrl=p.queue_url, MessageBody=body)
    assert dead_letters(emulator, p, 1) == [body]
    assert drained(emulator, p)
    seen = [b for b in batches(emulator, p.name) if body in b["bodies"]]
    assert [b["receive_counts"] for b in seen] == [["1"], ["2"]]


def test_partial_batch_failure_retries_only_failed_records(emulator):
    """Batch size 3: one invocation gets all three; the record reported in batchItemFailures is
    retried alone (then dead-lettered), the other two are deleted after one execution."""
    # Six times the function timeout, as AWS advises: the records that succeeded are deleted
    # after the invocation, and a first invocation (a new sandbox) on a loaded machine can take
    # longer than 1 s; they would come back, as they would on AWS.
    p = pipeline(emulator, "partial", source=PROBE, batch_size=3, create_mapping=False, visibility=6)
    sqs = emulator.client("sqs")
    for body in ("ok-1", "fail-2", "ok-3"):
        sqs.send_message(QueueUrl=p.queue_url, MessageBody=body)
    emulator.client("lambda").create_event_source_mapping(
        EventSourceArn=f"arn:aws:sqs:{REGION}:{ACCOUNT}:partial",
        FunctionName="partial",
        BatchSize=3,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    assert dead_letters(emulator, p, 1) == ["fail-2"]
    wait_for(lambda: drained(emulator, p), timeout=30, what="the partial queue to drain")
    seen = batches(emulator, p.name)
    assert sorted(seen[0]["bodies"]) == ["fail-2", "ok-1", "ok-3"]
    flat = [body for b in seen for body in b["bodies"]]
    assert (flat.count("ok-1"), flat.count("ok-3"), flat.count("fail-2")) == (1, 1, 2)


def test_disabled_mapping_is_not_polled_until_enabled(emulator):
    """A disabled mapping's queue is left alone while an enabled one beside it is served; once
    enabled, its message is processed."""
    off = pipeline(emulator, "disabled", source=PROBE, enabled=False, visibility=6)  # delivered once
    control = pipeline(emulator, "control", source=PROBE)
    sqs, lambda_api = emulator.client("sqs"), emulator.client("lambda")
    sqs.send_message(QueueUrl=off.queue_url, MessageBody="waiting")
    sqs.send_message(QueueUrl=control.queue_url, MessageBody="served")
    wait_for(
        lambda: drained(emulator, control) and batches(emulator, "control"),
        timeout=30,
        what="the enabled mapping's message",
    )
    assert observe.queue_counters(sqs, off.queue_url) == {"visible": 1, "in_flight": 0, "delayed": 0}
    assert batches(emulator, "disabled") == []
    lambda_api.update_event_source_mapping(UUID=off.mapping_id, Enabled=True)
    wait_for(lambda: drained(emulator, off), timeout=30, what="the re-enabled mapping's message")
    assert [b["bodies"] for b in batches(emulator, "disabled")] == [["waiting"]]


WORKER_SOURCE = package_files("worker")


def test_iam_denial_fails_the_message_instead_of_acknowledging_it(emulator):
    """The real worker code with a role whose PutItem is granted on another table: the write
    is denied, the record is reported failed, nothing is written and the order ends in the DLQ.
    The same code with PutItem on the right table ARN writes the order."""
    # One second more than the worker's minimum: on a loaded machine a new sandbox's first client
    # can take the 0.6 s of slack a 2 s timeout leaves, and the record fails OutOfTime instead
    # of reaching the denied write this test is about (seen once under a full suite).
    timeout = WORKER_TIMEOUT + 1
    denied_arn = table(emulator, "denied-orders")
    other_arn = table(emulator, "other-orders")
    denied = pipeline(
        emulator,
        "worker-denied",
        source=WORKER_SOURCE,
        extra_statements=(put_item_on(other_arn),),
        environment={"TABLE_NAME": "denied-orders"},
        timeout=timeout,
        visibility=timeout + 1,
    )
    allowed = pipeline(
        emulator,
        "worker-allowed",
        source=WORKER_SOURCE,
        extra_statements=(put_item_on(other_arn),),
        environment={"TABLE_NAME": "other-orders"},
        timeout=timeout,
        visibility=timeout + 1,
    )
    sqs, dynamodb, logs = emulator.client("sqs"), emulator.client("dynamodb"), emulator.client("logs")
    order = '{"id": "iam-order", "quantity": 2}'
    sqs.send_message(QueueUrl=denied.queue_url, MessageBody=order)
    sqs.send_message(QueueUrl=allowed.queue_url, MessageBody=order)

    assert dead_letters(emulator, denied, 1) == [order]
    assert observe.scan_items(dynamodb, "denied-orders") == []

    def error_lines() -> list[dict]:
        return [r.data for r in observe.log_records(logs, "/aws/lambda/worker-denied") if r.tag == "ERROR"]

    # The second delivery's log can land just after the queue moved the message: a new sandbox's
    # init is not part of the 1 s visibility timeout.
    errors = wait_for(
        lambda: len(error_lines()) >= 2 and error_lines(), timeout=30, what="both deliveries' ERROR lines"
    )
    assert isinstance(errors, list)  # wait_for returns only a truthy answer: the lines, not False
    assert len(errors) == 2 and all(e["error"] == "AccessDeniedException" for e in errors)
    assert "(AccessDeniedException)" in errors[0]["message"]
    assert f"is not authorized to perform: dynamodb:PutItem on resource: {denied_arn}" in errors[0]["message"]

    wait_for(lambda: drained(emulator, allowed), timeout=30, what="the allowed worker's order")
    assert observe.scan_items(dynamodb, "other-orders") == [
        {"id": "iam-order", "quantity": 2, "total_cents": 600}
    ]


def test_invoke_api_runs_the_deployed_code(emulator):
    """Invoke returns the handler's own result; an exception is FunctionError Unhandled with the
    error's type and message; a handler running past its timeout is stopped and reported."""
    pipeline(emulator, "direct", source=PROBE, create_mapping=False)
    lambda_api = emulator.client("lambda")
    event = {
        "Records": [{"messageId": "m-1", "body": "fail-now", "attributes": {"ApproximateReceiveCount": "1"}}]
    }
    ok = lambda_api.invoke(FunctionName="direct", Payload=json.dumps(event))
    assert "FunctionError" not in ok
    assert json.loads(ok["Payload"].read()) == {"batchItemFailures": [{"itemIdentifier": "m-1"}]}

    event["Records"][0]["body"] = "boom-now"
    failed = lambda_api.invoke(FunctionName="direct", Payload=json.dumps(event))
    error = json.loads(failed["Payload"].read())
    assert failed["FunctionError"] == "Unhandled"
    assert (error["errorType"], error["errorMessage"]) == ("RuntimeError", "boom: boom-now")

    event["Records"][0]["body"] = "slow-now"
    timed_out = lambda_api.invoke(FunctionName="direct", Payload=json.dumps(event))
    error = json.loads(timed_out["Payload"].read())
    assert timed_out["FunctionError"] == "Unhandled"
    assert "Task timed out after 1.00 seconds" in error["errorMessage"]

    # The exception and the timeout each count in Lambda's Errors, the worker-errors alarm's metric
    # (the handled batch failure does not).
    cloudwatch, now = emulator.client("cloudwatch"), datetime.now(UTC)

    def errors() -> float:
        points = cloudwatch.get_metric_statistics(
            Namespace="AWS/Lambda",
            MetricName="Errors",
            Dimensions=[{"Name": "FunctionName", "Value": "direct"}],
            StartTime=now - timedelta(minutes=10),
            EndTime=now + timedelta(minutes=1),
            Period=60,
            Statistics=["Sum"],
        )
        total: float = sum(point["Sum"] for point in points["Datapoints"])
        return total

    wait_for(lambda: errors() == 2, timeout=30, what="two Errors for direct")
