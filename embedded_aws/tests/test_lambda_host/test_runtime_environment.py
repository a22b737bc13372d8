"""The sandbox a Python function runs in: its package, the runtime's boto3 and the standard
library, on the Python of the declared runtime (docs/local-fidelity.md, "The Lambda runtime")."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from embedded_aws.lambda_host import runtimes
from test_lambda_host.functions import PYTHON, create_function, invoke, unique

pytestmark = pytest.mark.e2e

PROBE = """
import os, sys

def handler(event, context):
    found = {}
    for name in ("pytest", "moto", "aws_cdk", "boto3"):
        try:
            module = __import__(name)
            found[name] = getattr(module, "__version__", "imported")
        except ImportError as error:
            found[name] = "ImportError: " + str(error)
    return {"modules": found, "path": sys.path, "task_root": os.environ["LAMBDA_TASK_ROOT"],
            "version": list(sys.version_info[:2]), "executable": sys.executable,
            "execution_env": os.environ.get("AWS_EXECUTION_ENV")}
"""


def test_only_the_package_the_runtime_sdk_and_the_standard_library_are_importable(session):
    """A handler cannot import what the project's venv or the machine's site-packages hold
    (pytest, moto, aws_cdk); boto3 is the runtime's pinned one; the package comes first on
    sys.path and nothing on it is a site-packages folder of the host."""
    name = create_function(session, unique("clean"), PROBE)
    seen = invoke(session, name).payload
    packages = runtimes.resolve(PYTHON).packages
    # The pinned one; after an offline set-up, the host's boto3 linked into a clean folder.
    sdk = (
        runtimes.SDK_VERSION
        if (packages / f"boto3-{runtimes.SDK_VERSION}.dist-info").is_dir()
        else version("boto3")
    )
    assert seen["modules"]["pytest"] == "ImportError: No module named 'pytest'"
    assert seen["modules"]["moto"] == "ImportError: No module named 'moto'"
    assert seen["modules"]["aws_cdk"] == "ImportError: No module named 'aws_cdk'"
    assert seen["modules"]["boto3"] == sdk
    assert seen["path"][:2] == [seen["task_root"], str(packages)]
    assert not [entry for entry in seen["path"][2:] if "-packages" in entry or ".venv" in entry]
    assert seen["execution_env"] == f"AWS_Lambda_{PYTHON}"


def test_the_declared_python_runs_and_every_report_line_says_which(session):
    """python3.14 runs on CPython 3.14 where `make setup` installed it; INIT_START and each
    REPORT name the Python that ran. Where it could not be installed, the host's Python stands
    in and the REPORT line marks it as a local fallback."""
    name = create_function(session, unique("version"), PROBE)
    first, second = invoke(session, name), invoke(session, name)
    runtime = runtimes.resolve(PYTHON)
    if not runtime.fallback:
        assert first.payload["version"] == [3, 14]
        assert first.payload["executable"] == runtime.python
        assert first.report["Runtime Version"].startswith("python:3.14.")
    else:
        assert "(local fallback: python3.14 not installed" in first.report["Runtime Version"]
    assert first.lines("INIT_START") == [f"INIT_START Runtime Version: {first.report['Runtime Version']}"]
    assert second.report["Runtime Version"] == first.report["Runtime Version"]
    assert second.lines("INIT_START") == []


def test_a_boto3_in_the_package_wins_over_the_runtimes(session):
    """LAMBDA_TASK_ROOT is first on sys.path: a package that bundles its own boto3 imports it,
    not the runtime's."""
    name = create_function(
        session,
        unique("bundled"),
        {
            "app.py": "import boto3\n\ndef handler(event, context):\n    return boto3.__version__\n",
            "boto3/__init__.py": "__version__ = 'bundled-0.0'\n",
        },
    )
    assert invoke(session, name).payload == "bundled-0.0"


def test_a_runtime_that_is_not_python_fails_its_invocation_clearly(session):
    """A nodejs20.x function is not run under Python: every invocation fails with
    Runtime.InvalidEntrypoint, a message naming the runtime, and a REPORT with that error."""
    name = create_function(
        session,
        unique("node"),
        {"index.js": "exports.handler = async () => 'hi';\n"},
        runtime="nodejs20.x",
        handler="index.handler",
    )
    failed = invoke(session, name)
    assert failed.function_error == "Unhandled"
    assert failed.payload["errorType"] == "Runtime.InvalidEntrypoint"
    assert "runs Python runtimes only, not nodejs20.x" in failed.payload["errorMessage"]
    assert (failed.report["Status"], failed.report["Error Type"]) == ("error", "Runtime.InvalidEntrypoint")
