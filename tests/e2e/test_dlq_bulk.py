"""The dead-letter tools at volume, and the operator's policy: as a user holding only the stack's
`<prefix>-operator` policy, a DLQ of 200 is listed and redriven
completely; SQS's own move task moves what is left; `ops status` reads every section while
writes are denied. (The classified recovery of a mixed DLQ: test_dlq_recovery.py.)"""

from __future__ import annotations

import json
import subprocess

import pytest

from local import aws_cli
from local.session import wait_for
from ops import observe
from tests.e2e.operator import Operator, order
from tests.shared_aws import FAST_TIMEOUTS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(35)]

PREFIX = "bulk"
SETTLE = 120  # 200 orders written on a loaded machine


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    with shared_aws.stack({**FAST_TIMEOUTS, "prefix": PREFIX}, tmp_path_factory.mktemp(PREFIX)) as session:
        yield session, session.user_env(), session.outputs()


@pytest.fixture(scope="module")
def operator(stack):
    return Operator.create(stack[0])


def test_a_dlq_of_two_hundred_is_listed_and_redriven_completely(stack, operator):
    session, env, _ = stack
    sqs = session.client("sqs")
    bodies = [order(f"rec-bulk-{n}", 1 + n % 10) for n in range(200)]
    for start in range(0, 200, 10):
        sqs.send_message_batch(
            QueueUrl=env["DLQ_URL"],
            Entries=[
                {"Id": str(i), "MessageBody": body} for i, body in enumerate(bodies[start : start + 10])
            ],
        )
    listing = operator.json("dlq", "list")
    assert listing["counts"]["pending"] == 200 and len(listing["messages"]) == 200
    redriven = operator.json("dlq", "redrive")
    assert redriven["counts"]["pending"]["moved"] == 200 and redriven["failures"] == []
    wait_for(
        lambda: (
            len(
                [
                    i
                    for i in observe.scan_items(session.client("dynamodb"), env["ORDERS_TABLE"])
                    if str(i["id"]).startswith("rec-bulk-")
                ]
            )
            == 200
        ),
        timeout=SETTLE,
        what="the 200 orders written",
    )
    assert observe.queue_counters(sqs, env["DLQ_URL"])["visible"] == 0


def test_sqs_move_task_moves_what_is_left_and_completes(stack, operator):
    """What SQS's own redrive does with a DLQ (it does not judge: a malformed body goes back
    too): `aws sqs start-message-move-task` completes with the count."""
    session, env, outputs = stack
    session.client("sqs").send_message(QueueUrl=env["DLQ_URL"], MessageBody='{"id": "bulk-bad"}')
    dlq_arn = f"arn:aws:sqs:{env['AWS_REGION']}:123456789012:{PREFIX}-jobs-dlq"
    admin = session.process_env()
    started = subprocess.run(
        [
            str(aws_cli.aws()),
            "sqs",
            "start-message-move-task",
            "--source-arn",
            dlq_arn,
            "--destination-arn",
            outputs["QueueArn"],
        ],
        env=admin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    sqs = session.client("sqs")

    def finished() -> dict | None:
        (task,) = sqs.list_message_move_tasks(SourceArn=dlq_arn)["Results"]
        return task if task["Status"] != "RUNNING" else None

    task = wait_for(finished, timeout=60, what="the move task to finish")
    assert task is not None  # wait_for returns only a truthy answer
    assert (
        task["Status"],
        task["ApproximateNumberOfMessagesMoved"],
        task["ApproximateNumberOfMessagesToMove"],
    ) == ("COMPLETED", 1, 1)


def test_the_operator_policy_covers_status_and_nothing_more(stack, operator):
    """With the operator's policy alone, `ops status` reads every section (the live view reads
    the same); writing an order or deleting the queue is denied."""
    _session, env, _ = stack
    status = operator.run("status", "--json")
    snapshot = json.loads(status.stdout)
    assert status.returncode == 0, (snapshot["error"], snapshot["errors"])
    assert snapshot["error"] is None and snapshot["errors"] == {}
    assert len(snapshot["alarms"]) == 10 and "decision:Accepted" in snapshot["series"]
    import boto3
    from botocore.exceptions import ClientError

    def as_operator(service):
        return boto3.client(
            service,
            endpoint_url=env["AWS_ENDPOINT_URL"],
            region_name=env["AWS_REGION"],
            aws_access_key_id=operator.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=operator.env["AWS_SECRET_ACCESS_KEY"],
        )

    for call in (
        lambda: as_operator("dynamodb").put_item(TableName=env["ORDERS_TABLE"], Item={"id": {"S": "x"}}),
        lambda: as_operator("sqs").delete_queue(QueueUrl=env["QUEUE_URL"]),
        lambda: as_operator("logs").delete_log_group(logGroupName=f"{PREFIX}-dlq-audit"),
    ):
        with pytest.raises(ClientError) as denied:
            call()
        assert denied.value.response["ResponseMetadata"]["HTTPStatusCode"] in (400, 403)
        assert "not authorized" in str(denied.value)
