"""The real CDK CLI from package.json, run as the README's `npx cdk` lines are typed: synth needs no
credentials, runs on a Node jsii supports (no end-of-life banner), and bad context is one line."""

from __future__ import annotations

import os
import subprocess

import pytest

from local.paths import NODE_BIN
from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.long_wait(70)]


def user_shell_env() -> dict[str, str]:
    """A user's shell: no AWS_*, JSII_* or NODE_* variables, no node_modules/.bin on PATH (npx puts it there)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "JSII_", "NODE_"))}
    env["PATH"] = os.pathsep.join(part for part in env["PATH"].split(os.pathsep) if part != str(NODE_BIN))
    return env


def run_cdk(*args: str, outdir) -> subprocess.CompletedProcess:
    env = user_shell_env()
    env.update(
        {
            "HOME": str(outdir),  # no ~/.aws: no credentials anywhere
            "CDK_DISABLE_VERSION_CHECK": "1",
            "CDK_DISABLE_CLI_TELEMETRY": "true",
        }
    )
    return subprocess.run(
        ["npx", "--no-install", "cdk", *args, "--output", str(outdir / "cdk.out")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_synth_works_without_credentials(tmp_path):
    """`npx cdk synth` produces the stack's template with no AWS credentials configured."""
    result = run_cdk("synth", "--quiet", outdir=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cdk.out" / "labex-q05-consumer.template.json").is_file()
    assert "end-of-life" not in result.stderr and "not supported anymore" not in result.stderr, result.stderr
    # Every feature flag is set (docs/feature-flags.md): one a new aws-cdk-lib adds waits for review.
    assert "feature flags are not configured" not in result.stderr, result.stderr


def test_npx_runs_the_toolchain_on_the_pinned_node():
    """`npx` puts package.json's Node 24 first on PATH for the CLI and the app it starts (jsii
    supports ^22 and ^24), although the shell's own `node` may be older."""
    result = subprocess.run(
        ["npx", "--no-install", "node", "--version"],
        cwd=ROOT,
        env=user_shell_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip().startswith("v24."), result


def test_cli_synth_with_bad_context_names_the_value(tmp_path):
    """A bad context value stops synth with one line that names it."""
    result = run_cdk("synth", "--quiet", "-c", "batch_size=42", outdir=tmp_path)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert lines == ["error: context batch_size='42' is invalid: use a whole number from 1 to 10"]
