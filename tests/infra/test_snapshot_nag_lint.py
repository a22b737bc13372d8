"""Whole-template checks: a reviewed snapshot, cdk-nag with nothing unacknowledged, cfn-lint clean."""

from __future__ import annotations

import json
import re

import pytest
from aws_cdk.assertions import Annotations, Match
from syrupy.extensions.json import JSONSnapshotExtension

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


def test_cdk_nag_reports_nothing_unacknowledged(synthesized):
    """AwsSolutions and Serverless packs run at every synth; not one error or warning remains."""
    _, stack = synthesized
    annotations = Annotations.from_stack(stack)
    findings = [
        f"{m.id}: {m.entry.data}"
        for find in (annotations.find_error, annotations.find_warning)
        for m in find("*", Match.string_like_regexp(r"^(AwsSolutions|Serverless)-"))
    ]
    assert findings == []


def test_every_nag_acknowledgement_has_a_specific_reason(template):
    """Each acknowledged rule carries a reason long enough to say why, not a placeholder."""
    suppressions = [
        rule
        for resource in template.to_json()["Resources"].values()
        for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", [])
    ]
    assert suppressions, "expected the documented acknowledgements"
    for rule in suppressions:
        assert re.match(r"^(AwsSolutions|Serverless)-\w+$", rule["id"])
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
    from cfnlint.api import lint_all

    matches = lint_all(json.dumps(template.to_json()))
    assert [f"{m.rule.id} {m.message}" for m in matches if m.rule.id not in CFN_LINT_IGNORED] == []
