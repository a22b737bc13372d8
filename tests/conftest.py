"""The product's fixtures: the handler modules loaded from lambda/, and one synth per session.
(The run's shared embedded AWS, the figures and the scheduling are in the root conftest.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from stacks.lambda_code import load_lambda

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def worker() -> ModuleType:
    return load_lambda("worker")


@pytest.fixture(scope="session")
def guard(worker: ModuleType) -> ModuleType:
    """The worker's write guard (lib/src/guarded_consumer/write_guard.py): its client and retry settings."""
    from guarded_consumer import write_guard

    return write_guard


@pytest.fixture(scope="session")
def seeder() -> ModuleType:
    return load_lambda("reference_seeder")


# What `cdk synth` passes the app from cdk.json (feature flags and context defaults).
CDK_JSON_CONTEXT = json.loads((ROOT / "cdk.json").read_text())["context"]


def synth_stack(context: dict | None = None, outdir: Path | None = None):
    """Synthesize the app as `cdk synth` would (cdk.json's context first), environment-agnostic;
    returns (app, stack). With `outdir`, the cloud assembly is written there."""
    import aws_cdk as cdk

    from app import build

    app = cdk.App(context={**CDK_JSON_CONTEXT, **(context or {})}, outdir=str(outdir) if outdir else None)
    stack = build(app)
    return app, stack


def synth_assembly(context: dict, outdir: Path) -> Path:
    """A cloud assembly for `cdk deploy --app <dir>`, synthesized in this process instead of by
    the CLI on every deploy. The end-to-end tests ask the run's synth service for theirs
    (SharedAWS.synth), which calls this."""
    app, _ = synth_stack(context, outdir)
    app.synth()
    return outdir


def synth_app(app: Path, context: dict[str, str], outdir: Path) -> Path:
    """Another CDK app (examples/payments/app.py) run in this process as `cdk synth` runs it: its
    cdk.json's context with `context` over it, written to `outdir`. The CLI passes both in the
    environment (CDK_CONTEXT_JSON, CDK_OUTDIR), which jsii's Node process read when it started,
    before this call: here the app's `cdk.App()` is given them as arguments instead."""
    import json
    import runpy

    import aws_cdk

    merged = {**json.loads((app.parent / "cdk.json").read_text()).get("context", {}), **context}
    made = aws_cdk.App

    def app_of_this_synth(**props: Any) -> aws_cdk.App:
        return made(**{"outdir": str(outdir), "context": merged, **props})

    aws_cdk.App = app_of_this_synth  # type: ignore[misc,assignment]
    try:
        runpy.run_path(str(app), run_name="__main__")
    finally:
        aws_cdk.App = made  # type: ignore[misc]
    return outdir


@pytest.fixture(scope="session")
def synthesized():
    return synth_stack()


@pytest.fixture(scope="session")
def template(synthesized):
    from aws_cdk.assertions import Template

    _, stack = synthesized
    return Template.from_stack(stack)
