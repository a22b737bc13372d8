"""`python -m ops deploy [--adopt]`: `npx cdk deploy`, but never into resources a destroy kept.

With `removal=retain` (the default) `cdk destroy` keeps both tables, both queues and the DLQ's
audit log group: the orders table is the duplicate guard. Deploying the same app again would make CloudFormation create resources
whose names are taken: the create fails and the stack rolls back. This command synthesizes the
app, finds the kept resources that exist outside the stack, and

- without `--adopt`, stops before CloudFormation starts, naming them and the command that adopts;
- with `--adopt`, imports them into the stack by `cdk import` with a resource mapping, then runs
  `cdk deploy` for the rest, so the stored orders keep guarding against duplicates.

`cdk import` rather than `cdk deploy --import-existing-resources`: CloudFormation's automatic
import only takes resources whose primary identifier is a property of the template; a queue's is
its URL, which is read-only ("Import AWS resources into a CloudFormation stack automatically",
CloudFormation User Guide), so the DLQ and the messages waiting in it would collide instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from ops.aws import is_absent, stack_missing

ROOT = Path(__file__).resolve().parents[1]
KEPT_POLICIES = ("Retain", "RetainExceptOnCreate")
# The resource types the stack keeps, the template property that names each, and the identifier
# `cdk import` takes for it (GetTemplateSummary's ResourceIdentifiers).
NAMED = {
    "AWS::DynamoDB::Table": ("table", "TableName"),
    "AWS::SQS::Queue": ("queue", "QueueName"),
    "AWS::Logs::LogGroup": ("log group", "LogGroupName"),
}
# A stack in this state holds nothing and can only be deleted (a failed first create).
EMPTY_STATES = ("ROLLBACK_COMPLETE",)


class DeployError(RuntimeError):
    """One line for the operator: what stopped the deploy; `lines`, any detail printed under it."""

    lines: tuple[str, ...] | list[str] = ()


class KeptResourcesError(DeployError):
    """Kept resources would collide; nothing was changed."""


class DriftError(KeptResourcesError):
    """A kept resource's live settings differ from the template it would be adopted into;
    nothing was changed. `lines`: one per difference, with the command that mends it."""

    def __init__(self, message: str, lines: list[str]) -> None:
        super().__init__(message)
        self.lines = lines


# Template properties of a kept queue that are one SQS attribute each, compared as numbers.
QUEUE_ATTRIBUTES = (
    "MessageRetentionPeriod",
    "VisibilityTimeout",
    "DelaySeconds",
    "MaximumMessageSize",
    "ReceiveMessageWaitTimeSeconds",
)


@dataclass(frozen=True)
class Drift:
    """One setting of a kept resource whose live value is not the template's, and the command
    that sets it to the template's."""

    kept: Kept
    setting: str
    live: Any
    template: Any
    fix: str

    def line(self) -> str:
        return f"{self.kept.label()}: {self.setting} is {self.live} live, {self.template} in the template: {self.fix}"


def queue_drift(kept: Kept, url: str, live: dict[str, str], properties: dict[str, Any]) -> list[Drift]:
    """The queue's template settings that its live attributes (GetQueueAttributes) do not hold."""
    found = []
    for name in QUEUE_ATTRIBUTES:
        wanted = properties.get(name)
        if isinstance(wanted, int | str) and name in live and int(live[name]) != int(wanted):
            fix = f"aws sqs set-queue-attributes --queue-url {url} --attributes {name}={int(wanted)}"
            found.append(Drift(kept, name, int(live[name]), int(wanted), fix))
    wanted_sse = properties.get("SqsManagedSseEnabled")
    if isinstance(wanted_sse, bool) and "SqsManagedSseEnabled" in live:
        live_sse = live["SqsManagedSseEnabled"].lower() == "true"
        if live_sse != wanted_sse:
            fix = f"aws sqs set-queue-attributes --queue-url {url} --attributes SqsManagedSseEnabled={str(wanted_sse).lower()}"
            found.append(Drift(kept, "SqsManagedSseEnabled", live_sse, wanted_sse, fix))
    wanted_receives = (properties.get("RedrivePolicy") or {}).get("maxReceiveCount")
    if isinstance(wanted_receives, int) and "RedrivePolicy" in live:
        policy = json.loads(live["RedrivePolicy"])
        if int(policy.get("maxReceiveCount", 0)) != wanted_receives:
            wanted_policy = json.dumps({**policy, "maxReceiveCount": wanted_receives}, separators=(",", ":"))
            fix = f"aws sqs set-queue-attributes --queue-url {url} --attributes '{{\"RedrivePolicy\":{json.dumps(wanted_policy)}}}'"
            found.append(
                Drift(
                    kept, "RedrivePolicy maxReceiveCount", policy.get("maxReceiveCount"), wanted_receives, fix
                )
            )
    return found


