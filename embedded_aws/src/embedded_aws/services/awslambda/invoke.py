"""Lambda's Invoke API runs code in the local Lambda host: synchronously, asynchronously, as a
dry run; 429 while reserved concurrency is in use."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Protocol

from embedded_aws.compat.internals import ERROR_CODE, ERROR_DESCRIPTION
from embedded_aws.compat.registry import T, declare

log = logging.getLogger("embedded_aws.server")


class FunctionRunner(Protocol):
    """What runs function code for the emulator's Invoke API (lambda_host/host.py)."""

    def spec_from_moto(self, fn: Any) -> Any: ...

    def invoke(self, spec: Any, event: Any, *, reserved_concurrency: int | None = None) -> Any: ...


THROTTLE_REASON = "ReservedFunctionConcurrentInvocationLimitExceeded"
ASYNC_RETRY_SECONDS = (1.0, 300.0, 6 * 3600.0)  # first wait, longest wait, how long to keep trying


def _too_many_requests() -> Exception:
    """Invoke's answer when the function's reserved concurrency is in use (botocore's Invoke
    documentation): 429 TooManyRequestsException, with the Reason and Type AWS sends."""
    from moto.core.exceptions import JsonRESTError

    error = JsonRESTError("TooManyRequestsException", "Rate Exceeded.")
    error.code = 429
    error.description = json.dumps(
        {
            "__type": "TooManyRequestsException",
            "Reason": THROTTLE_REASON,
            "Type": "User",
            "message": "Rate Exceeded.",
        }
    )
    return error


@declare(
    "lambda.invoke",
    "the Invoke API (and custom resources) run code in the local Lambda host",
    T("moto.awslambda.models:LambdaFunction.invoke", "self", "body", "request_headers", "response_headers"),
    ERROR_CODE,
    ERROR_DESCRIPTION,
    fixes_moto="without Docker, Invoke returns canned answers and never runs the handler",
    uses=("host",),
)
def patch_lambda_invoke(host: FunctionRunner) -> None:
    """The Invoke API runs the stored function in the local Lambda host, by InvocationType:
    RequestResponse waits for it (as long as its timeout, up to 900 s: nothing here cuts the
    request; the caller's read timeout must allow it, as on AWS), Event returns 202 at once,
    DryRun returns 204 without running anything (moto has already checked that the function
    exists and IAM that the caller may invoke it). Reserved concurrency in use: 429."""
    from moto.awslambda.models import LambdaFunction

    from embedded_aws.lambda_host.event_source_mappings.poller import reserved_concurrency_of
    from embedded_aws.lambda_host.sandbox import Throttled

    def invoke(fn: Any, body: Any, request_headers: Any, response_headers: Any) -> bytes:
        invocation_type = (
            (request_headers or {}).get("X-Amz-Invocation-Type")
            or (request_headers or {}).get("x-amz-invocation-type")
            or "RequestResponse"
        )
        if invocation_type == "DryRun":
            return b""
        event = json.loads(body) if body else {}
        spec = host.spec_from_moto(fn)
        reserved = reserved_concurrency_of(fn)
        if invocation_type == "Event":
            threading.Thread(target=_invoke_async, args=(host, spec, event, reserved), daemon=True).start()
            return b""
        try:
            result = host.invoke(spec, event, reserved_concurrency=reserved)
        except Throttled:
            raise _too_many_requests() from None
        response_headers["x-amz-executed-version"] = getattr(fn, "version", None) or "$LATEST"
        if result.function_error:
            response_headers["x-amz-function-error"] = result.function_error
        response_headers["x-amz-log-result"] = result.log_tail_base64()
        payload: bytes = result.payload
        return payload

    def _invoke_async(host: FunctionRunner, spec: Any, event: Any, reserved: int | None) -> None:
        """An Event invocation the reserved concurrency throttles is retried with backoff for up
        to six hours, as Lambda's internal queue does for asynchronous invocation."""
        import time

        delay, longest, keep_trying = ASYNC_RETRY_SECONDS
        give_up_at = time.monotonic() + keep_trying
        while True:
            try:
                host.invoke(spec, event, reserved_concurrency=reserved)
                return
            except Throttled:
                if time.monotonic() + delay > give_up_at:
                    log.warning("asynchronous invocation of %s throttled for six hours: dropped", spec.name)
                    return
                time.sleep(delay)
                delay = min(delay * 2, longest)

    LambdaFunction.invoke = invoke  # type: ignore[assignment]  # our replacement's own signature; registry.py checks moto's parameters
