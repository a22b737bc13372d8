"""Every context value docs/deploy.md documents synthesizes cleanly on its own: cdk-nag finds nothing
(a finding fails the synth itself) and no error or warning annotation is left in the cloud
assembly, as `cdk synth` would refuse. One
app holds one stack per value (each under a prefix of its own, cdk.json's context otherwise),
with the rule packs app.py adds, synthesized once: a synth per value costs seconds of jsii each."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from stacks.config import CONTEXT_DEFAULTS, StackConfig
from tests.conftest import CDK_JSON_CONTEXT, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.jsii]

# A value other than the default for each documented key (function_timeout_seconds within the
# default visibility timeout's 6x rule).
EXAMPLES = {
    "prefix": "team-b",
    "batch_size": "10",
    "removal": "destroy",
    "visibility_timeout_seconds": "120",
    "function_timeout_seconds": "3",
    "max_receive_count": "8",
    "target": "local",
    "max_concurrency": "50",
    "oldest_job_age_alarm_seconds": "900",
    "alarm_email": "oncall@example.com",
    "job_retention_days": "4",
    "dead_letter_retention_days": "10",
    "order_retention_days": "30",
    "producer_resend_days": "3",
    "tags": "team=orders,cost-center=cc-42",
    "tracing": "true",
    "fifo": "true",
    "content_based_deduplication": "true",
}
# Keys whose example needs another value with it.
TOGETHER = {"content_based_deduplication": {"fifo": "true"}}


# The stack every example is compared with: cdk.json's context under a prefix of its own.
BASE, BASE_PREFIX = "(defaults)", "ctx-base"
_ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")


def documented_keys() -> list[str]:
    """The keys of the context table (docs/deploy.md)."""
    page = (ROOT / "docs" / "deploy.md").read_text()
    return re.findall(r"^\| `(\w+)` \| ", page, re.MULTILINE)


def test_every_documented_key_has_an_example_and_a_default():
    assert sorted(documented_keys()) == sorted(EXAMPLES) == sorted(CONTEXT_DEFAULTS)


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> tuple[Any, dict[str, Any]]:
    """The cloud assembly and each key's stack."""
    import aws_cdk as cdk

    from app import add_checks, consumer_stack

    app = cdk.App(context=CDK_JSON_CONTEXT, outdir=str(tmp_path_factory.mktemp("context")))
    add_checks(app)
    stacks = {
        BASE: consumer_stack(app, StackConfig.from_context({**CDK_JSON_CONTEXT, "prefix": BASE_PREFIX}))
    }
    for key, value in EXAMPLES.items():
        prefix = value if key == "prefix" else f"ctx-{key.replace('_', '-')}"
        stacks[key] = consumer_stack(
            app,
            StackConfig.from_context(
                {**CDK_JSON_CONTEXT, "prefix": prefix, key: value, **TOGETHER.get(key, {})}
            ),
        )
    return app.synth(), stacks


@pytest.fixture(
    scope="module", name="annotations"
)  # a function of that name would shadow the __future__ import
def annotations_of_each_key(synthesized) -> dict[str, list[tuple[str, str, str]]]:
    """Each key's stack's annotations, as (level, path, text)."""
    assembly, stacks = synthesized
    return {
        key: [
            (str(m.level.value).lower(), m.id, m.entry.data)
            for m in assembly.get_stack_artifact(stack.artifact_id).messages
        ]
        for key, stack in stacks.items()
        if key != BASE
    }


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_documented_context_value_synthesizes_cleanly(key, annotations):
    """`-c key=value`: the synth succeeds and leaves no error or warning annotation."""
    assert [m for m in annotations[key] if m[0] in ("error", "warning")] == []


