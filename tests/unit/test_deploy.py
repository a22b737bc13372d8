"""`ops deploy`: which kept resources a deploy would collide with, the one line that stops it,
and the adoption (cdk import with a mapping, then cdk deploy) it runs instead. moto in-process
plays the account; the CDK CLI is replaced by a recorder that writes the synthesized template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from ops import deploy as deploying
from ops.__main__ import main
from ops.aws import Clients
from tests.unit.conftest import create_table, mocked_aws

SNAPSHOT = Path(__file__).parents[1] / "infra" / "__snapshots__" / "test_snapshot_nag_lint"
TEMPLATE = json.loads((SNAPSHOT / "test_template_matches_snapshot.json").read_text())
STACK = "labex-q05-consumer"
KEPT = {
    "StorageOrders79EED263": ("table", "labex-q05-orders"),
    "StorageReference7C447470": ("table", "labex-q05-reference"),
    "MessagingDeadLetters30EBD3E2": ("queue", "labex-q05-jobs-dlq"),
    "MessagingJobsBB264806": ("queue", "labex-q05-jobs"),
    "OperatorDlqAudit36524C05": ("log group", "labex-q05-dlq-audit"),
}


@pytest.fixture
def aws():
    with mocked_aws():
        yield Clients()


class FakeCdk:
    """Records each CLI call; `synth` writes a one-stack assembly holding TEMPLATE."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.mapping: dict[str, Any] | None = None

    def __call__(self, args: list[str]) -> None:
        self.calls.append(args)
        if args[0] == "synth":
            out = Path(args[args.index("--output") + 1])
            out.mkdir()
            (out / f"{STACK}.template.json").write_text(json.dumps(TEMPLATE))
            artifact = {
                "type": "aws:cloudformation:stack",
                "properties": {"templateFile": f"{STACK}.template.json"},
            }
            (out / "manifest.json").write_text(json.dumps({"artifacts": {STACK: artifact}}))
        if args[0] == "import":
            self.mapping = json.loads(Path(args[args.index("--resource-mapping") + 1]).read_text())

    def verbs(self) -> list[str]:
        return [call[0] for call in self.calls]


def properties(name: str) -> dict[str, Any]:
    """The template's properties of the kept resource named `name`."""
    logical_id = next(key for key, (_, kept) in KEPT.items() if kept == name)
    return dict(TEMPLATE["Resources"][logical_id]["Properties"])


def keep_everything(clients: Clients) -> dict[str, str]:
    """What `cdk destroy` with removal=retain leaves: both tables, both queues and the DLQ's audit
    log group, each with the template's settings. The queues' URLs by name."""
    logs = clients.client("logs")
    logs.create_log_group(logGroupName="labex-q05-dlq-audit")
    logs.put_retention_policy(
        logGroupName="labex-q05-dlq-audit",
        retentionInDays=properties("labex-q05-dlq-audit")["RetentionInDays"],
    )
    logs.create_log_group(logGroupName="labex-q05-dlq-audit-other")
    dynamodb = clients.client("dynamodb")
    for table in ("labex-q05-orders", "labex-q05-reference"):
        create_table(dynamodb, table)
        ttl = properties(table).get("TimeToLiveSpecification")
        if ttl:
            dynamodb.update_time_to_live(TableName=table, TimeToLiveSpecification=ttl)
        if properties(table).get("PointInTimeRecoverySpecification", {}).get("PointInTimeRecoveryEnabled"):
            dynamodb.update_continuous_backups(
                TableName=table, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
            )
        if properties(table).get("DeletionProtectionEnabled"):
            dynamodb.update_table(TableName=table, DeletionProtectionEnabled=True)
    sqs = clients.client("sqs")
    urls = {}
    for name in ("labex-q05-jobs-dlq", "labex-q05-jobs"):
        settings: Any = {k: str(v) for k, v in properties(name).items() if k in deploying.QUEUE_ATTRIBUTES}
        urls[name] = sqs.create_queue(QueueName=name, Attributes=settings)["QueueUrl"]
    return urls


def test_the_kept_resources_are_the_retained_tables_and_queues_by_name():
    """Only resources with a Retain deletion policy and a static name count: both tables, both
    queues and the audit log group, not the worker's log group, deleted with the stack."""
    found = {kept.logical_id: (kept.kind, kept.name) for kept in deploying.kept_resources(TEMPLATE)}
    assert found == KEPT


