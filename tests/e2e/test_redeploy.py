"""Destroy and deploy again without losing the duplicate guard, on the local stack with
`removal=retain`, through the real CDK CLI's default (change-set) path: an order is stored;
`cdk destroy` keeps the tables and both queues; a plain `cdk deploy` collides with the kept orders
table and rolls back (ROLLBACK_COMPLETE, the table's message in its events); `ops deploy` stops
before CloudFormation with one line; `ops deploy --adopt` imports the kept resources and deploys
the rest; the old order, sent again, is acknowledged as a duplicate and its item is unchanged.
The stack is deployed with termination protection: `cdk destroy` is refused until it is turned off."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from local.session import QUIET_NODE, ROOT, LocalError, LocalSession, wait_for
from ops.observe import plain_item
from tests.shared_aws import FAST_TIMEOUTS

pytestmark = [pytest.mark.e2e, pytest.mark.long_wait(85)]

CONTEXT = {"prefix": "rt", "removal": "retain", "target": "local", "max_receive_count": "2", **FAST_TIMEOUTS}
ORDER = {"id": "kept-order", "quantity": 3}


def ops_deploy(session: LocalSession, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ops", "deploy", *args],
        cwd=ROOT,
        env={**session.process_env(), **QUIET_NODE},
        capture_output=True,
        text=True,
        timeout=300,
    )


def stored(session: LocalSession) -> dict | None:
    answer = session.client("dynamodb").get_item(
        TableName="rt-orders", Key={"id": {"S": ORDER["id"]}}, ConsistentRead=True
    )
    return plain_item(answer["Item"]) if "Item" in answer else None


def outcome_of(session: LocalSession, since: int) -> list[dict]:
    """The worker's RESULT lines for ORDER written after `since` (ms)."""
    logs = session.client("logs")
    events = logs.filter_log_events(logGroupName="/aws/lambda/rt-worker", startTime=since).get("events", [])
    lines = [event["message"].split("RESULT ", 1)[1] for event in events if "RESULT " in event["message"]]
    return [result for result in map(json.loads, lines) if result.get("id") == ORDER["id"]]


def send(session: LocalSession) -> None:
    queue = session.client("sqs").get_queue_url(QueueName="rt-jobs")["QueueUrl"]
    session.client("sqs").send_message(QueueUrl=queue, MessageBody=json.dumps(ORDER))


def forget_kept(session: LocalSession) -> None:
    """What a user deleting the guard on purpose does: the orders table has deletion protection."""
    dynamodb = session.client("dynamodb")
    for table in ("rt-orders", "rt-reference"):
        try:
            dynamodb.update_table(TableName=table, DeletionProtectionEnabled=False)
            dynamodb.delete_table(TableName=table)
        except dynamodb.exceptions.ResourceNotFoundException:
            pass
    logs = session.client("logs")
    for group in logs.describe_log_groups(logGroupNamePrefix="rt-")["logGroups"]:
        logs.delete_log_group(logGroupName=group["logGroupName"])
    sqs = session.client("sqs")
    for url in sqs.list_queues(QueueNamePrefix="rt-").get("QueueUrls", []):
        sqs.delete_queue(QueueUrl=url)