def test_fifo_makes_both_queues_fifo_and_everything_points_at_them(synthesized):
    """`-c fifo=true`: the jobs queue and its DLQ are FIFO queues named `.fifo`, the jobs queue
    redrives to that DLQ, content-based deduplication only when asked for, and the mapping, the
    outputs and the queue alarms all name these two queues."""
    assembly, stacks = synthesized
    for key, content_dedup in (("fifo", None), ("content_based_deduplication", True)):
        template = assembly.get_stack_artifact(stacks[key].artifact_id).template
        resources = template["Resources"]
        queues = {
            props["QueueName"]: (logical, props)
            for logical, resource in resources.items()
            if resource["Type"] == "AWS::SQS::Queue"
            for props in [resource["Properties"]]
        }
        prefix = f"ctx-{key.replace('_', '-')}"
        jobs_id, jobs = queues[f"{prefix}-jobs.fifo"]
        dlq_id, dlq = queues[f"{prefix}-jobs-dlq.fifo"]
        assert len(queues) == 2
        assert (jobs["FifoQueue"], dlq["FifoQueue"]) == (True, True)
        assert jobs.get("ContentBasedDeduplication") is content_dedup
        assert "ContentBasedDeduplication" not in dlq
        assert jobs["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": [dlq_id, "Arn"]}
        (mapping,) = [r for r in resources.values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
        assert mapping["Properties"]["EventSourceArn"] == {"Fn::GetAtt": [jobs_id, "Arn"]}
        outputs = template["Outputs"]
        assert outputs["QueueUrl"]["Value"] == {"Ref": jobs_id}
        assert outputs["DeadLetterQueueUrl"]["Value"] == {"Ref": dlq_id}
        queue_alarms = [
            r["Properties"]
            for r in resources.values()
            if r["Type"] == "AWS::CloudWatch::Alarm" and r["Properties"].get("Namespace") == "AWS/SQS"
        ]
        assert queue_alarms
        for alarm in queue_alarms:
            (dimension,) = alarm["Dimensions"]
            assert dimension["Value"] in (
                {"Fn::GetAtt": [jobs_id, "QueueName"]},
                {"Fn::GetAtt": [dlq_id, "QueueName"]},
            )


def prefix_of(key: str) -> str:
    return EXAMPLES[key] if key == "prefix" else f"ctx-{key.replace('_', '-')}"


def normalized(template: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The template with its prefix and asset hashes masked, so two stacks compare by what differs."""
    text = json.dumps(template).replace(prefix, "<prefix>")
    masked: dict[str, Any] = json.loads(_ASSET_HASH.sub("<asset-hash>", text))
    return masked


def difference(base: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """What `other` adds, removes or changes against `base`, section by section: a whole
    resource or output when added, its name when removed, each changed top-level entry (a
    resource's Properties by property) with the new value."""
    found: dict[str, Any] = {}
    for section in ("Parameters", "Rules", "Resources", "Outputs"):
        old, new = base.get(section, {}), other.get(section, {})
        changes: dict[str, Any] = {}
        for name in sorted(set(old) | set(new)):
            if name not in new:
                changes[name] = "removed"
            elif name not in old:
                changes[name] = new[name]
            elif old[name] != new[name]:
                before, after = old[name], new[name]
                entry = {
                    k: after.get(k) for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)
                }
                if isinstance(entry.get("Properties"), dict) and isinstance(before.get("Properties"), dict):
                    props_before = before["Properties"]
                    entry["Properties"] = {
                        k: after["Properties"].get(k, "removed")
                        for k in sorted(set(props_before) | set(after["Properties"]))
                        if props_before.get(k) != after["Properties"].get(k)
                    }
                changes[name] = entry
        if changes:
            found[section] = changes
    return found


def test_each_documented_value_changes_the_template_as_reviewed(synthesized, snapshot):
    """Each context value's stack against the defaults' stack: only the difference, reviewed in
    a snapshot (refresh on purpose with `pytest --snapshot-update`), so what an option does to
    the template is visible and any change to it shows up as a diff."""
    from syrupy.extensions.json import JSONSnapshotExtension

    assembly, stacks = synthesized
    base = normalized(assembly.get_stack_artifact(stacks[BASE].artifact_id).template, BASE_PREFIX)
    differences = {
        key: difference(
            base, normalized(assembly.get_stack_artifact(stacks[key].artifact_id).template, prefix_of(key))
        )
        for key in sorted(EXAMPLES)
    }
    # A prefix changes names only, which are masked; every other value changes something.
    assert [key for key, found in differences.items() if not found] == ["prefix"]
    assert differences == snapshot.use_extension(JSONSnapshotExtension)
