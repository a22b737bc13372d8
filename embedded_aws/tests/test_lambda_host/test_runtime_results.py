"""What an invocation returns, as Lambda's Python runtime reports it: marshalling, output
framing, and the runtime's own errors (docs/local-fidelity.md, "The Lambda runtime")."""

from __future__ import annotations

import pytest

from test_lambda_host.functions import create_function, invoke, unique

pytestmark = pytest.mark.e2e

RESULTS = """
import datetime, decimal, os, sys

def handler(event, context):
    kind = event["kind"]
    if kind == "datetime":
        return {"at": datetime.datetime(2026, 1, 1)}
    if kind == "set":
        return {"ids": {1, 2}}
    if kind == "decimal":
        return {"price": decimal.Decimal("12.50"), "name": "crème brûlée"}
    if kind == "no-newline":
        sys.stdout.write("partial line")
        return "done"
    if kind == "exit":
        sys.stdout.flush()
        os._exit(3)
    return "ok"
"""


@pytest.fixture(scope="module")
def results(emulator):
    return create_function(emulator, unique("results"), RESULTS)


@pytest.mark.parametrize("kind, type_name", [("datetime", "datetime"), ("set", "set")])
def test_a_result_json_cannot_hold_is_a_marshal_error(session, results, kind, type_name):
    """Lambda's runtime serialises the result as JSON; a datetime or a set fails the invocation
    with Runtime.MarshalError and an empty stack trace."""
    failed = invoke(session, results, {"kind": kind})
    assert failed.function_error == "Unhandled"
    assert failed.payload["errorType"] == "Runtime.MarshalError"
    assert (
        failed.payload["errorMessage"]
        == f"Unable to marshal response: Object of type {type_name} is not JSON serializable"
    )
    assert failed.payload["stackTrace"] == []
    assert invoke(session, results, {"kind": "ok"}).payload == "ok"  # the sandbox lives on


def test_decimal_is_a_number_and_unicode_is_not_escaped(session, results):
    """The runtime writes a Decimal as a JSON number (DynamoDB items return as they are) and,
    from python3.12 on, Unicode characters unescaped ("Response format", lambda-python.html)."""
    answered = invoke(session, results, {"kind": "decimal"})
    assert answered.function_error is None
    assert answered.raw.decode() == '{"price": 12.50, "name": "crème brûlée"}'


def test_output_without_a_trailing_newline_does_not_break_the_result(session, results):
    """`sys.stdout.write("partial line")` and return: the result comes back at once (not after
    the timeout) and the output is logged as its own line."""
    answered = invoke(session, results, {"kind": "no-newline"})
    assert (answered.function_error, answered.payload) == (None, "done")
    assert "partial line" in answered.log
    assert float(answered.report["Duration"].removesuffix(" ms")) < 1000
    assert "Status" not in answered.report


def test_a_runtime_that_exits_is_an_exit_error(session, results):
    """The handler's process exits mid-invocation: Runtime.ExitError, "Runtime exited with error:
    exit status 3", REPORT Status: error; the next invocation gets a fresh sandbox."""
    failed = invoke(session, results, {"kind": "exit"})
    assert failed.payload["errorType"] == "Runtime.ExitError"
    assert failed.payload["errorMessage"].endswith("Error: Runtime exited with error: exit status 3")
    assert (failed.report["Status"], failed.report["Error Type"]) == ("error", "Runtime.ExitError")
    again = invoke(session, results, {"kind": "ok"})
    assert again.payload == "ok" and "Init Duration" in again.report


def test_a_missing_module_is_an_import_module_error(session):
    """A handler module that imports what is not there: Runtime.ImportModuleError, "Unable to
    import module 'app': No module named 'x'", INIT_REPORT with the error, on every invocation
    (Lambda retries the init each time)."""
    name = create_function(
        session, unique("import"), "import not_in_the_package\n\ndef handler(e, c):\n    return 1\n"
    )
    for _ in range(2):
        failed = invoke(session, name)
        assert failed.function_error == "Unhandled"
        assert failed.payload["errorType"] == "Runtime.ImportModuleError"
        assert (
            failed.payload["errorMessage"]
            == "Unable to import module 'app': No module named 'not_in_the_package'"
        )
        assert failed.lines("INIT_REPORT") == [
            (
                f"INIT_REPORT Init Duration: {failed.report['Init Duration']}\tPhase: init\tStatus: error"
                "\tError Type: Runtime.ImportModuleError"
            )
        ]
        assert (
            "[ERROR] Runtime.ImportModuleError: Unable to import module 'app': No module named 'not_in_the_package'"
            in failed.log
        )


def test_a_missing_handler_function_is_handler_not_found(session):
    """The module imports but has no such function: Runtime.HandlerNotFound, "Handler 'nope'
    missing on module 'app'"."""
    name = create_function(
        session, unique("nohandler"), "def handler(e, c):\n    return 1\n", handler="app.nope"
    )
    failed = invoke(session, name)
    assert failed.function_error == "Unhandled"
    assert failed.payload["errorType"] == "Runtime.HandlerNotFound"
    assert failed.payload["errorMessage"] == "Handler 'nope' missing on module 'app'"
