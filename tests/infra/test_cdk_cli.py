"""The real CDK CLI from package.json: synth needs no credentials, bad context is one line."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def run_cdk(*args: str, outdir) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({
        "HOME": str(outdir),  # no ~/.aws: no credentials anywhere
        "CDK_DISABLE_VERSION_CHECK": "1", "CDK_DISABLE_CLI_TELEMETRY": "true",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "NODE_NO_WARNINGS": "1",
    })
    return subprocess.run(
        ["npx", "--no-install", "cdk", *args, "--output", str(outdir / "cdk.out")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


def test_cli_synth_works_without_credentials(tmp_path):
    """`npx cdk synth` produces the stack's template with no AWS credentials configured."""
    result = run_cdk("synth", "--quiet", outdir=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cdk.out" / "labex-q05-consumer.template.json").is_file()


def test_cli_synth_with_bad_context_names_the_value(tmp_path):
    """A bad context value stops synth with one line that names it."""
    result = run_cdk("synth", "--quiet", "-c", "batch_size=42", outdir=tmp_path)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert lines == ["error: context batch_size='42' is invalid: use a whole number from 1 to 10"]
