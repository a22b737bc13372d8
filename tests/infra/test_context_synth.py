"""Every context value the README documents synthesizes cleanly on its own: no error or warning
annotation (cdk-nag findings included) in the cloud assembly, as `cdk synth` would refuse."""

from __future__ import annotations

import re

import pytest

from stacks.config import CONTEXT_DEFAULTS
from tests.conftest import ROOT, synth_stack

pytestmark = pytest.mark.slow

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
}


def documented_keys() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    return re.findall(r"^\| `(\w+)` \| ", readme, re.M)


def test_every_documented_key_has_an_example_and_a_default():
    assert sorted(documented_keys()) == sorted(EXAMPLES) == sorted(CONTEXT_DEFAULTS)


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_documented_context_value_synthesizes_cleanly(key, tmp_path):
    """`-c key=value` alone: the synth succeeds and leaves no error or warning annotation."""
    app, stack = synth_stack({key: EXAMPLES[key]}, outdir=tmp_path)
    assembly = app.synth()
    messages = [(str(m.level.value).lower(), m.id, m.entry.data)
                for m in assembly.get_stack_artifact(stack.artifact_id).messages]
    assert [m for m in messages if m[0] in ("error", "warning")] == []
