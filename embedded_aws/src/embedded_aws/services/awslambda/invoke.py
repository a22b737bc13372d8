"""Lambda: the Invoke API runs code in the local Lambda host (synchronously, asynchronously, as
a dry run; 429 while reserved concurrency is in use), and event source mappings are refused
where AWS refuses them."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Protocol

log = logging.getLogger("embedded_aws.server")


class FunctionRunner(Protocol):
    """What runs function code for the emulator's Invoke API (local/lambda_host.py)."""

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
    error.description = json.dumps({"__type": "TooManyRequestsException", "Reason": THROTTLE_REASON,
                                    "Type": "User", "message": "Rate Exceeded."})
    return error


def patch_lambda_invoke(host: FunctionRunner) -> None:
    """The Invoke API runs the stored function in the local Lambda host, by InvocationType:
    RequestResponse waits for it (as long as its timeout, up to 900 s: nothing here cuts the
    request; the caller's read timeout must allow it, as on AWS), Event returns 202 at once,
    DryRun returns 204 without running anything (moto has already checked that the function
    exists and IAM that the caller may invoke it). Reserved concurrency in use: 429."""
    from moto.awslambda.models import LambdaFunction

    from embedded_aws.lambda_host.sandbox import Throttled
    from embedded_aws.lambda_host.event_source_mappings.poller import reserved_concurrency_of

    def invoke(fn: Any, body: Any, request_headers: Any, response_headers: Any) -> bytes:
        invocation_type = (request_headers or {}).get("X-Amz-Invocation-Type") or (
            request_headers or {}).get("x-amz-invocation-type") or "RequestResponse"
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
        if result.function_error:
            response_headers["x-amz-function-error"] = result.function_error
        response_headers["x-amz-log-result"] = result.log_tail_base64()
        return result.payload

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

    LambdaFunction.invoke = invoke


def patch_event_source_mapping_rules() -> None:
    """CreateEventSourceMapping and UpdateEventSourceMapping refuse, as AWS does, what moto
    stores without a word: a batch size over 10 without a batching window of at least 1 s, a
    window outside 0-300 s or on a FIFO queue, FilterCriteria that are not valid (more than
    five filters, a pattern that is not a JSON object), and (at create) a queue whose visibility
    timeout is shorter than the function's timeout; and, a local limit, filter rules the
    Lambda host does not implement (local/event_filter.py), which would otherwise drop
    messages unfiltered. InvalidParameterValueException, as for AWS's own checks."""
    from moto.awslambda.exceptions import InvalidParameterValueException
    from moto.awslambda.models import LambdaBackend

    from embedded_aws.lambda_host.event_source_mappings.filters import FilterError, compile_filters

    def check(settings: dict[str, Any], source_arn: str) -> None:
        if ":sqs:" not in source_arn:
            return
        batch_size = int(settings.get("BatchSize") or 10)
        window = settings.get("MaximumBatchingWindowInSeconds")
        if window is not None and not 0 <= int(window) <= 300:
            raise InvalidParameterValueException("MaximumBatchingWindowInSeconds must be between 0 and 300")
        if source_arn.endswith(".fifo") and window:
            raise InvalidParameterValueException("Batching window is not supported for FIFO queues")
        if batch_size > 10 and not window:
            raise InvalidParameterValueException(
                "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10")
        try:
            compile_filters(settings.get("FilterCriteria"))
        except FilterError as error:
            raise InvalidParameterValueException(f"Invalid filter pattern definition: {error}") from None

    create = LambdaBackend.create_event_source_mapping
    update = LambdaBackend.update_event_source_mapping

    def visibility_covers_timeout(self: Any, spec: dict[str, Any]) -> None:
        """At create only (AWS does not check an update or a later change of either timeout)."""
        from moto.sqs.models import sqs_backends

        source_arn = spec.get("EventSourceArn") or ""
        try:
            _, _, _, region, account, queue_name = source_arn.split(":", 5)
            queue = sqs_backends[account][region].get_queue(queue_name)
            function = self.get_function(spec["FunctionName"])
        except Exception:  # noqa: BLE001 - moto's own create reports a missing queue or function
            return
        visibility, timeout = int(queue.visibility_timeout), int(function.timeout)
        if visibility < timeout:
            raise InvalidParameterValueException(
                f"Queue visibility timeout: {visibility} seconds is less than Function timeout: {timeout} seconds")

    def create_event_source_mapping(self: Any, spec: dict[str, Any]) -> Any:
        check(spec, spec.get("EventSourceArn") or "")
        if ":sqs:" in (spec.get("EventSourceArn") or ""):
            visibility_covers_timeout(self, spec)
        return create(self, spec)

    def update_event_source_mapping(self: Any, uuid: str, spec: dict[str, Any]) -> Any:
        esm = self.get_event_source_mapping(uuid)
        if esm is not None:
            current = {"BatchSize": esm.batch_size, "MaximumBatchingWindowInSeconds": esm.max_batch_window,
                       "FilterCriteria": esm.filter_criteria}
            check({**current, **spec}, esm.event_source_arn)
        return update(self, uuid, spec)

    LambdaBackend.create_event_source_mapping = create_event_source_mapping
    LambdaBackend.update_event_source_mapping = update_event_source_mapping


def patch_inline_code_update() -> None:
    """A CloudFormation update of a function with inline code (`Code.ZipFile`: the source text,
    per the CloudFormation docs): moto zipped the text at create but read it as a base64 zip at
    update, so any update of such a function failed."""
    import base64

    from moto.awslambda.models import LambdaFunction

    update = LambdaFunction.update_from_cloudformation_json.__func__

    def update_from_cloudformation_json(cls: Any, original_resource: Any, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str, region_name: str) -> Any:
        code = cloudformation_json["Properties"].get("Code", {})
        if isinstance(code.get("ZipFile"), str):
            zipped = base64.b64encode(cls._create_zipfile_from_plaintext_code(code["ZipFile"]))
            properties = {**cloudformation_json["Properties"], "Code": {**code, "ZipFile": zipped}}
            cloudformation_json = {**cloudformation_json, "Properties": properties}
        return update(cls, original_resource, new_resource_name, cloudformation_json, account_id, region_name)

    LambdaFunction.update_from_cloudformation_json = classmethod(update_from_cloudformation_json)
