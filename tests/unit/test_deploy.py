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


def keep_everything(clients: Clients) -> dict[str, str]:
    """What `cdk destroy` with removal=retain leaves: both tables, both queues and the DLQ's audit
    log group. The queues' URLs by name."""
    clients.client("logs").create_log_group(logGroupName="labex-q05-dlq-audit")
    clients.client("logs").create_log_group(logGroupName="labex-q05-dlq-audit-other")
    dynamodb = clients.client("dynamodb")
    create_table(dynamodb, "labex-q05-orders")
    create_table(dynamodb, "labex-q05-reference")
    sqs = clients.client("sqs")
    return {
        name: sqs.create_queue(QueueName=name)["QueueUrl"]
        for name in ("labex-q05-jobs", "labex-q05-jobs-dlq")
    }


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
