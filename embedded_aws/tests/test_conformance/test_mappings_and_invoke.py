"""The SQS event source mapping and Lambda Invoke of the embedded AWS against AWS's recorded
answers (recordings.py): the mapping's answers and refusals, the records a function gets, what a
partial batch failure and a failing function lead to, Invoke's errors."""

from __future__ import annotations

import json
import uuid

import pytest
from botocore.exceptions import ClientError
from test_event_source_mappings.support import invocations, make, queue_arn, unique

from local.session import wait_for
from ops import observe
from test_conformance.recorded import answer
from test_conformance.recordings import check
from tests.e2e.conftest import (
    ACCOUNT,
    REGION,
    consume_statement,
    function_zip,
    logs_statement,
    make_role,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(20)]


def returning(result: str) -> str:
    """A function that logs the records it got (RECORDS, as support.invocations reads them) and
    returns `result`, a Python expression over `records`."""
    return (
        "import json\n\ndef handler(event, context):\n    records = event['Records']\n"
        "    print('RECORDS ' + json.dumps({'records': records}))\n"
        f"    return {result}\n"
    )


ALWAYS_FAILS = (
    "import json\n\ndef handler(event, context):\n"
    "    print('RECORDS ' + json.dumps({'records': event['Records']}))\n"
    "    raise RuntimeError('failed attempt')\n"
)
# Fails each record until it has been received more often than its body's fail_attempts.
FAILS_BY_ATTEMPT = returning(
    "{'batchItemFailures': [{'itemIdentifier': r['messageId']} for r in records "
    "if int(r['attributes']['ApproximateReceiveCount']) <= json.loads(r['body'])['fail_attempts']]}"
)


def refused(call) -> dict:
    with pytest.raises(ClientError) as error:
        call()
    return answer(error.value.response)


def test_create_then_a_duplicate(emulator):
    """CreateEventSourceMapping's answer (202, Creating, AWS's defaults), then 409 for the same queue
    and function."""
    p = make(emulator, "rec-dup", create_mapping=False)
    lambda_api = emulator.client("lambda")
    created = lambda_api.create_event_source_mapping(EventSourceArn=queue_arn(p), FunctionName=p.name)
    check("esm.create", answer(created))
    check(
        "esm.duplicate",
        refused(
            lambda: lambda_api.create_event_source_mapping(EventSourceArn=queue_arn(p), FunctionName=p.name)
        ),
    )
    lambda_api.delete_event_source_mapping(UUID=created["UUID"])


def test_get_after_create(emulator):
    """A mapping read after its create is Enabled, with the same keys."""
    p = make(emulator, "rec-get", create_mapping=False)
    lambda_api = emulator.client("lambda")
    uuid_ = lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=1
    )["UUID"]
    check("esm.get-enabled", answer(lambda_api.get_event_source_mapping(UUID=uuid_)))
    lambda_api.delete_event_source_mapping(UUID=uuid_)


def test_refusals(emulator):
    """A missing queue or function, no source, a large batch without a window, an unknown UUID: AWS's
    codes and words."""
    p = make(emulator, "rec-refuse", create_mapping=False)
    lambda_api = emulator.client("lambda")
    check(
        "esm.missing-queue",
        refused(
            lambda: lambda_api.create_event_source_mapping(
                EventSourceArn=f"arn:aws:sqs:{REGION}:{ACCOUNT}:not-existing-{uuid.uuid4().hex[:6]}",
                FunctionName=p.name,
                BatchSize=1,
            )
        ),
    )
    check(
        "esm.large-batch-without-window.create",
        refused(
            lambda: lambda_api.create_event_source_mapping(
                EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=15
            )
        ),
    )
    mapping_id = lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, Enabled=False
    )["UUID"]
    check(
        "esm.large-batch-without-window.update",
        refused(lambda: lambda_api.update_event_source_mapping(UUID=mapping_id, BatchSize=15)),
    )
    lambda_api.delete_event_source_mapping(UUID=mapping_id)
    unknown = str(uuid.uuid4())
    check("esm.unknown-uuid.get", refused(lambda: lambda_api.get_event_source_mapping(UUID=unknown)))
    check("esm.unknown-uuid.delete", refused(lambda: lambda_api.delete_event_source_mapping(UUID=unknown)))
    check(
        "esm.unknown-uuid.update",
        refused(lambda: lambda_api.update_event_source_mapping(UUID=unknown, Enabled=False)),
    )
    check(
        "esm.no-event-source",
        refused(lambda: lambda_api.create_event_source_mapping(FunctionName="doesnotexist")),
    )
    check(
        "esm.unknown-function",
        refused(
            lambda: lambda_api.create_event_source_mapping(
                FunctionName="doesnotexist", EventSourceArn=f"arn:aws:sqs:{REGION}:111111111111:somequeue"
            )
        ),
    )


