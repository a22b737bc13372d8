"""Inside one sandbox of the local Lambda host, what the Lambda Python runtime does: put the
function's package and the runtime's boto3 in front of the standard library, import the handler
once (the init phase), then serve invocations read from stdin, one JSON line each, until stdin
closes. Standard library only: it runs on whichever interpreter the runtime resolved to
(lambda_host/runtimes.py), started with -I -S, so nothing else is importable.

Whatever the handler prints (stdout and stderr share one pipe) is the function's log output. The
end of the init phase and of each invocation is one FRAME line on the same pipe, so output and
result can never be reordered; output without a trailing newline puts the frame mid-line, which
the host splits off. Errors take the shapes and types of Lambda's Python runtime
(Runtime.ImportModuleError, Runtime.HandlerNotFound, Runtime.MarshalError, ...). Run by
lambda_host/sandbox.py only.
"""

from __future__ import annotations

import decimal
import importlib
import json
import math
import os
import re
import sys
import time
import traceback

# typing stays unimported at run time (the sandbox's start-up is timed); mypy reads this branch.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

FRAME = "\x1e\x1eLAMBDA-RESULT "
_DECIMAL = "\x00decimal\x00"  # wraps a Decimal's text until it is written as a bare number
_DECIMAL_IN_JSON = re.compile(r'"\\u0000decimal\\u0000(.*?)\\u0000decimal\\u0000"')


class Fault(Exception):
    """An error of the runtime itself, with Lambda's errorType."""

    def __init__(self, error_type: str, message: str, trace: list[str] | None = None) -> None:
        super().__init__(message)
        self.error_type, self.message, self.trace = error_type, message, trace or []


class Context:
    """The parts of the Lambda context object handlers use."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.invoked_function_arn = request["function_arn"]
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
        self.aws_request_id = request["request_id"]
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self._deadline = request["deadline"]

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.time()) * 1000))


def _error(error_type: str, message: str, trace: list[str], request_id: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"errorMessage": message, "errorType": error_type}
    if request_id:
        error["requestId"] = request_id
    error["stackTrace"] = trace
    return error


def _log_error(error: dict[str, Any]) -> None:
    """As the runtime logs an error: one line with type and message, then the trace."""
    print(f"[ERROR] {error['errorType']}: {error['errorMessage']}")
    print("Traceback (most recent call last):")
    for frame in error["stackTrace"]:
        print(frame.rstrip("\n"))


def _exception_error(error: BaseException, request_id: str | None = None) -> dict[str, Any]:
    return _error(type(error).__name__, str(error), traceback.format_tb(error.__traceback__), request_id)


def _load(handler_spec: str) -> Callable[[Any, Context], Any]:
    """The handler function, or a Fault as Lambda's runtime reports it."""
    try:
        module_name, function_name = handler_spec.rsplit(".", 1)
    except ValueError as error:
        raise Fault("Runtime.MalformedHandlerName", f"Bad handler '{handler_spec}': {error}") from None
    if module_name.split(".")[0] in sys.builtin_module_names:
        raise Fault(
            "Runtime.BuiltInModuleConflict", f"Cannot use built-in module {module_name} as a handler module"
        )
    try:
        module = importlib.import_module(module_name.replace("/", "."))
    except ImportError as error:
        raise Fault(
            "Runtime.ImportModuleError", f"Unable to import module '{module_name}': {error}"
        ) from None
    except SyntaxError as error:
        trace = [f'  File "{error.filename}" Line {error.lineno}\n    {error.text}']
        raise Fault(
            "Runtime.UserCodeSyntaxError", f"Syntax error in module '{module_name}': {error}", trace
        ) from None
    try:
        handler: Callable[[Any, Context], Any] = getattr(module, function_name)
        return handler
    except AttributeError:
        # Not an init error: the runtime starts, and every invocation fails with this.
        missing = Fault(
            "Runtime.HandlerNotFound", f"Handler '{function_name}' missing on module '{module_name}'"
        )

        def not_found(event: Any, context: Context) -> Any:
            raise missing from None

        return not_found


def _runtime_minor() -> int:
    """The declared runtime's minor version (python3.14 -> 14), which decides the response format."""
    runtime = os.environ.get("AWS_EXECUTION_ENV", "").removeprefix("AWS_Lambda_python3.")
    return int(runtime) if runtime.isdigit() else sys.version_info[1]


def _default(value: object) -> object:
    if isinstance(value, decimal.Decimal):  # the runtime writes a Decimal as a number
        return math.nan if value.is_nan() else f"{_DECIMAL}{value}{_DECIMAL}"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def marshal(result: object) -> str:
    """The response as the Python runtime serialises it: JSON, NaN allowed, Decimal as a
    number, Unicode unescaped from python3.12 on ("Response format", lambda-python.html).
    Anything else that JSON cannot hold is Runtime.MarshalError."""
    try:
        text = json.dumps(result, default=_default, allow_nan=True, ensure_ascii=_runtime_minor() < 12)
    except (TypeError, ValueError, OverflowError) as error:
        raise Fault("Runtime.MarshalError", f"Unable to marshal response: {error}") from None
    return _DECIMAL_IN_JSON.sub(r"\1", text) if "\\u0000decimal\\u0000" in text else text


def _frame(frames: IO[str], outcome: dict[str, Any]) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    frames.write(FRAME + json.dumps(outcome) + "\n")
    frames.flush()


def main() -> None:
    # Started with -I -S: sys.path is the standard library only. As on Lambda (Python 3.11 and
    # later), the function's package comes first, then the runtime's libraries (boto3).
    sys.path[:0] = [os.environ["LAMBDA_TASK_ROOT"], os.environ["LAMBDA_RUNTIME_DIR"]]
    # Keep the framing pipe for ourselves; the handler's prints go to fd 1/2 as usual.
    frames = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    init_error: dict[str, Any] | None
    try:
        handler = _load(os.environ["_HANDLER"])
    except Fault as fault:
        init_error = _error(fault.error_type, fault.message, fault.trace)
    except Exception as error:  # noqa: BLE001 - an exception raised by the module's own code
        init_error = _exception_error(error)
    else:
        init_error = None
    if init_error:
        # The runtime reports the init error and exits; Lambda starts a fresh one next time.
        _log_error(init_error)
        _frame(frames, {"init_error": init_error})
        sys.exit(1)
    # Init is over: the host starts the first invocation's timeout only now, as Lambda does.
    _frame(frames, {"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        request_id = request["request_id"]
        outcome: dict[str, Any]
        try:
            outcome = {"payload": marshal(handler(request["event"], Context(request)))}
        except Fault as fault:
            failure = _error(fault.error_type, fault.message, fault.trace, request_id)
            _log_error(failure)
            outcome = {"error": failure}
        except Exception as error:  # noqa: BLE001 - becomes FunctionError: Unhandled
            failure = _exception_error(error, request_id)
            _log_error(failure)
            outcome = {"error": failure}
        _frame(frames, outcome)


if __name__ == "__main__":
    if os.environ.get("LOCAL_SANDBOX_PROFILE"):  # exp/profile: cProfile the whole sandbox
        import cProfile

        cProfile.run(
            "main()", os.path.join(os.environ["LOCAL_SANDBOX_PROFILE"], f"sandbox-{os.getpid()}.pstats")
        )
    else:
        main()
