"""Whole-template checks: a reviewed snapshot, cdk-nag with nothing unacknowledged, cfn-lint clean."""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from tests.conftest import CDK_JSON_CONTEXT, ROOT

if TYPE_CHECKING:  # aws_cdk is imported where it is used: tests/infra/assertions.py says why
    import aws_cdk as cdk

pytestmark = pytest.mark.jsii  # run in one worker with the other synthesizing modules (conftest.py)

_ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")


@pytest.fixture
def snapshot_json(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


def test_template_matches_snapshot(template, snapshot_json):
    """Any change to the synthesized template shows up here as a diff to review; refresh on
    purpose with `pytest --snapshot-update`. Asset hashes are masked so the snapshot does not
    change with the Python or Node version that zipped the code."""
    masked = json.loads(_ASSET_HASH.sub("<asset-hash>", json.dumps(template.to_json())))
    assert masked == snapshot_json


# Where `make test` keeps the validation report (cdk-nag 3 writes no CSVs) and the acknowledgements.
NAG_REPORT_DIR = ROOT / "tests" / "artifacts" / "cdk-nag"


def nag_report(outdir: Path, *extra: Callable[[cdk.Stack], None]) -> tuple[bool, dict]:
    """Synthesize the app (app.py's rule packs, cdk.json's context) into `outdir`, after each of
    `extra` has added something to the stack: (whether synth passed, validation-report.json)."""
    import aws_cdk as cdk

    from app import build

    app = cdk.App(context=CDK_JSON_CONTEXT, outdir=str(outdir))
    stack = build(app)
    for add in extra:
        add(stack)
    try:
        app.synth()
        passed = True
    except RuntimeError as error:  # jsii's ValidationFailed
        assert "ValidationFailed" in str(error), error
        passed = False
    return passed, json.loads((outdir / "validation-report.json").read_text())


def violations(report: dict) -> list[tuple[str, str, str]]:
    """(pack, rule id, construct path) of every finding in a validation report."""
    return sorted(
        (plugin["pluginName"], violation["ruleName"], construct["constructPath"])
        for plugin in report["pluginReports"]
        for violation in plugin["violations"]
        for construct in violation["violatingConstructs"]
    )


def acknowledgements(template: dict) -> list[dict]:
    """Every acknowledged finding with its resource and reason (the template's `cdk_nag` metadata)."""
    return [
        {"rule": rule["id"], "resource": logical_id, "reason": rule["reason"]}
        for logical_id, resource in template["Resources"].items()
        for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", [])
    ]


def test_cdk_nag_reports_nothing_unacknowledged():
    """AwsSolutions and Serverless run at every synth: the synth passes with no finding in its
    validation report. The report and a CSV of the acknowledged findings are kept in
    tests/artifacts/cdk-nag/ for a reviewer (cdk-nag 3 no longer writes its CSV reports)."""
    shutil.rmtree(NAG_REPORT_DIR, ignore_errors=True)
    passed, report = nag_report(NAG_REPORT_DIR)
    assert (passed, violations(report)) == (True, [])
    template = json.loads((NAG_REPORT_DIR / "labex-q05-consumer.template.json").read_text())
    with (NAG_REPORT_DIR / "acknowledged.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["rule", "resource", "reason"])
        writer.writeheader()
        writer.writerows(acknowledgements(template))
    print(f"cdk-nag report: {NAG_REPORT_DIR}")


def _unguarded_queue(stack: cdk.Stack) -> None:
    """A queue with no dead-letter queue and no TLS-only policy."""
    from aws_cdk import aws_sqs as sqs

    sqs.Queue(stack, "Unguarded", encryption=sqs.QueueEncryption.SQS_MANAGED)


def _wildcard_policy(stack: cdk.Stack) -> None:
    """A policy granting every action of a service on every resource."""
    from aws_cdk import aws_iam as iam

    iam.ManagedPolicy(stack, "Wildcard", statements=[iam.PolicyStatement(actions=["sqs:*"], resources=["*"])])


def test_a_violating_resource_fails_the_synth_with_each_finding(tmp_path):
    """The check above can fail: resources breaking rules of both packs stop the synth, and the
    report names each finding on its construct (IAM5 once per wildcard, as acknowledgements must)."""
    passed, report = nag_report(tmp_path, _unguarded_queue, _wildcard_policy)
    assert passed is False
    found = violations(report)
    assert {
        ("AwsSolutions", "AwsSolutions-SQS3", "labex-q05-consumer/Unguarded/Resource"),
        ("AwsSolutions", "AwsSolutions-SQS4", "labex-q05-consumer/Unguarded/Resource"),
        ("Serverless", "Serverless-SQSRedrivePolicy", "labex-q05-consumer/Unguarded/Resource"),
        ("AwsSolutions", "AwsSolutions-IAM5[Action::sqs:*]", "labex-q05-consumer/Wildcard/Resource"),
        ("AwsSolutions", "AwsSolutions-IAM5[Resource::*]", "labex-q05-consumer/Wildcard/Resource"),
    } <= set(found)
    assert {path for _, _, path in found} == {
        "labex-q05-consumer/Unguarded/Resource",
        "labex-q05-consumer/Wildcard/Resource",
    }


def test_an_acknowledgement_covers_its_finding_only(tmp_path):
    """Acknowledging one wildcard finding, with its reason, leaves the policy's other one failing."""

    import aws_cdk as cdk

    def acknowledged_action(stack: cdk.Stack) -> None:
        _wildcard_policy(stack)
        cdk.Validations.of(stack.node.find_child("Wildcard")).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-IAM5[Action::sqs:*]", reason="test: the action wildcard is meant"
            )
        )

    passed, report = nag_report(tmp_path, acknowledged_action)
    assert (passed, violations(report)) == (
        False,
        [("AwsSolutions", "AwsSolutions-IAM5[Resource::*]", "labex-q05-consumer/Wildcard/Resource")],
    )


def test_every_nag_acknowledgement_has_a_specific_reason(template):
    """Each acknowledged finding carries a reason long enough to say why, not a placeholder; an
    IAM5 wildcard is acknowledged finding by finding, never as the whole rule."""
    found = acknowledgements(template.to_json())
    assert found, "expected the documented acknowledgements"
    for rule in found:
        assert re.match(r"^(AwsSolutions|Serverless)-\w+(\[.+\])?$", rule["rule"]), rule
        assert rule["rule"] != "AwsSolutions-IAM5", rule
        assert len(rule["reason"]) >= 60, rule


# Rules not applied, each for a stated reason.
CFN_LINT_IGNORED = {
    # CDK adds DependsOn on a function's role next to the GetAtt; redundant but harmless.
    "W3005",
    # Asks for free-text architecture metadata on every resource; descriptive, not a defect.
    "I4010",
    # Prefers Fn::Sub to Fn::Join: CDK renders the dashboard's body with Fn::Join; style, not a defect.
    "I1022",
}


def test_cfn_lint_is_clean(template):
    """cfn-lint (errors, warnings and informational rules) finds nothing outside the list above."""
    from cfnlint.api import lint_all  # type: ignore[import-untyped]  # cfn-lint ships no type information

    matches = lint_all(json.dumps(template.to_json()))
    assert [f"{m.rule.id} {m.message}" for m in matches if m.rule.id not in CFN_LINT_IGNORED] == []
