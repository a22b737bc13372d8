"""Inside one warm sandbox of the local Lambda host: import the handler once, then serve
invocations read from stdin, one JSON line each, until stdin closes. A first frame says when
the import (the init phase) is done.

Whatever the handler prints (stdout and stderr share one pipe) is the function's log output. The
end of each invocation is one line on the same pipe that starts with FRAME and carries the
result as JSON, so output and result can never be reordered. Run by local/lambda_host.py only.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback

FRAME = "\x1e\x1eLAMBDA-RESULT "


class Context:
    """The parts of the Lambda context object handlers use."""

    def __init__(self, request: dict) -> None:
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


def _error(error: BaseException) -> dict:
    return {
        "errorMessage": str(error),
        "errorType": type(error).__name__,
        "stackTrace": traceback.format_tb(error.__traceback__),
    }


def _load(handler_spec: str):
    module_name, _, function_name = handler_spec.rpartition(".")
    return getattr(importlib.import_module(module_name), function_name)


def main() -> None:
    # The function's code, not this file's folder, is what the handler imports from.
    sys.path[0] = os.environ["LAMBDA_TASK_ROOT"]
    # Keep the framing pipe for ourselves; the handler's prints go to fd 1/2 as usual.
    frames = os.fdopen(os.dup(1), "w", buffering=1)
    handler, init_error = None, None
    try:
        handler = _load(os.environ["_HANDLER"])
    except Exception as error:  # noqa: BLE001 - reported on every invocation, as Lambda does
        init_error = _error(error)
        print(f"[ERROR] Runtime.ImportModuleError: Unable to import module '{os.environ['_HANDLER']}': {error}")
    # Init is over: the host starts the first invocation's timeout only now, as Lambda does.
    sys.stdout.flush()
    frames.write(FRAME + json.dumps({"ready": True}) + "\n")
    frames.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if init_error:
            outcome = {"error": init_error}
        else:
            try:
                result = handler(request["event"], Context(request))
                outcome = {"result": result}
            except Exception as error:  # noqa: BLE001 - becomes FunctionError: Unhandled
                print(f"[ERROR] {type(error).__name__}: {error}")
                traceback.print_exc(file=sys.stdout)
                outcome = {"error": _error(error)}
        sys.stdout.flush()
        try:
            framed = json.dumps(outcome, default=str)
        except (TypeError, ValueError) as error:
            framed = json.dumps({"error": _error(error)})
        frames.write(FRAME + framed + "\n")
        frames.flush()


if __name__ == "__main__":
    if os.environ.get("LOCAL_SANDBOX_PROFILE"):  # exp/profile: cProfile the whole sandbox
        import cProfile

        cProfile.run("main()", os.path.join(os.environ["LOCAL_SANDBOX_PROFILE"], f"sandbox-{os.getpid()}.pstats"))
    else:
        main()