def test_a_first_deploy_collides_with_nothing_and_deploys(aws):
    cdk = FakeCdk()
    done = deploying.deploy(aws, ["prefix=labex-q05"], adopt=False, cdk=cdk, progress=lambda _: None)
    assert cdk.verbs() == ["synth", "deploy"] and done["adopted"] == []
    assert cdk.calls[0][:4] == ["synth", "--quiet", "-c", "prefix=labex-q05"]
    assert cdk.calls[1][1] == "--app"  # the assembly just checked, not a second synth


def test_a_deploy_after_destroy_stops_before_cloudformation_naming_what_was_kept(aws, capsys):
    """Exit 2, one line naming each kept resource and the command that adopts them; no CLI call
    after the synth."""
    keep_everything(aws)
    cdk = FakeCdk()
    with pytest.raises(deploying.KeptResourcesError) as stopped:
        deploying.deploy(aws, [], adopt=False, cdk=cdk, progress=lambda _: None)
    line = str(stopped.value)
    assert cdk.verbs() == ["synth"] and "\n" not in line
    for kind, name in KEPT.values():
        assert f"{kind} {name}" in line
    assert line.endswith("python -m ops deploy --adopt")


def test_adopting_imports_each_kept_resource_by_its_identifier_then_deploys(aws):
    urls = keep_everything(aws)
    cdk = FakeCdk()
    done = deploying.deploy(aws, [], adopt=True, cdk=cdk, progress=lambda _: None)
    assert cdk.verbs() == ["synth", "import", "deploy"]
    assert cdk.mapping == {
        "StorageOrders79EED263": {"TableName": "labex-q05-orders"},
        "StorageReference7C447470": {"TableName": "labex-q05-reference"},
        "MessagingDeadLetters30EBD3E2": {"QueueUrl": urls["labex-q05-jobs-dlq"]},
        "MessagingJobsBB264806": {"QueueUrl": urls["labex-q05-jobs"]},
        "OperatorDlqAudit36524C05": {"LogGroupName": "labex-q05-dlq-audit"},
    }
    assert sorted(done["adopted"]) == sorted(f"{kind} {name}" for kind, name in KEPT.values())


def test_only_what_exists_is_adopted(aws):
    """A kept table deleted by hand since is created by the deploy, not imported."""
    keep_everything(aws)
    aws.client("dynamodb").delete_table(TableName="labex-q05-reference")
    cdk = FakeCdk()
    deploying.deploy(aws, [], adopt=True, cdk=cdk, progress=lambda _: None)
    assert set(cdk.mapping or {}) == {
        "StorageOrders79EED263",
        "MessagingDeadLetters30EBD3E2",
        "MessagingJobsBB264806",
        "OperatorDlqAudit36524C05",
    }


def test_resources_the_stack_already_holds_are_no_collision(aws):
    """An update: the stack holds the kept resources, so the deploy goes ahead unchanged."""
    stack_template = {"Resources": {logical_id: TEMPLATE["Resources"][logical_id] for logical_id in KEPT}}
    boto3.client("cloudformation").create_stack(StackName=STACK, TemplateBody=json.dumps(stack_template))
    _, held = deploying.stack_state(aws, STACK)
    assert deploying.outside_the_stack(aws, held, TEMPLATE) == {}