@pytest.mark.parametrize(
    ("case", "pattern"),
    [
        ("esm.invalid-filter[None]", json.dumps(None)),
        ("esm.invalid-filter[simple string]", "simple string"),
        ("esm.invalid-filter[invalid_filter2]", json.dumps({"eventSource": "aws:sqs"})),
        ("esm.invalid-filter[invalid_filter3]", json.dumps({"eventSource": []})),
    ],
)
def test_invalid_filter_patterns(emulator, case, pattern):
    """Each pattern AWS refused gets its one message."""
    p = make(emulator, "rec-filter", create_mapping=False)
    check(
        case,
        refused(
            lambda: emulator.client("lambda").create_event_source_mapping(
                EventSourceArn=queue_arn(p),
                FunctionName=p.name,
                MaximumBatchingWindowInSeconds=1,
                FilterCriteria={"Filters": [{"Pattern": pattern}]},
            )
        ),
    )


def events(session, name: str, count: int) -> list[dict]:
    wait_for(
        lambda: len(invocations(session, name)) >= count, timeout=20, what=f"{count} invocation(s) of {name}"
    )
    return [{"Records": i["records"]} for i in invocations(session, name)]


def test_a_record_with_a_batching_window(emulator):
    """With a batching window a record without attributes has md5OfMessageAttributes null."""
    p = make(emulator, "rec-window", create_mapping=False)
    created = emulator.client("lambda").create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, MaximumBatchingWindowInSeconds=1
    )
    check("esm.create-with-window", answer(created))
    emulator.client("sqs").send_message(QueueUrl=p.queue_url, MessageBody=json.dumps({"foo": "bar"}))
    check("esm.record-with-window", events(emulator, p.name, 1))


def test_a_record_with_message_attributes(emulator):
    """Message attributes as the record shows them, with the digest AWS computed for the same three."""
    # 5 s of visibility: on a loaded machine an invocation and its delete outlasted 1 s and the
    # record came round again (a second invocation, which is not what this case compares).
    p = make(emulator, "rec-attrs", create_mapping=False, visibility=5)
    emulator.client("lambda").create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=1
    )
    emulator.client("sqs").send_message(
        QueueUrl=p.queue_url,
        MessageBody="attributes",
        MessageAttributes={
            "Title": {"DataType": "String", "StringValue": "The Whistler"},
            "Author": {"DataType": "String", "StringValue": "John Grisham"},
            "WeeksOn": {"DataType": "Number", "StringValue": "6"},
        },
    )
    event = events(emulator, p.name, 1)[0]
    check("esm.record-with-attributes", event["Records"][0])


def test_an_update_answers_its_transition_and_then_the_settled_state(emulator):
    """UpdateEventSourceMapping answers 202 Updating; the next read is Enabled."""
    p = make(emulator, "rec-update", create_mapping=False)
    lambda_api = emulator.client("lambda")
    second = unique("rec-update-2")
    lambda_api.create_function(
        FunctionName=second,
        Runtime="python3.14",
        Handler="app.handler",
        Timeout=1,
        Role=lambda_api.get_function(FunctionName=p.name)["Configuration"]["Role"],
        Code={"ZipFile": function_zip(returning("None"))},
    )
    mapping_id = lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, MaximumBatchingWindowInSeconds=1
    )["UUID"]
    check("esm.update", answer(lambda_api.update_event_source_mapping(UUID=mapping_id, FunctionName=second)))
    check("esm.get-after-update", answer(lambda_api.get_event_source_mapping(UUID=mapping_id)))
    lambda_api.delete_event_source_mapping(UUID=mapping_id)


def fifo_pipeline(session) -> tuple[str, str, str, str]:
    """A FIFO queue (visibility 3 s, maxReceiveCount 2) with a FIFO DLQ, and a FAILS_BY_ATTEMPT
    function (timeout 1 s): (name, queue URL, DLQ URL, queue ARN). The host acknowledges a batch's
    successes after the invocation; 1 s was too short for that under a full suite's load, and a
    success came round again."""
    sqs, lambda_api, name = session.client("sqs"), session.client("lambda"), unique("rec-fifo")
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}.fifo"
    url = sqs.create_queue(
        QueueName=f"{name}.fifo",
        Attributes={
            "FifoQueue": "true",
            "VisibilityTimeout": "3",
            "RedrivePolicy": json.dumps(
                {
                    "deadLetterTargetArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}-dlq.fifo",
                    "maxReceiveCount": 2,
                }
            ),
        },
    )["QueueUrl"]
    role = make_role(session, f"{name}-role", [consume_statement(arn), logs_statement(name)])
    session.client("logs").create_log_group(logGroupName=f"/aws/lambda/{name}")
    lambda_api.create_function(
        FunctionName=name,
        Runtime="python3.14",
        Role=role,
        Handler="app.handler",
        Timeout=1,
        Code={"ZipFile": function_zip(FAILS_BY_ATTEMPT)},
    )
    return name, url, dlq_url, arn


def dead_letters(session, dlq_url: str, count: int) -> list[dict]:
    sqs = session.client("sqs")
    wait_for(
        lambda: observe.queue_counters(sqs, dlq_url)["visible"] >= count,
        timeout=20,
        what=f"{count} dead letter(s)",
    )
    letters: list[dict] = sqs.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=0)[
        "Messages"
    ]
    return letters


