"""DLQ redrive in the embedded AWS, as an operator does it on AWS: poison messages reach a
dead-letter queue through failed receives, and StartMessageMoveTask sends them back to the queue
each came from (or to a DestinationArn), paced, listed, cancellable, authorized on the DLQ's ARN;
through boto3 (JSON protocol), the query protocol and the AWS CLI. embedded_aws/services/sqs/move_tasks.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.parse
import urllib.request

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from local import aws_cli
from local.session import wait_for
from ops import observe
from tests.e2e.conftest import ACCOUNT, REGION

pytestmark = [pytest.mark.e2e, pytest.mark.long_wait(5)]  # move tasks at their rate

PREFIX = "movetask"  # every queue, user and policy of this module starts with it


def arn(name: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"


@pytest.fixture(scope="module")
def sqs(emulator):
    return emulator.client("sqs")


def queue(sqs, name: str, dlq: str | None = None, max_receive: int = 2) -> str:
    """A queue (with a redrive policy to `dlq`, if given); returns its URL."""
    attributes = (
        {"RedrivePolicy": json.dumps({"deadLetterTargetArn": arn(dlq), "maxReceiveCount": max_receive})}
        if dlq
        else {}
    )
    url: str = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    return url


def url_of(sqs, name: str) -> str:
    url: str = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    return url


def counters(sqs, name: str) -> dict[str, int]:
    return observe.queue_counters(sqs, url_of(sqs, name))


def send(sqs, name: str, bodies: list[str]) -> list[str]:
    """Send each body with two message attributes; returns the message ids."""
    ids = []
    for body in bodies:
        ids.append(
            sqs.send_message(
                QueueUrl=url_of(sqs, name),
                MessageBody=body,
                MessageAttributes={
                    "origin": {"DataType": "String", "StringValue": f"{name}:{body}"},
                    "attempt": {"DataType": "Number", "StringValue": "1"},
                },
            )["MessageId"]
        )
    return ids


# A task that moves this many at 1/s runs for minutes unless cancelled: longer than any of this
# module's waits, so a test that lists or cancels it finds it RUNNING however slow the machine
# is (with 10 at 2/s, a test held up for 4.5 s found it COMPLETED).
LONG_TASK = 120


def fill(sqs, name: str, bodies: list[str]) -> None:
    """Put `bodies` in `name`, ten to a SendMessageBatch."""
    for start in range(0, len(bodies), 10):
        sqs.send_message_batch(
            QueueUrl=url_of(sqs, name),
            Entries=[
                {"Id": str(i), "MessageBody": body} for i, body in enumerate(bodies[start : start + 10])
            ],
        )


def fail_until_dead(sqs, name: str, dlq: str, expected: int) -> None:
    """Receive and never delete (VisibilityTimeout 0: a consumer that fails at once) until
    `expected` messages have gone over maxReceiveCount into `dlq`, as a broken consumer would."""

    def dead() -> bool:
        sqs.receive_message(QueueUrl=url_of(sqs, name), MaxNumberOfMessages=10, VisibilityTimeout=0)
        return counters(sqs, dlq)["visible"] >= expected

    wait_for(dead, timeout=20, interval=0.05, what=f"{expected} message(s) redriven from {name} to {dlq}")


def tasks(sqs, dlq: str, limit: int = 10) -> list[dict]:
    results: list[dict] = sqs.list_message_move_tasks(SourceArn=arn(dlq), MaxResults=limit)["Results"]
    return results


def finished(sqs, dlq: str, timeout: float = 20) -> dict:
    """The most recent task on `dlq`, once it is no longer RUNNING or CANCELLING."""
    task = wait_for(
        lambda: next((t for t in tasks(sqs, dlq, 1) if t["Status"] not in ("RUNNING", "CANCELLING")), None),
        timeout=timeout,
        interval=0.05,
        what=f"the move task on {dlq} to end",
    )
    assert task is not None  # wait_for returns only a truthy value
    return task


def drain(sqs, name: str, expected: int) -> list[dict]:
    """Receive and delete every message of `name` (exactly `expected`), with all attributes."""
    got: list[dict] = []

    def all_in() -> bool:
        received = sqs.receive_message(
            QueueUrl=url_of(sqs, name),
            MaxNumberOfMessages=10,
            VisibilityTimeout=30,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        for message in received:
            sqs.delete_message(QueueUrl=url_of(sqs, name), ReceiptHandle=message["ReceiptHandle"])
        got.extend(received)
        return len(got) >= expected

    wait_for(all_in, timeout=20, interval=0.05, what=f"{expected} message(s) in {name}")
    assert len(got) == expected and counters(sqs, name)["visible"] == 0
    return got


def error_of(call) -> tuple[str, str]:
    with pytest.raises(ClientError) as refused:
        call()
    return refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]


def denied(call) -> str:
    """The permission IAM refused `call` for: a 403 AccessDenied whose message names the action."""
    with pytest.raises(ClientError) as refused:
        call()
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    named = re.search(r"not authorized to perform: (sqs:\w+)", str(refused.value))
    assert named, str(refused.value)
    return named.group(1)


def test_redrive_sends_each_poison_message_back_to_its_own_source_queue(sqs):
    """Two queues share a DLQ; their messages fail past maxReceiveCount; a task without
    DestinationArn puts each back on the queue it came from as a new message (new id, receive
    count 1, new SentTimestamp) with its body and attributes, and ends COMPLETED 3 of 3."""
    dlq, jobs, other = f"{PREFIX}-back-dlq", f"{PREFIX}-back-jobs", f"{PREFIX}-back-other"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    queue(sqs, other, dlq)
    old_ids = send(sqs, jobs, ["j1", "j2"]) + send(sqs, other, ["o1"])
    fail_until_dead(sqs, jobs, dlq, 2)
    fail_until_dead(sqs, other, dlq, 3)
    started_ms = int(time.time() * 1000)

    handle = sqs.start_message_move_task(SourceArn=arn(dlq))["TaskHandle"]

    task = finished(sqs, dlq)
    assert task["Status"] == "COMPLETED"
    assert (task["ApproximateNumberOfMessagesToMove"], task["ApproximateNumberOfMessagesMoved"]) == (3, 3)
    assert task["SourceArn"] == arn(dlq) and task["StartedTimestamp"] >= started_ms - 1000
    assert {"TaskHandle", "DestinationArn", "MaxNumberOfMessagesPerSecond", "FailureReason"}.isdisjoint(task)
    assert handle and counters(sqs, dlq) == {"visible": 0, "in_flight": 0, "delayed": 0}
    for name, bodies in ((jobs, {"j1", "j2"}), (other, {"o1"})):
        moved = drain(sqs, name, len(bodies))
        assert {m["Body"] for m in moved} == bodies
        for message in moved:
            assert message["MessageId"] not in old_ids
            assert message["Attributes"]["ApproximateReceiveCount"] == "1"
            assert int(message["Attributes"]["SentTimestamp"]) >= started_ms - 1000
            assert message["MessageAttributes"] == {
                "origin": {"DataType": "String", "StringValue": f"{name}:{message['Body']}"},
                "attempt": {"DataType": "Number", "StringValue": "1"},
            }


def test_destination_arn_sends_every_message_to_that_queue(sqs):
    """With DestinationArn every message goes there, not back to its source; the listing shows
    the destination."""
    dlq, jobs, elsewhere = f"{PREFIX}-dest-dlq", f"{PREFIX}-dest-jobs", f"{PREFIX}-dest-elsewhere"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    queue(sqs, elsewhere)
    send(sqs, jobs, ["a", "b", "c", "d"])
    fail_until_dead(sqs, jobs, dlq, 4)

    sqs.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(elsewhere))

    task = finished(sqs, dlq)
    assert (task["Status"], task["DestinationArn"], task["ApproximateNumberOfMessagesMoved"]) == (
        "COMPLETED",
        arn(elsewhere),
        4,
    )
    assert sorted(m["Body"] for m in drain(sqs, elsewhere, 4)) == ["a", "b", "c", "d"]
    assert counters(sqs, jobs)["visible"] == 0 and counters(sqs, dlq)["visible"] == 0


def test_rate_is_honoured_oldest_first_and_later_messages_stay(sqs, figure):
    """20 messages at 10/s, oldest first: message k is sent on no earlier than k/10 s after the
    task started (so the task takes at least 1.9 s); a message that reaches the DLQ after the
    start is left for another task. (The listing of a task part way through:
    test_one_active_task_per_queue_and_cancel_keeps_what_moved.)"""
    dlq, jobs = f"{PREFIX}-rate-dlq", f"{PREFIX}-rate-jobs"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    bodies = [f"m{i:02d}" for i in range(20)]
    send(sqs, dlq, bodies)  # straight to the DLQ, so DestinationArn is needed
    began = time.monotonic()
    sqs.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(jobs), MaxNumberOfMessagesPerSecond=10)
    send(sqs, dlq, ["late"])

    task = finished(sqs, dlq)
    elapsed = time.monotonic() - began
    figure("move task, 20 messages at 10/s", f"{elapsed:.2f} s")
    assert (
        task["Status"],
        task["ApproximateNumberOfMessagesToMove"],
        task["ApproximateNumberOfMessagesMoved"],
        task["MaxNumberOfMessagesPerSecond"],
    ) == ("COMPLETED", 20, 20, 10)
    # The pace is a floor, whatever the machine's speed: no message went early (a slow machine
    # only makes them later, which is no error; the task's end is bounded by `finished`).
    assert elapsed >= 1.9
    moved = sorted(drain(sqs, jobs, 20), key=lambda m: int(m["Attributes"]["SentTimestamp"]))
    assert [m["Body"] for m in moved] == bodies
    sent_after_start = [int(m["Attributes"]["SentTimestamp"]) - task["StartedTimestamp"] for m in moved]
    early = [(k, ms) for k, ms in enumerate(sent_after_start) if ms < k * 100 - 1]  # 1 ms: whole ms
    assert early == [], sent_after_start
    late = sqs.receive_message(QueueUrl=url_of(sqs, dlq), VisibilityTimeout=0).get("Messages", [])
    assert [m["Body"] for m in late] == ["late"]


def test_one_active_task_per_queue_and_cancel_keeps_what_moved(sqs):
    """A second start while a task RUNS is refused; part way through, the listing shows it
    RUNNING with its handle, its rate and part of its messages moved; cancel answers the count
    moved, the task goes CANCELLING -> CANCELLED, moved messages stay moved, the rest stay in the
    DLQ; then a new task may start and cannot be cancelled once done."""
    dlq, jobs = f"{PREFIX}-cancel-dlq", f"{PREFIX}-cancel-jobs"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    fill(sqs, dlq, [f"c{i:03d}" for i in range(LONG_TASK)])
    handle = sqs.start_message_move_task(
        SourceArn=arn(dlq), DestinationArn=arn(jobs), MaxNumberOfMessagesPerSecond=1
    )["TaskHandle"]

    assert error_of(lambda: sqs.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(jobs))) == (
        "InvalidParameterValue",
        "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
    )
    running = wait_for(
        lambda: next((t for t in tasks(sqs, dlq, 1) if t["ApproximateNumberOfMessagesMoved"] >= 1), None),
        timeout=10,
        interval=0.05,
        what="the first message moved",
    )
    assert running is not None  # wait_for returns only a truthy value
    assert (running["Status"], running["TaskHandle"], running["MaxNumberOfMessagesPerSecond"]) == (
        "RUNNING",
        handle,
        1,
    )
    assert (
        running["ApproximateNumberOfMessagesMoved"]
        < running["ApproximateNumberOfMessagesToMove"]
        == LONG_TASK
    )
    moved_at_cancel = sqs.cancel_message_move_task(TaskHandle=handle)["ApproximateNumberOfMessagesMoved"]

    task = finished(sqs, dlq)
    assert task["Status"] == "CANCELLED" and "TaskHandle" not in task
    moved = task["ApproximateNumberOfMessagesMoved"]
    assert 1 <= moved_at_cancel <= moved < LONG_TASK
    assert counters(sqs, jobs)["visible"] == moved
    assert counters(sqs, dlq) == {"visible": LONG_TASK - moved, "in_flight": 0, "delayed": 0}
    assert error_of(lambda: sqs.cancel_message_move_task(TaskHandle=handle))[0] == "ResourceNotFoundException"

    sqs.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(jobs))
    assert finished(sqs, dlq)["ApproximateNumberOfMessagesMoved"] == LONG_TASK - moved
    assert [t["Status"] for t in tasks(sqs, dlq)] == ["COMPLETED", "CANCELLED"]
    assert len(tasks(sqs, dlq, 1)) == 1


def test_refusals(sqs):
    """Not a DLQ: InvalidParameterValue; a missing source or destination: ResourceNotFound; a
    rate outside 1..500 or MaxResults outside 1..10: InvalidParameterValue; a foreign handle:
    InvalidParameterValue."""
    dlq, jobs = f"{PREFIX}-refuse-dlq", f"{PREFIX}-refuse-jobs"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    assert error_of(lambda: sqs.start_message_move_task(SourceArn=arn(jobs))) == (
        "InvalidParameterValue",
        "Source queue must be configured as a Dead Letter Queue.",
    )
    assert error_of(lambda: sqs.start_message_move_task(SourceArn=arn(f"{PREFIX}-nowhere"))) == (
        "ResourceNotFoundException",
        "The resource that you specified for the SourceArn parameter doesn't exist.",
    )
    assert error_of(
        lambda: sqs.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(f"{PREFIX}-x"))
    ) == (
        "ResourceNotFoundException",
        "The resource that you specified for the DestinationArn parameter doesn't exist.",
    )
    for rate in (0, 501):
        code, message = error_of(
            lambda rate=rate: sqs.start_message_move_task(
                SourceArn=arn(dlq), MaxNumberOfMessagesPerSecond=rate
            )
        )
        assert code == "InvalidParameterValue" and "MaxNumberOfMessagesPerSecond" in message
    assert (
        error_of(lambda: sqs.list_message_move_tasks(SourceArn=arn(dlq), MaxResults=11))[0]
        == "InvalidParameterValue"
    )
    assert error_of(lambda: sqs.cancel_message_move_task(TaskHandle="not-a-handle")) == (
        "InvalidParameterValue",
        "Value for parameter TaskHandle is invalid.",
    )
    assert tasks(sqs, dlq) == []


def test_a_message_sent_straight_to_the_dlq_has_no_source_to_go_back_to(sqs):
    """Without DestinationArn, a message that no redrive put in the DLQ fails the task with
    CouldNotDetermineMessageSource; older redriven messages have moved, it stays in the DLQ."""
    dlq, jobs = f"{PREFIX}-nosource-dlq", f"{PREFIX}-nosource-jobs"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    send(sqs, jobs, ["redriven"])
    fail_until_dead(sqs, jobs, dlq, 1)
    send(sqs, dlq, ["sent-to-dlq"])

    sqs.start_message_move_task(SourceArn=arn(dlq))

    task = finished(sqs, dlq)
    assert (task["Status"], task["FailureReason"], task["ApproximateNumberOfMessagesMoved"]) == (
        "FAILED",
        "CouldNotDetermineMessageSource",
        1,
    )
    assert [m["Body"] for m in drain(sqs, jobs, 1)] == ["redriven"]
    assert [m["Body"] for m in drain(sqs, dlq, 1)] == ["sent-to-dlq"]


def test_a_message_in_flight_waits_until_it_is_visible_again(sqs):
    """A DLQ message a consumer holds is not moved (nor counted to move); once visible again, the
    next task moves it."""
    dlq, jobs = f"{PREFIX}-inflight-dlq", f"{PREFIX}-inflight-jobs"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    send(sqs, dlq, ["held", "free-1", "free-2"])
    held = sqs.receive_message(QueueUrl=url_of(sqs, dlq), VisibilityTimeout=60)["Messages"][0]

    sqs.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(jobs))

    task = finished(sqs, dlq)
    assert (
        task["Status"],
        task["ApproximateNumberOfMessagesToMove"],
        task["ApproximateNumberOfMessagesMoved"],
    ) == ("COMPLETED", 2, 2)
    assert counters(sqs, dlq) == {"visible": 0, "in_flight": 1, "delayed": 0}
    sqs.change_message_visibility(
        QueueUrl=url_of(sqs, dlq), ReceiptHandle=held["ReceiptHandle"], VisibilityTimeout=0
    )
    sqs.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(jobs))
    assert finished(sqs, dlq)["ApproximateNumberOfMessagesMoved"] == 1
    assert sorted(m["Body"] for m in drain(sqs, jobs, 3)) == ["free-1", "free-2", held["Body"]]


def user_client(emulator, name: str, statements: list[dict]):
    """An IAM user with exactly `statements`, and an SQS client signing as it."""
    iam = emulator.client("iam")
    iam.create_user(UserName=name)
    iam.put_user_policy(
        UserName=name,
        PolicyName="inline",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": statements}),
    )
    key = iam.create_access_key(UserName=name)["AccessKey"]
    env = emulator.aws_env()
    return boto3.client(
        "sqs",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=env["AWS_REGION"],
        aws_access_key_id=key["AccessKeyId"],
        aws_secret_access_key=key["SecretAccessKey"],
    )


def redrive_statements(dlq_arn: str, destination_arn: str) -> list[dict]:
    return [
        {
            "Effect": "Allow",
            "Resource": dlq_arn,
            "Action": [
                "sqs:StartMessageMoveTask",
                "sqs:ListMessageMoveTasks",
                "sqs:CancelMessageMoveTask",
                "sqs:ReceiveMessage",
                "sqs:DeleteMessage",
                "sqs:GetQueueAttributes",
            ],
        },
        {"Effect": "Allow", "Resource": destination_arn, "Action": "sqs:SendMessage"},
    ]


def test_iam_authorizes_move_tasks_on_the_dlq_arn(emulator, sqs):
    """A user allowed the move task actions on another DLQ is denied all three on this one; a
    user allowed them on this DLQ (with receive/delete on it and send on the destination) may
    start, list and cancel; without send on the destination, starting is denied."""
    dlq, jobs, decoy = f"{PREFIX}-iam-dlq", f"{PREFIX}-iam-jobs", f"{PREFIX}-iam-decoy-dlq"
    for name in (dlq, decoy):
        queue(sqs, name)
    queue(sqs, jobs, dlq)
    queue(sqs, f"{PREFIX}-iam-decoy-jobs", decoy)
    fill(sqs, dlq, [f"i{i:03d}" for i in range(LONG_TASK)])  # still RUNNING when listed and cancelled
    elsewhere = user_client(emulator, f"{PREFIX}-elsewhere", redrive_statements(arn(decoy), arn(jobs)))
    allowed = user_client(emulator, f"{PREFIX}-allowed", redrive_statements(arn(dlq), arn(jobs)))
    no_send = user_client(emulator, f"{PREFIX}-no-send", redrive_statements(arn(dlq), arn(decoy)))

    assert (
        denied(lambda: elsewhere.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(jobs)))
        == "sqs:StartMessageMoveTask"
    )
    assert (
        denied(lambda: no_send.start_message_move_task(SourceArn=arn(dlq), DestinationArn=arn(jobs)))
        == "sqs:SendMessage"
    )
    handle = allowed.start_message_move_task(
        SourceArn=arn(dlq), DestinationArn=arn(jobs), MaxNumberOfMessagesPerSecond=1
    )["TaskHandle"]
    assert denied(lambda: elsewhere.list_message_move_tasks(SourceArn=arn(dlq))) == "sqs:ListMessageMoveTasks"
    assert (
        denied(lambda: elsewhere.cancel_message_move_task(TaskHandle=handle)) == "sqs:CancelMessageMoveTask"
    )
    assert [t["Status"] for t in allowed.list_message_move_tasks(SourceArn=arn(dlq))["Results"]] == [
        "RUNNING"
    ]
    allowed.cancel_message_move_task(TaskHandle=handle)
    assert finished(sqs, dlq)["Status"] == "CANCELLED"
    assert elsewhere.list_message_move_tasks(SourceArn=arn(decoy))["Results"] == []  # its own DLQ: allowed


def test_the_aws_cli_starts_and_lists_a_task(emulator, sqs):
    """`aws sqs start-message-move-task --source-arn <dlq>` and `list-message-move-tasks`, as an
    operator types them (AWS CLI v1, --endpoint-url)."""
    dlq, jobs = f"{PREFIX}-cli-dlq", f"{PREFIX}-cli-jobs"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    send(sqs, jobs, ["cli-1", "cli-2"])
    fail_until_dead(sqs, jobs, dlq, 2)
    env = emulator.aws_env()

    def aws(*args: str) -> dict:
        run = subprocess.run(
            [str(aws_cli.aws()), "sqs", *args, "--output", "json"],
            env={**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, **env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        answered: dict = json.loads(run.stdout)
        return answered

    assert aws("start-message-move-task", "--source-arn", arn(dlq))["TaskHandle"]
    finished(sqs, dlq)
    listed = aws("list-message-move-tasks", "--source-arn", arn(dlq))["Results"]
    assert [(t["Status"], t["ApproximateNumberOfMessagesMoved"]) for t in listed] == [("COMPLETED", 2)]
    assert sorted(m["Body"] for m in drain(sqs, jobs, 2)) == ["cli-1", "cli-2"]


def query(emulator, action: str, **params: str) -> tuple[int, str]:
    """One SigV4-signed query-protocol request (Action=..., form-encoded), as older SDKs send."""
    env = emulator.aws_env()
    body = urllib.parse.urlencode({"Action": action, "Version": "2012-11-05", **params})
    request = AWSRequest(
        method="POST",
        url=env["AWS_ENDPOINT_URL"] + "/",
        data=body,
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    )
    SigV4Auth(
        Credentials(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]), "sqs", env["AWS_REGION"]
    ).add_auth(request)
    assert request.url is not None  # given above
    prepared = urllib.request.Request(
        request.url, data=body.encode(), headers=dict(request.headers), method="POST"
    )
    try:
        with urllib.request.urlopen(prepared, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_the_query_protocol_works_too(emulator, sqs):
    """Action=StartMessageMoveTask / ListMessageMoveTasks / CancelMessageMoveTask in a form body
    (the AWS CLI v1 with an older botocore) answer in XML, errors included."""
    dlq, jobs = f"{PREFIX}-query-dlq", f"{PREFIX}-query-jobs"
    queue(sqs, dlq)
    queue(sqs, jobs, dlq)
    send(sqs, dlq, ["q1", "q2"])

    status, body = query(emulator, "StartMessageMoveTask", SourceArn=arn(dlq), DestinationArn=arn(jobs))
    assert status == 200 and re.search(r"<TaskHandle>[^<]+</TaskHandle>", body), body
    finished(sqs, dlq)
    status, body = query(emulator, "ListMessageMoveTasks", SourceArn=arn(dlq), MaxResults="10")
    assert status == 200 and "<Status>COMPLETED</Status>" in body, body
    assert "<ApproximateNumberOfMessagesMoved>2</ApproximateNumberOfMessagesMoved>" in body
    status, body = query(emulator, "StartMessageMoveTask", SourceArn=arn(jobs))
    assert status == 400 and "<Code>InvalidParameterValue</Code>" in body, body
    status, body = query(emulator, "CancelMessageMoveTask", TaskHandle="bad")
    assert status == 400 and "TaskHandle is invalid" in body, body