def test_the_command_line_exits_2_with_one_line_and_changes_nothing(aws, capsys, monkeypatch):
    keep_everything(aws)
    cdk = FakeCdk()
    monkeypatch.setattr(deploying, "run_cdk", cdk)
    assert main(["deploy", "-c", "prefix=labex-q05"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: kept from an earlier deploy of labex-q05-consumer: ")
    assert cdk.verbs() == ["synth"]


def test_the_command_line_says_what_it_adopted_as_json(aws, capsys, monkeypatch):
    keep_everything(aws)
    monkeypatch.setattr(deploying, "run_cdk", FakeCdk())
    assert main(["deploy", "--adopt", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["stack"] == STACK and len(done["adopted"]) == 5 and done["deployed"] is True


def test_adopting_a_queue_whose_retention_differs_names_it_and_imports_nothing(aws, capsys, monkeypatch):
    """A kept jobs queue on 4 days while the template says 7: `cdk import` would record 7 and
    apply nothing. The adopt stops before the import (exit 2), one line per difference with the
    command that sets the template's value, and adopts once that ran."""
    urls = keep_everything(aws)
    sqs = aws.client("sqs")
    sqs.set_queue_attributes(QueueUrl=urls["labex-q05-jobs"], Attributes={"MessageRetentionPeriod": "345600"})
    cdk = FakeCdk()
    monkeypatch.setattr(deploying, "run_cdk", cdk)
    assert main(["deploy", "--adopt"]) == 2
    assert cdk.verbs() == ["synth"]
    err = capsys.readouterr().err
    fix = f"aws sqs set-queue-attributes --queue-url {urls['labex-q05-jobs']} --attributes MessageRetentionPeriod=604800"
    assert (
        f"queue labex-q05-jobs: MessageRetentionPeriod is 345600 live, 604800 in the template: {fix}" in err
    )
    assert err.count(" live, ") == 1 and "python -m ops deploy --adopt again" in err

    sqs.set_queue_attributes(QueueUrl=urls["labex-q05-jobs"], Attributes={"MessageRetentionPeriod": "604800"})
    assert main(["deploy", "--adopt"]) == 0
    assert cdk.verbs() == ["synth", "synth", "import", "deploy"]


def test_every_kind_of_kept_setting_is_compared():
    """Queue attributes, server-side encryption and the redrive's receives, a table's TTL (on, off,
    another attribute), billing mode, deletion protection and point-in-time recovery, and a log
    group's retention: each difference is one Drift with a command of its own."""
    queue = deploying.Kept("J", "queue", "q")
    live = {
        "MessageRetentionPeriod": "345600",
        "VisibilityTimeout": "30",
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": "arn:dlq", "maxReceiveCount": 3}),
    }
    template = {
        "MessageRetentionPeriod": 604800,
        "VisibilityTimeout": 30,
        "RedrivePolicy": {"maxReceiveCount": 5},
    }
    found = deploying.queue_drift(queue, "http://q", live, template)
    assert [(d.setting, d.live, d.template) for d in found] == [
        ("MessageRetentionPeriod", 345600, 604800),
        ("RedrivePolicy maxReceiveCount", 3, 5),
    ]
    assert '"maxReceiveCount\\":5' in found[1].fix and "arn:dlq" in found[1].fix
    table = deploying.Kept("T", "table", "t")
    on = {"TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True}}
    assert (
        deploying.table_drift(table, {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}, on) == []
    )
    (off_live,) = deploying.table_drift(table, {"TimeToLiveStatus": "DISABLED"}, on)
    assert (off_live.live, off_live.template) == ("off", "expires_at")
    assert off_live.fix.endswith("--time-to-live-specification Enabled=true,AttributeName=expires_at")
    off = {"TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": False}}
    (on_live,) = deploying.table_drift(
        table, {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}, off
    )
    assert on_live.fix.endswith("Enabled=false,AttributeName=expires_at")
    assert deploying.table_drift(table, {"TimeToLiveStatus": "DISABLED"}, {}) == []
    guarded = {
        "BillingMode": "PAY_PER_REQUEST",
        "DeletionProtectionEnabled": True,
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
    }
    as_kept = {"BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"}, "DeletionProtectionEnabled": True}
    assert deploying.table_settings_drift(table, as_kept, "ENABLED", guarded) == []
    unguarded = deploying.table_settings_drift(table, {}, "DISABLED", guarded)
    assert [(d.setting, d.live, d.template) for d in unguarded] == [
        ("BillingMode", "PROVISIONED", "PAY_PER_REQUEST"),
        ("DeletionProtectionEnabled", False, True),
        ("PointInTimeRecoveryEnabled", False, True),
    ]
    assert [d.fix for d in unguarded] == [
        "aws dynamodb update-table --table-name t --billing-mode PAY_PER_REQUEST",
        "aws dynamodb update-table --table-name t --deletion-protection-enabled",
        (
            "aws dynamodb update-continuous-backups --table-name t "
            "--point-in-time-recovery-specification PointInTimeRecoveryEnabled=true"
        ),
    ]
    (sse,) = deploying.queue_drift(
        queue, "http://q", {"SqsManagedSseEnabled": "false"}, {"SqsManagedSseEnabled": True}
    )
    assert (sse.live, sse.template) == (False, True) and sse.fix.endswith(
        "--attributes SqsManagedSseEnabled=true"
    )
    group = deploying.Kept("G", "log group", "g")
    assert deploying.log_group_drift(group, 731, {"RetentionInDays": 731}) == []
    (retention,) = deploying.log_group_drift(group, None, {"RetentionInDays": 731})
    assert retention.line() == (
        "log group g: RetentionInDays is never expire live, 731 in the template: "
        "aws logs put-retention-policy --log-group-name g --retention-in-days 731"
    )