def test_destroy_then_adopt_keeps_the_guard(shared_aws, tmp_path):
    session = LocalSession(shared_aws.state_dir, context=CONTEXT)
    assembly = shared_aws.synth(session.context, tmp_path / "assembly")
    shared_aws.bootstrap_once(assembly)
    session.deploy(bootstrap=False, assembly=assembly)
    try:
        started = int(time.time() * 1000) - 1000
        send(session)
        wait_for(lambda: stored(session) is not None, timeout=30, what="the first order stored")
        first = stored(session)
        assert first == {**ORDER, "total_cents": 850}

        # removal=retain deploys with termination protection: `cdk destroy` is refused, the stack
        # stays, until the operator turns it off (README's deploy block).
        cloudformation = session.client("cloudformation")
        deployed = cloudformation.describe_stacks(StackName=session.stack_name)["Stacks"][0]
        assert deployed["EnableTerminationProtection"]
        # Through CDK's bootstrap roles, as on an account: CloudFormation acts as the execution role.
        assert "cfn-exec-role" in deployed.get("RoleARN", "")
        with pytest.raises(LocalError, match="cannot be deleted while TerminationProtection is enabled"):
            session.destroy()
        assert cloudformation.describe_stacks(StackName=session.stack_name)["Stacks"][0]["StackStatus"] == (
            "CREATE_COMPLETE"
        )
        cloudformation.update_termination_protection(
            StackName=session.stack_name, EnableTerminationProtection=False
        )
        session.destroy()
        kept = {t for t in session.client("dynamodb").list_tables()["TableNames"] if t.startswith("rt-")}
        assert kept == {"rt-orders", "rt-reference"} and stored(session) == first

        # The CLI's plain deploy: CloudFormation cannot create a table whose name is taken.
        with pytest.raises(LocalError):
            session.deploy(bootstrap=False, assembly=assembly)
        assert cloudformation.describe_stacks(StackName=session.stack_name)["Stacks"][0]["StackStatus"] == (
            "ROLLBACK_COMPLETE"
        )
        reasons = [
            event.get("ResourceStatusReason", "")
            for event in cloudformation.describe_stack_events(StackName=session.stack_name)["StackEvents"]
            if event["ResourceStatus"] == "CREATE_FAILED"
        ]
        # The embedded AWS creates one resource at a time, so the first kept one it meets fails
        # (AWS creates independent resources side by side: each kept one fails there).
        assert len(reasons) == 1 and "already exists" in reasons[0], reasons
        assert any(
            f"'{name}'" in reasons[0]
            for name in ("rt-orders", "rt-reference", "rt-jobs", "rt-jobs-dlq", "rt-dlq-audit")
        )
        assert stored(session) == first

        stopped = ops_deploy(session, "--app", str(assembly))
        assert stopped.returncode == 2 and stopped.stdout == ""
        line = stopped.stderr.strip().splitlines()[-1]
        assert line.startswith("error: kept from an earlier deploy of rt-consumer: ") and line.endswith(
            "python -m ops deploy --adopt"
        )
        for name in (
            "table rt-orders",
            "table rt-reference",
            "queue rt-jobs",
            "queue rt-jobs-dlq",
            "log group rt-dlq-audit",
        ):
            assert name in line

        # Adopting into a template whose jobs retention differs (6 days; the kept queue holds 7):
        # an import would record 6 and apply nothing. Refused before anything changes, the
        # difference named with the command that sets it; adopted once that ran.
        changed = LocalSession(shared_aws.state_dir, context={**CONTEXT, "job_retention_days": "6"})
        drifted = shared_aws.synth(changed.context, tmp_path / "assembly.drifted")
        refused = ops_deploy(session, "--adopt", "--app", str(drifted))
        assert refused.returncode == 2 and refused.stdout == "", refused.stderr[-2000:]
        jobs_url = session.client("sqs").get_queue_url(QueueName="rt-jobs")["QueueUrl"]
        (line,) = [text for text in refused.stderr.splitlines() if " live, " in text]
        assert line.strip() == (
            "queue rt-jobs: MessageRetentionPeriod is 604800 live, 518400 in the template: "
            f"aws sqs set-queue-attributes --queue-url {jobs_url} --attributes MessageRetentionPeriod=518400"
        )
        assert "IMPORT" not in refused.stderr
        session.client("sqs").set_queue_attributes(
            QueueUrl=jobs_url, Attributes={"MessageRetentionPeriod": "518400"}
        )  # what the printed command does
        adopted = ops_deploy(session, "--adopt", "--app", str(drifted), "--json")
        assert adopted.returncode == 0, adopted.stderr[-2000:]
        assert sorted(json.loads(adopted.stdout)["adopted"]) == [
            "log group rt-dlq-audit",
            "queue rt-jobs",
            "queue rt-jobs-dlq",
            "table rt-orders",
            "table rt-reference",
        ]
        # Through CDK's bootstrap roles, as on an account: the CLI assumed the deploy role (it
        # warns and proceeds with the caller's keys when it cannot) and passed the execution role.
        assert "proceeding anyway" not in adopted.stderr.lower(), adopted.stderr[-2000:]
        # The import created the stack from the kept resources, and the deploy then updated it
        # with the rest: the CLI saw both, and the stack says so (also once the reference seeder,
        # which the update added, has answered its Create).
        for status in ("IMPORT_COMPLETE", "UPDATE_COMPLETE"):
            assert f"| {status}" in adopted.stderr and "rt-consumer" in adopted.stderr, adopted.stderr[-3000:]
        stack = cloudformation.describe_stacks(StackName=session.stack_name)["Stacks"][0]
        assert stack["StackStatus"] == "UPDATE_COMPLETE" and stack["EnableTerminationProtection"] is True
        resources = cloudformation.describe_stack_resources(StackName=session.stack_name)["StackResources"]
        physical = {r["PhysicalResourceId"] for r in resources if r["ResourceType"] == "AWS::DynamoDB::Table"}
        assert physical == {"rt-orders", "rt-reference"}
        retention = session.client("sqs").get_queue_attributes(
            QueueUrl=jobs_url, AttributeNames=["MessageRetentionPeriod"]
        )["Attributes"]["MessageRetentionPeriod"]
        assert retention == "518400"  # the live queue holds what the stack's template says

        send(session)
        wait_for(
            lambda: any(result.get("duplicate") for result in outcome_of(session, started)),
            timeout=30,
            what="the resent order acknowledged as a duplicate",
        )
        assert stored(session) == first
    finally:
        session.delete_stack()
        forget_kept(session)
