"""The payments example (examples/payments), deployed on the local stack as its team would deploy
it: its own app synthesized as `cdk synth` runs it (its cdk.json, `-c local=true`; by the run's
synth service, which has the CDK loaded already), then `cdk deploy` of that assembly with the
real CDK CLI. The same payment twice and a conflicting one: one write,
one acknowledged duplicate, one dead letter; the operators' tools read its stack by its own
prefix and judge its dead letter with its own handler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from local.clients import environment_without_aws
from local.exports import local_queue_url
from local.paths import NODE_BIN, ROOT
from local.session import wait_for
from ops import observe

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(45)]

EXAMPLE = ROOT / "examples" / "payments"
STACK = "payments-consumer"
SETTLE = 120  # a deadline: two failed deliveries of the conflict, 12 s apart, on a loaded machine


def cdk(session, *args: str, env: dict[str, str]) -> None:
    result = subprocess.run(
        [str(NODE_BIN / "cdk"), *args, "--ci", "--no-color"],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = " | ".join(result.stderr.strip().splitlines()[-4:])
    assert result.returncode == 0, f"cdk {args[0]} failed: {tail}"


@pytest.fixture(scope="module")
def deployed(shared_aws, tmp_path_factory):
    """The example's stack, deployed with -c local=true (short timeouts, two receives); deleted
    afterwards."""
    session = shared_aws.session
    assembly = tmp_path_factory.mktemp("payments") / "cdk.out"
    outputs_file = assembly.parent / "outputs.json"
    env = {
        **environment_without_aws("CDK_DEFAULT_ACCOUNT", "CDK_DEFAULT_REGION"),
        **session.aws_env(),
        # The team's venv first: its cdk.json runs `python3 app.py`.
        "PATH": os.pathsep.join(
            [str(Path(sys.executable).parent), str(NODE_BIN), os.environ.get("PATH", "")]
        ),
    }
    shared_aws.synth({"local": "true"}, assembly, app=EXAMPLE / "app.py")
    shared_aws.bootstrap_once(assembly)
    cdk(
        session,
        "deploy",
        "--app",
        str(assembly),
        "--require-approval",
        "never",
        "--outputs-file",
        str(outputs_file),
        env=env,
    )
    outputs = json.loads(outputs_file.read_text())[STACK]
    try:
        yield session, outputs
    finally:
        cloudformation = session.client("cloudformation")
        cloudformation.delete_stack(StackName=STACK)

        def gone() -> bool:
            stacks = cloudformation.list_stacks()["StackSummaries"]
            return not any(s["StackName"] == STACK and s["StackStatus"] != "DELETE_COMPLETE" for s in stacks)

        wait_for(gone, timeout=60, what=f"stack {STACK} to be deleted")


def payment(payment_id: str, amount: int, currency: str = "EUR") -> str:
    return json.dumps({"payment_id": payment_id, "amount_cents": amount, "currency": currency})


def ops(capsys, *args: str) -> dict:
    """`python -m ops <args> --json`, in this process (the AWS environment is the emulator's), its
    printed JSON."""
    from ops.__main__ import main

    capsys.readouterr()
    status = main([*args, "--json"])
    out = capsys.readouterr().out
    assert status == 0, out
    found: dict = json.loads(out)
    return found


def test_the_same_payment_twice_and_a_conflicting_one(deployed, capsys, monkeypatch):
    session, outputs = deployed
    for key, value in session.process_env().items():
        if key.startswith("AWS_"):
            monkeypatch.setenv(key, value)
    sqs, dynamodb, logs = session.client("sqs"), session.client("dynamodb"), session.client("logs")
    queue = local_queue_url(session.aws_env()["AWS_ENDPOINT_URL"], outputs["QueueUrl"])
    dlq = local_queue_url(session.aws_env()["AWS_ENDPOINT_URL"], outputs["DeadLetterQueueUrl"])
    table = outputs["OrdersTableName"]
    since = int(time.time() * 1000) - 1000

    def stored() -> list[dict]:
        return [
            observe.plain_item(item) for item in dynamodb.scan(TableName=table, ConsistentRead=True)["Items"]
        ]

    sqs.send_message(QueueUrl=queue, MessageBody=payment("pay-1", 1250))
    wait_for(stored, timeout=SETTLE, what="the first payment to be written")
    sqs.send_message(QueueUrl=queue, MessageBody=payment("pay-1", 1250))
    sqs.send_message(QueueUrl=queue, MessageBody=payment("pay-1", 9999))

    def dead_letters() -> list[dict]:
        answer = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, VisibilityTimeout=0)
        letters: list[dict] = answer.get("Messages", [])
        return letters

    (letter,) = wait_for(dead_letters, timeout=SETTLE, what="the conflicting payment in the DLQ")
    assert json.loads(letter["Body"])["amount_cents"] == 9999
    assert stored() == [{"payment_id": "pay-1", "amount_cents": 1250, "currency": "EUR", "fee_cents": 25}]

    records = observe.log_records(logs, outputs["LogGroupName"], since)
    results = [r.data for r in records if r.tag == "RESULT"]
    assert results == [
        {"id": "pay-1", "amount_cents": 1250, "currency": "EUR", "processed": True, "duplicate": False},
        {"id": "pay-1", "amount_cents": 1250, "currency": "EUR", "processed": False, "duplicate": True},
    ]
    # Each receive of the conflicting payment failed as a conflict (two receives, then the DLQ). On
    # a loaded machine a delivery may also fail for want of time (OutOfTime, 2 s functions here)
    # and be retried: that is a failed attempt, never an acknowledgement.
    errors = [r.data for r in records if r.tag == "ERROR"]
    conflicts = [e for e in errors if e["error"] == "ConflictingOrder"]
    assert len(conflicts) == 2 and all(e["id"] == "pay-1" and e["amount_cents"] == 9999 for e in conflicts)
    assert {e["error"] for e in errors} <= {"ConflictingOrder", "OutOfTime"}

    # The operators' tools, on the example's stack (its prefix, its outputs) and its handler.
    status = ops(capsys, "status", "--prefix", "payments")
    assert status["target"]["stack"] == STACK and status["target"]["reference_table"] == ""
    assert [item["payment_id"] for item in status["orders"]] == ["pay-1"]
    listed = ops(capsys, "dlq", "list", "--stack", STACK, "--handler", str(EXAMPLE / "payments"))
    assert listed["counts"]["conflict"] == 1
    (message,) = listed["messages"]
    assert message["id"] == "pay-1" and "already stored with different details" in message["reason"]
    # By its stack alone (the default prefix names another deployment): its own alarms, the ones
    # that notify its topic, not the lab's.
    by_stack = ops(capsys, "status", "--stack", STACK)
    assert by_stack["target"]["function_name"] == "payments-worker"
    assert len(by_stack["alarms"]) == 10 and all(
        a["name"].startswith("payments-") for a in by_stack["alarms"]
    )
    cost = ops(capsys, "cost", "--prefix", "payments", "--since", "10")
    assert cost["stack"] == STACK