def same_id(messages: list[dict], source_ids: set[str]) -> list[dict]:
    return [
        {
            "Body": m["Body"],
            "MessageId": "same as the source message's" if m["MessageId"] in source_ids else m["MessageId"],
        }
        for m in messages
    ]


def test_fifo_partial_batch_failure_redelivers_the_group_together_in_order(emulator):
    """Messages 1-4 of one group; 2 and 3 fail once, 4 twice (AWS's recorded run, with the
    visibility timeout shortened from 8 s to 3 s)."""
    name, url, dlq_url, arn = fifo_pipeline(emulator)
    sent = emulator.client("sqs").send_message_batch(
        QueueUrl=url,
        Entries=[
            {
                "Id": f"message-{n}",
                "MessageBody": json.dumps({"message": n, "fail_attempts": fails}),
                "MessageGroupId": "1",
                "MessageDeduplicationId": f"dedup-{n}",
            }
            for n, fails in ((1, 0), (2, 1), (3, 1), (4, 2))
        ],
    )
    created = emulator.client("lambda").create_event_source_mapping(
        EventSourceArn=arn, FunctionName=name, BatchSize=10, FunctionResponseTypes=["ReportBatchItemFailures"]
    )
    check("esm.fifo-partial-failure.create", answer(created))
    dlq = dead_letters(emulator, dlq_url, 1)
    got = events(emulator, name, 2)
    check("esm.fifo-partial-failure.first", got[0]["Records"])
    check("esm.fifo-partial-failure.second", got[1]["Records"])
    assert len(got) == 2, "two invocations, as on AWS"
    check("esm.fifo-partial-failure.dlq", same_id(dlq, {m["MessageId"] for m in sent["Successful"]}))


@pytest.mark.parametrize(
    ("case", "source", "report"),
    [
        ("esm.redrive", ALWAYS_FAILS, False),
        ("esm.invalid-batch-item-failures", returning("{'batchItemFailures': [{'foo': 'notvalid'}]}"), True),
    ],
)
def test_a_failing_batch_is_retried_then_redriven_with_its_message_id(emulator, case, source, report):
    """A function error, or a partial batch response naming no valid id, fails the batch: received
    twice, then in the DLQ under its own id."""
    p = make(emulator, "rec-fail", source=source, create_mapping=False)
    emulator.client("lambda").create_event_source_mapping(
        EventSourceArn=queue_arn(p),
        FunctionName=p.name,
        BatchSize=1,
        FunctionResponseTypes=["ReportBatchItemFailures"] if report else [],
    )
    sent = emulator.client("sqs").send_message(
        QueueUrl=p.queue_url, MessageBody=json.dumps({"fail_attempts": 2})
    )
    dlq = dead_letters(emulator, p.dlq_url, 1)
    counts = [
        r["attributes"]["ApproximateReceiveCount"] for e in events(emulator, p.name, 2) for r in e["Records"]
    ]
    check(case, {"receive counts": counts, "dlq": same_id(dlq, {sent["MessageId"]})})


def test_an_empty_partial_batch_response_is_success(emulator):
    """An empty object as partial batch response acknowledges the whole batch."""
    p = make(emulator, "rec-empty", source=returning("{}"), create_mapping=False)
    emulator.client("lambda").create_event_source_mapping(
        EventSourceArn=queue_arn(p),
        FunctionName=p.name,
        BatchSize=1,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    emulator.client("sqs").send_message(QueueUrl=p.queue_url, MessageBody=json.dumps({"message": 1}))
    sqs = emulator.client("sqs")
    # Counts are final once the message is gone, deleted or (were {} a failure) dead-lettered
    # after its second receive: read them only then.
    wait_for(
        lambda: sum(observe.queue_counters(sqs, p.queue_url).values()) == 0,
        timeout=15,
        what="the queue to empty",
    )
    counts = [
        r["attributes"]["ApproximateReceiveCount"] for e in events(emulator, p.name, 1) for r in e["Records"]
    ]
    check(
        "esm.empty-batch-item-failures",
        {
            "receive counts": counts,
            "left in the queue": sum(observe.queue_counters(sqs, p.queue_url).values()),
        },
    )


def test_invoke_errors(emulator):
    """Invoke of a missing function (declared difference), and a timeout's answer."""
    lambda_api = emulator.client("lambda")
    check(
        "invoke.missing-function",
        refused(lambda: lambda_api.invoke(FunctionName="doesnotexist", Payload=b"{}")),
    )
    p = make(
        emulator,
        "rec-timeout",
        source="import time\n\ndef handler(event, context):\n    time.sleep(3)\n",
        create_mapping=False,
    )
    result = lambda_api.invoke(FunctionName=p.name, Payload=b"{}")
    check("invoke.timeout", {**answer(result), "Payload": json.loads(result["Payload"].read())})
