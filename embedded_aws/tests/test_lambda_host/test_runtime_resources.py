"""Memory and init as the REPORT line shows them, and MemorySize enforced
(docs/local-fidelity.md, "The Lambda runtime")."""

from __future__ import annotations

import math

import pytest

from test_lambda_host.functions import create_function, invoke, unique

pytestmark = pytest.mark.e2e

MEMORY = """
held = []

def handler(event, context):
    held.append(bytearray(event.get("mb", 0) * 1024 * 1024))  # zero-filled: resident at once
    return sum(len(block) for block in held) // (1024 * 1024)
"""


def mb(value: str) -> int:
    return int(value.removesuffix(" MB"))


def ms(value: str) -> float:
    return float(value.removesuffix(" ms"))


def test_report_shows_max_memory_used(session):
    """Each REPORT has Memory Size and Max Memory Used: the sandbox's peak RSS, which grows by
    what the handler holds."""
    name = create_function(session, unique("memory"), MEMORY, memory=256)
    before, after = invoke(session, name, {"mb": 0}), invoke(session, name, {"mb": 64})
    assert after.payload == 64
    assert before.report["Memory Size"] == "256 MB"
    assert 10 < mb(before.report["Max Memory Used"]) < 200
    assert mb(after.report["Max Memory Used"]) >= mb(before.report["Max Memory Used"]) + 60


def test_exceeding_memory_size_kills_the_sandbox_as_out_of_memory(session):
    """Holding more than MemorySize (128 MB) kills the runtime: Runtime.OutOfMemory with "Runtime
    exited with error: signal: killed", REPORT Max Memory Used = Memory Size, Status: error,
    Error Type: Runtime.OutOfMemory. The next invocation starts a fresh sandbox."""
    name = create_function(session, unique("oom"), MEMORY, memory=128)
    failed = invoke(session, name, {"mb": 300})
    assert failed.function_error == "Unhandled"
    assert failed.payload["errorType"] == "Runtime.OutOfMemory"
    assert failed.payload["errorMessage"].endswith("Error: Runtime exited with error: signal: killed")
    report = failed.report
    assert (report["Max Memory Used"], report["Status"], report["Error Type"]) == (
        "128 MB",
        "error",
        "Runtime.OutOfMemory",
    )
    again = invoke(session, name, {"mb": 1})
    assert again.payload == 1 and "Init Duration" in again.report


def test_init_duration_is_reported_on_a_cold_start_only(session):
    """The first invocation of a sandbox reports Init Duration (and INIT_START); a warm one does
    not. Duration leaves init out, Billed Duration counts both."""
    name = create_function(session, unique("init"), "import boto3\n\ndef handler(e, c):\n    return 1\n")
    cold, warm = invoke(session, name), invoke(session, name)
    assert ms(cold.report["Init Duration"]) > 0
    assert "Init Duration" not in warm.report and warm.lines("INIT_START") == []
    # Billed from the unrounded times; the report prints each to 0.01 ms, so both may round down.
    shown = ms(cold.report["Duration"]) + ms(cold.report["Init Duration"])
    assert math.ceil(shown - 0.01) <= ms(cold.report["Billed Duration"]) <= math.ceil(shown + 0.01)