def table_drift(kept: Kept, time_to_live: dict[str, Any], properties: dict[str, Any]) -> list[Drift]:
    """The table's template TTL (on which attribute, or off) that DescribeTimeToLive does not show."""
    wanted = properties.get("TimeToLiveSpecification")
    if not isinstance(wanted, dict):
        return []
    on = time_to_live.get("TimeToLiveStatus") in {"ENABLING", "ENABLED"}
    live = time_to_live.get("AttributeName") if on else "off"
    template = wanted.get("AttributeName") if wanted.get("Enabled") else "off"
    if live == template:
        return []
    spec = (
        f"Enabled=true,AttributeName={template}"
        if template != "off"
        else f"Enabled=false,AttributeName={live}"
    )
    fix = f"aws dynamodb update-time-to-live --table-name {kept.name} --time-to-live-specification {spec}"
    return [Drift(kept, "TimeToLiveSpecification", live, template, fix)]


def table_settings_drift(
    kept: Kept, table: dict[str, Any], recovery: str | None, properties: dict[str, Any]
) -> list[Drift]:
    """The table's template billing mode, deletion protection and point-in-time recovery that its
    live description (DescribeTable; `recovery`: DescribeContinuousBackups' status) does not hold."""
    found = []
    update = f"aws dynamodb update-table --table-name {kept.name}"
    wanted_mode = properties.get("BillingMode")
    live_mode = (table.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
    if wanted_mode == "PAY_PER_REQUEST" and live_mode != wanted_mode:
        found.append(
            Drift(kept, "BillingMode", live_mode, wanted_mode, f"{update} --billing-mode {wanted_mode}")
        )
    wanted_protection = properties.get("DeletionProtectionEnabled")
    live_protection = bool(table.get("DeletionProtectionEnabled"))
    if isinstance(wanted_protection, bool) and live_protection != wanted_protection:
        flag = "--deletion-protection-enabled" if wanted_protection else "--no-deletion-protection-enabled"
        found.append(
            Drift(kept, "DeletionProtectionEnabled", live_protection, wanted_protection, f"{update} {flag}")
        )
    wanted_recovery = (properties.get("PointInTimeRecoverySpecification") or {}).get(
        "PointInTimeRecoveryEnabled"
    )
    live_recovery = recovery == "ENABLED"
    if isinstance(wanted_recovery, bool) and recovery is not None and live_recovery != wanted_recovery:
        fix = (
            f"aws dynamodb update-continuous-backups --table-name {kept.name} "
            f"--point-in-time-recovery-specification PointInTimeRecoveryEnabled={str(wanted_recovery).lower()}"
        )
        found.append(Drift(kept, "PointInTimeRecoveryEnabled", live_recovery, wanted_recovery, fix))
    return found


def log_group_drift(kept: Kept, live_days: int | None, properties: dict[str, Any]) -> list[Drift]:
    """The log group's template retention that its live retention is not."""
    wanted = properties.get("RetentionInDays")
    if not isinstance(wanted, int) or live_days == wanted:
        return []
    fix = f"aws logs put-retention-policy --log-group-name {kept.name} --retention-in-days {wanted}"
    return [Drift(kept, "RetentionInDays", live_days or "never expire", wanted, fix)]


def drift(clients: Any, found: dict[Kept, dict[str, str]], template: dict[str, Any]) -> list[Drift]:
    """Every setting in which a kept resource differs from the template it would be adopted into.
    `cdk import` records the template's properties without applying them (the CDK does not check
    that they are correct and complete; CloudFormation advises drift detection after an import),
    and a deploy of the same template changes nothing: a difference found only afterwards would
    stay, the template saying otherwise."""
    resources = template.get("Resources") or {}
    found_drift: list[Drift] = []
    for kept, ids in found.items():
        properties = resources[kept.logical_id].get("Properties") or {}
        if kept.kind == "queue":
            live = clients.client("sqs").get_queue_attributes(
                QueueUrl=ids["QueueUrl"], AttributeNames=["All"]
            )
            found_drift += queue_drift(kept, ids["QueueUrl"], live.get("Attributes", {}), properties)
        elif kept.kind == "table":
            dynamodb = clients.client("dynamodb")
            ttl = dynamodb.describe_time_to_live(TableName=kept.name)
            found_drift += table_drift(kept, ttl.get("TimeToLiveDescription", {}), properties)
            table = dynamodb.describe_table(TableName=kept.name)["Table"]
            backups = dynamodb.describe_continuous_backups(TableName=kept.name)[
                "ContinuousBackupsDescription"
            ]
            recovery = (backups.get("PointInTimeRecoveryDescription") or {}).get("PointInTimeRecoveryStatus")
            found_drift += table_settings_drift(kept, table, recovery, properties)
        else:
            groups = clients.client("logs").describe_log_groups(logGroupNamePrefix=kept.name)["logGroups"]
            days = next((g.get("retentionInDays") for g in groups if g["logGroupName"] == kept.name), None)
            found_drift += log_group_drift(kept, days, properties)
    return found_drift


def drift_error(stack: str, drifts: list[Drift]) -> DriftError:
    return DriftError(
        f"{len(drifts)} setting(s) of kept resources differ from the template of {stack}; an import "
        "would record the template's without applying them, so nothing was adopted. Run the "
        "command after each, then python -m ops deploy --adopt again:",
        [d.line() for d in drifts],
    )


@dataclass(frozen=True)
class Kept:
    """A resource the template keeps on delete, by its static name."""

    logical_id: str
    kind: str  # table, queue or log group
    name: str

    def label(self) -> str:
        return f"{self.kind} {self.name}"


def kept_resources(template: dict[str, Any]) -> list[Kept]:
    """The template's resources with a Retain deletion policy and a static name of their own."""
    found = []
    for logical_id, resource in (template.get("Resources") or {}).items():
        kind = NAMED.get(resource.get("Type", ""))
        if kind is None or resource.get("DeletionPolicy") not in KEPT_POLICIES:
            continue
        name = (resource.get("Properties") or {}).get(kind[1])
        if isinstance(name, str):
            found.append(Kept(logical_id, kind[0], name))
    return found


def identifier(clients: Any, kept: Kept) -> dict[str, str] | None:
    """The import identifier of the resource if it exists in the account, else None."""
    try:
        if kept.kind == "table":
            clients.client("dynamodb").describe_table(TableName=kept.name)
            return {"TableName": kept.name}
        if kept.kind == "queue":
            return {"QueueUrl": clients.client("sqs").get_queue_url(QueueName=kept.name)["QueueUrl"]}
        groups = clients.client("logs").describe_log_groups(logGroupNamePrefix=kept.name)["logGroups"]
        return {"LogGroupName": kept.name} if any(g["logGroupName"] == kept.name for g in groups) else None
    except ClientError as error:
        if is_absent(error):  # only "it does not exist" means absent; denied or throttled is raised
            return None
        raise


def stack_state(clients: Any, stack: str) -> tuple[str | None, set[str]]:
    """(status or None when there is no stack, the logical ids it holds)."""
    cloudformation = clients.client("cloudformation")
    try:
        status = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"]
    except ClientError as error:
        if stack_missing(error):
            return None, set()
        raise
    if status in EMPTY_STATES:
        return status, set()
    paginator = cloudformation.get_paginator("list_stack_resources")
    held = {
        summary["LogicalResourceId"]
        for page in paginator.paginate(StackName=stack)
        for summary in page["StackResourceSummaries"]
        if summary.get("ResourceStatus") != "DELETE_COMPLETE"
    }
    return status, held


def outside_the_stack(clients: Any, held: set[str], template: dict[str, Any]) -> dict[Kept, dict[str, str]]:
    """Kept resources that exist but are not among the stack's `held` logical ids (stack_state):
    what a plain deploy would collide with."""
    found = {}
    for kept in kept_resources(template):
        if kept.logical_id in held:
            continue
        ids = identifier(clients, kept)
        if ids is not None:
            found[kept] = ids
    return found


def collision_line(stack: str, found: dict[Kept, dict[str, str]]) -> str:
    names = ", ".join(kept.label() for kept in found)
    return (
        f"kept from an earlier deploy of {stack}: {names}; a plain deploy would fail on them "
        "(CloudFormation cannot create what exists). Adopt them, stored orders and dead letters "
        "included: python -m ops deploy --adopt"
    )


def resource_mapping(found: dict[Kept, dict[str, str]]) -> dict[str, dict[str, str]]:
    """`cdk import --resource-mapping`'s file: logical id -> the resource's import identifier."""
    return {kept.logical_id: ids for kept, ids in found.items()}


@dataclass
class Assembly:
    """A synthesized cloud assembly with one stack."""

    directory: Path
    stack: str
    template: dict[str, Any]

    @classmethod
    def read(cls, directory: Path) -> Assembly:
        manifest = json.loads((directory / "manifest.json").read_text())
        stacks = [
            artifact
            for artifact in manifest.get("artifacts", {}).values()
            if artifact.get("type") == "aws:cloudformation:stack"
        ]
        if len(stacks) != 1:
            raise DeployError(f"expected one stack in the app, found {len(stacks)}")
        properties = stacks[0]["properties"]
        template = json.loads((directory / properties["templateFile"]).read_text())
        return cls(
            directory, properties.get("stackName") or properties["templateFile"].split(".")[0], template
        )


Runner = Callable[[list[str]], None]


def run_cdk(args: list[str]) -> None:
    """The pinned CDK CLI, all its output on stderr (stdout is this command's answer); a failure
    is one line."""
    command = ["npx", "--no-install", "cdk", *args]
    result = subprocess.run(command, cwd=ROOT, env=os.environ.copy(), check=False, stdout=sys.stderr)  # noqa: S603  the pinned CDK CLI via npx, argv list, no shell
    if result.returncode != 0:
        raise DeployError(f"cdk {args[0]} failed (exit {result.returncode}); its output is above")


def deploy(
    clients: Any,
    context: Sequence[str],
    adopt: bool,
    cdk_args: Sequence[str] = (),
    app: Path | None = None,
    cdk: Runner | None = None,
    progress: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> dict[str, Any]:
    """Synthesize (or take the cloud assembly `app`), check for kept resources, adopt them when
    asked, deploy. What was done."""
    cdk = cdk or run_cdk  # looked up when called, so a test can replace the module's runner
    options = [item for pair in context for item in ("-c", pair)]
    with tempfile.TemporaryDirectory(prefix="ops-deploy-") as scratch:
        if app is None:
            progress("synthesizing ...")
            out = str(Path(scratch) / "cdk.out")
            cdk(["synth", "--quiet", *options, "--output", out])
        else:
            if options:
                raise DeployError(
                    "-c/--context applies to a synth; an assembly (--app) is already synthesized"
                )
            out = str(app)
        assembly = Assembly.read(Path(out))
        status, held = stack_state(clients, assembly.stack)
        found = outside_the_stack(clients, held, assembly.template)
        if found and not adopt:
            raise KeptResourcesError(collision_line(assembly.stack, found))
        source = ["--app", out]
        if found:
            drifts = drift(clients, found, assembly.template)
            if drifts:
                raise drift_error(assembly.stack, drifts)
            if status in EMPTY_STATES:
                progress(f"deleting {assembly.stack} ({status}: a failed create holds nothing) ...")
                # Its termination protection (removal=retain) guards nothing here, and would
                # refuse the destroy (the CLI's own retry of a failed create stops there too).
                clients.client("cloudformation").update_termination_protection(
                    StackName=assembly.stack, EnableTerminationProtection=False
                )
                cdk(["destroy", *source, "--force"])
            mapping = Path(scratch) / "adopt.json"
            mapping.write_text(json.dumps(resource_mapping(found), indent=2))
            progress(f"adopting {', '.join(kept.label() for kept in found)} into {assembly.stack} ...")
            cdk(["import", *source, "--resource-mapping", str(mapping), "--force"])
        progress(f"deploying {assembly.stack} ...")
        cdk(["deploy", *source, "--require-approval", "never", *cdk_args])
    return {"stack": assembly.stack, "adopted": [kept.label() for kept in found], "deployed": True}
