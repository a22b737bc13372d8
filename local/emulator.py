"""The embedded AWS: moto's server in this process, with the few changes that make it behave like
AWS where this project depends on it.

- Lambda code runs for real: moto's `LambdaFunction.invoke` (used by the Invoke API and by
  CloudFormation custom resources) is routed to the local Lambda host.
- moto's own SQS -> Lambda wiring is switched off: it would receive messages inside the
  producer's SendMessage call and bump receive counts without running anything. The local host
  polls mappings the way the Lambda service does.
- Conditional writes are atomic, as DynamoDB guarantees (moto checks and stores in two steps),
  and a received SQS message goes to one consumer only (moto's receive is not thread-safe).
- IAM enforcement: moto matches policy resources only for a few services. For DynamoDB and
  CloudWatch Logs it is told the resource ARN of each request, so a policy scoped to one table
  or one log group is enforced as on AWS.
- A custom resource's response URL points at this server under `localhost`, and answering it
  needs no signature (on AWS it is a pre-signed S3 URL).
- It answers only this machine's SDKs and CLIs, never another site's web page, and the moto API
  is off (`local/guard.py`, docs/security.md). IAM enforcement is on before it listens.
- Speed, with the same answers: HTTP keep-alive (werkzeug closes every connection), work moto
  repeats per request cached (module list, handler names, parsed IAM policies, name
  conversion), no queue scans on SendMessage, one scan per DeleteMessageBatch, and the
  DynamoDB write lock held for the write itself only. See `bench/profile_pipeline.py`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any, Protocol

from local.credentials import ACCOUNT_ID, ROLE_CREDENTIALS_SECONDS, Credentials
from local.guard import LoopbackOnly


class FunctionRunner(Protocol):
    """What runs function code for the emulator's Invoke API (local/lambda_host.py)."""

    def spec_from_moto(self, fn: Any) -> Any: ...

    def invoke(self, spec: Any, event: Any, *, reserved_concurrency: int | None = None) -> Any: ...

ADMIN_USER = "local-admin"
_ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}

log = logging.getLogger("local.emulator")


# --- resource ARNs for moto's access check --------------------------------------------------

# IAM authorizes each operation inside a transaction with the permission of the single-item call.
_TRANSACT_PERMISSIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                         "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}


def dynamodb_permissions(action: str, params: dict[str, Any], region: str, account: str) -> list[tuple[str, str]]:
    """The (action, resource ARN) pairs IAM checks for a DynamoDB request: its table or index,
    every table of a batch, and each operation of a transaction as its single-item action."""
    def table_arn(name: str, index: str | None = None) -> str:
        if name.startswith("arn:"):
            base = name
        else:
            base = f"arn:aws:dynamodb:{region}:{account}:table/{name}"
        return f"{base}/index/{index}" if index else base

    if "TableName" in params:
        return [(action, table_arn(params["TableName"], params.get("IndexName")))]
    if "RequestItems" in params:  # BatchGetItem, BatchWriteItem
        return [(action, table_arn(name)) for name in params["RequestItems"]] or [(action, "*")]
    if "TransactItems" in params:  # TransactGetItems, TransactWriteItems
        checks = {
            (_TRANSACT_PERMISSIONS.get(operation, action), table_arn(details["TableName"]))
            for item in params["TransactItems"]
            for operation, details in item.items()
            if isinstance(details, dict) and "TableName" in details
        }
        return sorted(checks) or [(action, "*")]
    if "ResourceArn" in params:
        return [(action, params["ResourceArn"])]
    return [(action, "*")]


def logs_resource_arn(params: dict[str, Any], region: str, account: str) -> str:
    """The ARN IAM checks a Logs request against: the log stream's when the request names one,
    else the log group's in the form with a trailing `:*`, which CloudWatch Logs documents for
    every action on a group but the tagging ones; else `*`."""
    group = params.get("logGroupName")
    if not group:
        identifier = params.get("logGroupIdentifier")
        if identifier and identifier.startswith("arn:"):
            return identifier if identifier.endswith(":*") else f"{identifier}:*"
        group = identifier
    if not group:
        return "*"
    arn = f"arn:aws:logs:{region}:{account}:log-group:{group}"
    stream = params.get("logStreamName")
    return f"{arn}:log-stream:{stream}" if stream else f"{arn}:*"


def cloudformation_stack_arn(stack_name: str | None, region: str, account: str) -> str:
    """The stack ARN IAM checks a CloudFormation request against: the named stack's own ARN
    (`stack/<name>/<id>`), a pattern for a stack that does not exist, or `*` for all stacks."""
    if not stack_name:
        return "*"
    if stack_name.startswith("arn:"):
        return stack_name
    from moto.cloudformation.models import cloudformation_backends

    stacks = cloudformation_backends[account][region].stacks.values()
    live = [stack.stack_id for stack in stacks if stack.name == stack_name and stack.status != "DELETE_COMPLETE"]
    return live[0] if live else f"arn:aws:cloudformation:{region}:{account}:stack/{stack_name}/*"


_QUERY_COMPATIBLE = {"sqs", "cloudwatch"}


def _patch_access_control() -> None:
    from moto.cloudformation.responses import CloudFormationResponse
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.dynamodb.responses import DynamoHandler
    from moto.logs.responses import LogsResponse

    from moto.core.exceptions import AccessDeniedError, JsonRESTError

    xml_check = ActionAuthenticatorMixin._authenticate_and_authorize_normal_action

    def check(self: Any, resource: str = "*") -> None:
        # moto answers every denial in XML; a request in a JSON protocol (boto3's default for
        # SQS, CloudWatch, DynamoDB, Logs, ...) gets it in JSON, as AWS answers it, or the SDK
        # sees a bare 403. Query-compatible services (SQS, CloudWatch) keep their query code.
        try:
            xml_check(self, resource)
        except AccessDeniedError as denied:
            if not str(self.headers.get("Content-Type", "")).startswith("application/x-amz-json"):
                raise
            query_compatible = self.service_name in _QUERY_COMPATIBLE
            error = JsonRESTError("AccessDenied" if query_compatible else "AccessDeniedException", denied.message)
            error.code = 403 if query_compatible else 400
            raise error from None

    def json_check(self: Any, resource: str) -> None:
        # DynamoDB and Logs name the resource in the message, as AWS does.
        try:
            xml_check(self, resource)
        except AccessDeniedError as denied:
            raise JsonRESTError("AccessDeniedException", f"{denied.message} on resource: {resource}") from None

    def dynamodb_check(self: Any, resource: str = "*") -> None:
        params = getattr(self, "body", None)
        params = params if isinstance(params, dict) else {}
        for permission, arn in dynamodb_permissions(self._get_action(), params, self.region, self.current_account):
            # moto names the IAM action after the request; a transaction's operations are
            # checked as their own actions, so the request's name is swapped just for the check.
            self._get_action = lambda permission=permission: permission
            try:
                json_check(self, arn)
            finally:
                del self._get_action

    def logs_check(self: Any, resource: str = "*") -> None:
        try:
            params = json.loads(self.body or "{}")
        except (TypeError, ValueError):
            params = {}
        json_check(self, logs_resource_arn(params, self.region, self.current_account))

    def cloudformation_check(self: Any, resource: str = "*") -> None:
        # The custom-resource response URL stands in for a pre-signed S3 URL: no SigV4 header.
        if self._get_action() == "ProcessCfnResponse":
            return
        xml_check(self, cloudformation_stack_arn(self._get_param("StackName"), self.region, self.current_account))

    DynamoHandler._authenticate_and_authorize_normal_action = dynamodb_check
    LogsResponse._authenticate_and_authorize_normal_action = logs_check
    CloudFormationResponse._authenticate_and_authorize_normal_action = cloudformation_check
    ActionAuthenticatorMixin._authenticate_and_authorize_normal_action = check


# SQS authorizes a batch call with the permission of its single-message action.
_SQS_BATCH_PERMISSIONS = {
    "sqs:SendMessageBatch": "sqs:SendMessage",
    "sqs:DeleteMessageBatch": "sqs:DeleteMessage",
    "sqs:ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
}


# moto names an IAM action after the signing name; where IAM's prefix differs, IAM's is used.
_IAM_PREFIXES = {"monitoring": "cloudwatch"}


def _patch_iam_action_names() -> None:
    from moto.iam.access_control import IAMRequestBase

    init = IAMRequestBase.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        prefix, _, name = self._action.partition(":")
        action = f"{_IAM_PREFIXES.get(prefix, prefix)}:{name}"
        self._action = _SQS_BATCH_PERMISSIONS.get(action, action)

    IAMRequestBase.__init__ = __init__


def _patch_log_group_arn() -> None:
    """CloudFormation's `Fn::GetAtt LogGroup.Arn` ends in `:*` on AWS (it covers the group's
    streams); moto leaves it off, which would deny every stream a role is granted."""
    from moto.logs.models import LogGroup

    get_attribute = LogGroup.get_cfn_attribute

    def get_cfn_attribute(self: Any, attribute_name: str) -> Any:
        value = get_attribute(self, attribute_name)
        return f"{value}:*" if attribute_name == "Arn" else value

    LogGroup.get_cfn_attribute = get_cfn_attribute


def _patch_signature_of_bodyless_requests() -> None:
    """moto re-signs a GET without a body over its parsed parameters instead of an empty
    payload, so every signed REST GET (e.g. Lambda ListFunctions) fails SignatureDoesNotMatch."""
    from moto.iam.access_control import IAMRequestBase

    create = IAMRequestBase._create_aws_request

    def create_aws_request(self: Any) -> Any:
        request = create(self)
        if self._method in ("GET", "HEAD", "DELETE") and not self._body:
            request.data = b""
        return request

    IAMRequestBase._create_aws_request = create_aws_request


_DYNAMODB_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


def _patch_dynamodb_write_atomicity() -> None:
    """DynamoDB applies a conditional write atomically; moto checks the condition and stores the
    item in two Python steps, so two threads of the server could both pass the check. Writes
    are serialized here so a race test measures the worker, not the emulator. The lock covers
    each write action's handler (its reads of the old item, the check and the store), not the
    signature and IAM check before it nor the serialization after it."""
    from moto.dynamodb.responses import DynamoHandler

    lock = threading.RLock()

    def locked(method: Any) -> Any:
        def handler(self: Any) -> Any:
            with lock:
                return method(self)
        handler.__name__ = method.__name__
        return handler

    for action in _DYNAMODB_WRITES:
        name = "".join("_" + c.lower() if c.isupper() else c for c in action).lstrip("_")
        setattr(DynamoHandler, name, locked(getattr(DynamoHandler, name)))


def _patch_sqs_thread_safety() -> None:
    """SQS hands a received message to one consumer until its visibility timeout ends. moto's
    receive walks the queue and marks messages in separate steps without a lock, so concurrent
    pollers could receive the same message twice or fail with 500s; every call that changes a
    queue's messages runs under one lock here, and a long poll waits outside it."""
    from moto.core.utils import unix_time
    from moto.sqs.models import SQSBackend

    lock = threading.RLock()

    def locked(method: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            with lock:
                return method(self, *args, **kwargs)
        return call

    for name in ("send_message", "send_message_batch", "delete_message", "delete_message_batch",
                 "change_message_visibility", "change_message_visibility_batch", "purge_queue"):
        setattr(SQSBackend, name, locked(getattr(SQSBackend, name)))

    receive = SQSBackend.receive_message

    def receive_message(self: Any, queue_name: str, count: int, wait_seconds_timeout: int,
                        visibility_timeout: int, message_attribute_names: list[str] | None = None) -> Any:
        deadline = unix_time() + (wait_seconds_timeout or 0)
        while True:
            with lock:
                result = receive(self, queue_name, count, 0, visibility_timeout, message_attribute_names)
            remaining = deadline - unix_time()
            if result or remaining <= 0:
                return result
            self.get_queue(queue_name).wait_for_messages(min(remaining, 1))

    SQSBackend.receive_message = receive_message

    def is_message_valid_based_on_retention_period(self: Any, queue_name: str, message: Any) -> bool:
        # moto computes every queue attribute (a scan of the queue) for each message it hands
        # out, which makes a receive quadratic in queue depth; only the retention is needed.
        retention = int(self.get_queue(queue_name).message_retention_period)
        return retention + message.sent_timestamp / 1000 > unix_time()

    SQSBackend.is_message_valid_based_on_retention_period = is_message_valid_based_on_retention_period


def _patch_sqs_send_scans() -> None:
    """moto's SendMessage reads `queue.attributes` for ContentBasedDeduplication, and building
    that dict counts visible, delayed and in-flight messages (three scans of the queue) and
    renames every attribute, per message sent. While a send runs, `attributes` holds just what
    that path reads; GetQueueAttributes and everything else still get the full dict."""
    from moto.sqs.models import Queue, SQSBackend

    sending = threading.local()
    attributes = Queue.attributes.fget

    def queue_attributes(self: Any) -> dict[str, Any]:
        if getattr(sending, "active", False):
            # All the send path reads (send_message, _validate_message, add_message); moto
            # lists FIFO attributes for FIFO queues only and lower-cases booleans.
            if not self.fifo_queue:
                return {}
            value = self.content_based_deduplication
            return {"ContentBasedDeduplication": str(value).lower() if isinstance(value, bool) else value}
        return attributes(self)

    Queue.attributes = property(queue_attributes)

    def without_counters(method: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            before, sending.active = getattr(sending, "active", False), True
            try:
                return method(self, *args, **kwargs)
            finally:
                sending.active = before
        return call

    for name in ("send_message", "send_message_batch"):
        setattr(SQSBackend, name, without_counters(getattr(SQSBackend, name)))


def _patch_sqs_delete_batch() -> None:
    """moto deletes a batch one receipt handle at a time, scanning the whole queue twice for
    each (and rebuilding it), so with many messages in flight a batch of ten costs twenty
    scans. Here a batch is one scan, with the same outcome per entry: a handle of a message
    in the queue deletes it, a handle already deleted succeeds again, any other handle fails
    with ReceiptHandleIsInvalid. Runs under the queue lock of _patch_sqs_thread_safety."""
    from moto.sqs.models import SQSBackend

    def delete_message_batch(self: Any, queue_name: str, receipts: list[dict[str, Any]]) -> Any:
        queue = self.get_queue(queue_name)
        wanted = {receipt["ReceiptHandle"] for receipt in receipts} - queue.deleted_messages
        if wanted:
            kept = []
            for message in queue._messages:
                handles = message.all_receipt_handles
                if wanted.isdisjoint(handles):
                    kept.append(message)
                else:
                    queue.pending_messages.discard(message)
                    queue.deleted_messages.update(handles)
            queue._messages = kept
        success, errors = [], []
        for receipt in receipts:
            if receipt["ReceiptHandle"] in queue.deleted_messages:
                success.append(receipt["Id"])
            else:
                errors.append({
                    "Id": receipt["Id"], "SenderFault": True, "Code": "ReceiptHandleIsInvalid",
                    "Message": f'The input receipt handle "{receipt["ReceiptHandle"]}" is not a valid receipt handle.',
                })
        return success, errors

    SQSBackend.delete_message_batch = delete_message_batch


_QUEUE_COUNTERS = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                   "ApproximateNumberOfMessagesDelayed")


def queue_counters(messages: Any, now_ms: float) -> dict[str, int]:
    """The three approximate counters of a queue in one pass, by moto's own rules: visible is
    past its visibility timeout and not delayed; not visible and delayed are counted apart."""
    visible = not_visible = delayed = 0
    for message in messages:
        is_delayed = now_ms < message.delayed_until
        if now_ms > message.visible_at:
            visible += not is_delayed
        else:
            not_visible += 1
        delayed += is_delayed
    return {"ApproximateNumberOfMessages": visible, "ApproximateNumberOfMessagesNotVisible": not_visible,
            "ApproximateNumberOfMessagesDelayed": delayed}


def _patch_sqs_queue_attributes() -> None:
    """GetQueueAttributes for named attributes: moto built the whole attribute dict (three scans
    of the queue) twice per name asked for, so a poll of three counters scanned a deep queue
    eighteen times. Here the counters asked for take one pass; other names are read directly.
    `All`, and names moto rejects, still go through moto."""
    from moto.core.utils import camelcase_to_underscores, unix_time_millis
    from moto.sqs.models import SQSBackend

    original = SQSBackend.get_queue_attributes

    def get_queue_attributes(self: Any, queue_name: str, attribute_names: list[str]) -> dict[str, Any]:
        queue = self.get_queue(queue_name)
        known = set(queue.BASE_ATTRIBUTES) | (set(queue.FIFO_ATTRIBUTES) if queue.fifo_queue else set())
        if not attribute_names or "All" in attribute_names or not set(attribute_names) <= known:
            return original(self, queue_name, attribute_names)
        result: dict[str, Any] = {}
        if any(name in _QUEUE_COUNTERS for name in attribute_names):
            counters = queue_counters(queue._messages, unix_time_millis())
            result.update({name: counters[name] for name in attribute_names if name in counters})
        for name in attribute_names:
            if name not in _QUEUE_COUNTERS:
                value = getattr(queue, camelcase_to_underscores(name))
                if value is not None:
                    result[name] = value
        return result

    SQSBackend.get_queue_attributes = get_queue_attributes


def _patch_dynamodb_item_count() -> None:
    """DescribeTable's ItemCount sums a 1 per item of a table without a sort key; it is the
    number of items, which the dict already knows."""
    from moto.dynamodb.models.table import Table

    length = Table.__len__

    def item_count(self: Any) -> int:
        return length(self) if self.has_range_key else len(self.items)

    Table.__len__ = item_count


def _patch_sqs_lambda_trigger() -> None:
    from moto.sqs.models import Queue

    # A data descriptor on the class wins over the attribute moto sets per queue: every read
    # sees no mapping, so SendMessage never receives on the mapping's behalf.
    Queue.lambda_event_source_mappings = property(lambda self: {}, lambda self, value: None)


def _patch_sqs_move_tasks() -> None:
    """SQS StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask (DLQ redrive),
    which moto lacks: local/sqs_move_tasks.py."""
    from local import sqs_move_tasks

    sqs_move_tasks.install()


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


def _patch_lambda_invoke(host: FunctionRunner) -> None:
    """The Invoke API runs the stored function in the local Lambda host, by InvocationType:
    RequestResponse waits for it (as long as its timeout, up to 900 s: nothing here cuts the
    request; the caller's read timeout must allow it, as on AWS), Event returns 202 at once,
    DryRun returns 204 without running anything (moto has already checked that the function
    exists and IAM that the caller may invoke it). Reserved concurrency in use: 429."""
    from moto.awslambda.models import LambdaFunction

    from local.lambda_host import Throttled, reserved_concurrency_of

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


def _patch_event_source_mapping_rules() -> None:
    """CreateEventSourceMapping and UpdateEventSourceMapping refuse, as AWS does, what moto
    stores without a word: a batch size over 10 without a batching window of at least 1 s, a
    window outside 0-300 s or on a FIFO queue, FilterCriteria that are not valid (more than
    five filters, a pattern that is not a JSON object), and (at create) a queue whose visibility
    timeout is shorter than the function's timeout; and, a local limit, filter rules the
    Lambda host does not implement (local/event_filter.py), which would otherwise drop
    messages unfiltered. InvalidParameterValueException, as for AWS's own checks."""
    from moto.awslambda.exceptions import InvalidParameterValueException
    from moto.awslambda.models import LambdaBackend

    from local.event_filter import FilterError, compile_filters

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


_GONE_MARKERS = ("notfound", "doesnotexist", "nosuch", "nonexistent", "not found", "does not exist")


def resource_already_gone(error: BaseException) -> bool:
    """A delete failed because the resource is not there (deleted out of band): CloudFormation
    treats that as deleted. moto's backends say so in many ways; a dependency violation or any
    other failure does not count."""
    if isinstance(error, KeyError):
        return True
    code = getattr(error, "code", None) if isinstance(getattr(error, "code", None), str) else ""
    text = f"{type(error).__name__} {getattr(error, 'error_type', '')} {code} {error}".lower()
    return any(marker in text for marker in _GONE_MARKERS)


def _patch_stack_delete_of_resources_gone() -> None:
    """Deleting a stack whose queue, mapping or log group was deleted by hand succeeds on AWS;
    moto stopped at the first missing resource and kept the stack half-deleted."""
    from moto.cloudformation.parsing import ResourceMap

    delete = ResourceMap._delete_resource

    def _delete_resource(self: Any, parsed_resource: Any, resource_json: dict[str, Any]) -> None:
        try:
            delete(self, parsed_resource, resource_json)
        except Exception as error:  # noqa: BLE001 - only "already gone" is swallowed
            if not resource_already_gone(error):
                raise
            log.info("stack delete: %s was already gone (%s)", getattr(parsed_resource, "logical_resource_id", "?"),
                     type(error).__name__)

    ResourceMap._delete_resource = _delete_resource


def _patch_custom_resource_host(port: int) -> None:
    from moto import settings

    os.environ["MOTO_PORT"] = str(port)
    settings.moto_server_host = lambda: "http://localhost"


def _patch_request_overhead() -> None:
    """Work moto's server repeats on every request although its answer never changes; each is
    cached here, with the same result as before.

    - `list_of_moto_modules` lists moto's package folder and stats every entry (about 150),
      twice per request, under the dispatcher's global lock.
    - `method_names_from_class` runs `inspect.getmembers` over the whole response class to find
      out whether the action has a handler method.
    - IAM policy documents are parsed from JSON for every request and every policy: parsed
      documents are kept per document text (a changed policy is a new text).
    """
    import functools
    import inspect

    from moto import backends
    from moto.core import responses
    from moto.iam import access_control

    modules = frozenset(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules

    @functools.lru_cache(maxsize=None)
    def method_names(clazz: type) -> frozenset[str]:
        return frozenset(name for name, _ in inspect.getmembers(clazz, predicate=inspect.isfunction))

    responses.method_names_from_class = method_names

    # IAMPolicy only reads its parsed document (access_control.py, policy_conditions.py).
    parse = functools.lru_cache(maxsize=1024)(json.loads)
    policy_init = access_control.IAMPolicy.__init__

    def iam_policy_init(self: Any, policy: Any) -> None:
        if isinstance(policy, str):
            self._policy_json = parse(policy)
        elif isinstance(policy, dict) and isinstance(policy.get("policy_document"), str):
            self._policy_json = parse(policy["policy_document"])
        else:
            policy_init(self, policy)

    access_control.IAMPolicy.__init__ = iam_policy_init

    # A pure string function moto calls for every action name and every queue attribute, one
    # character at a time; every module that imported it gets the cached one.
    import sys

    from moto.core import utils

    original = utils.camelcase_to_underscores
    cached = functools.lru_cache(maxsize=4096)(original)
    for module in list(sys.modules.values()):
        if (getattr(module, "__name__", "") or "").startswith("moto") and \
                getattr(module, "camelcase_to_underscores", None) is original:
            module.camelcase_to_underscores = cached

    # Request ids (52 characters) and SQS receipt handles (185) are drawn one random.choice
    # per character; one random.choices call draws the same strings from moto's (seedable)
    # random source.
    import string

    from moto.moto_api._internal import mock_random
    from moto.moto_api._internal.moto_random import MotoRandom
    from moto.sqs import models as sqs_models, utils as sqs_utils

    def get_random_string(self: Any, length: int = 20, include_digits: bool = True,
                          lower_case: bool = False) -> str:
        pool = string.ascii_letters + (string.digits if include_digits else "")
        text = "".join(self.choices(pool, k=length))
        return text.lower() if lower_case else text

    MotoRandom.get_random_string = get_random_string

    def generate_receipt_handle() -> str:
        return "".join(mock_random.choices(string.ascii_lowercase, k=185))

    sqs_utils.generate_receipt_handle = generate_receipt_handle
    if getattr(sqs_models, "generate_receipt_handle", None) is not None:
        sqs_models.generate_receipt_handle = generate_receipt_handle


def _patch_keep_alive() -> None:
    """Keep HTTP/1.1 connections open between requests, as AWS endpoints do.

    werkzeug's development server answers every request with `Connection: close`, because
    http.server cannot tell where an unread request body ends; after the response it also
    waits up to 10 ms for leftover body bytes. So every SDK call paid a new TCP connection, a
    new server thread and that wait. Here each request body is read through a stream limited
    to its Content-Length, and whatever the application left unread is consumed before the
    next request is read, so the connection can stay open; a chunked request (no length) and a
    client that asks for `Connection: close` still get the old behaviour. A kept connection
    ends when its client closes it (its thread waits for the next request until then).
    """
    import selectors

    from werkzeug import serving
    from werkzeug.wsgi import LimitedStream

    from moto.moto_server.werkzeug_app import MotoRequestHandler

    state = threading.local()  # per connection thread: the current request's body stream

    make_environ = MotoRequestHandler.make_environ

    def make_environ_with_limit(self: Any) -> dict[str, Any]:
        environ = make_environ(self)
        state.body = None
        if environ.get("wsgi.input_terminated"):  # chunked: werkzeug dechunks, no keep-alive
            return environ
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return environ
        if length < 0:
            return environ
        state.body = LimitedStream(self.rfile, length)
        environ["wsgi.input"] = state.body
        environ["wsgi.input_terminated"] = True  # the limited stream ends at Content-Length
        return environ

    send_header = MotoRequestHandler.send_header
    end_headers = MotoRequestHandler.end_headers

    def send_header_keeping_alive(self: Any, keyword: str, value: str) -> None:
        if getattr(state, "in_wsgi", False) and keyword.lower() == "connection" and value.lower() == "close":
            state.closes += 1  # decided in end_headers: werkzeug's own comes last
            return
        send_header(self, keyword, value)

    def end_headers_keeping_alive(self: Any) -> None:
        if getattr(state, "in_wsgi", False) and state.closes:
            # One `Connection: close` is werkzeug's (added to every response); a second one is
            # the application's (e.g. the guard's refusals) and is honoured, as is a client that
            # asked for close or a body that cannot be delimited.
            if state.closes == 1 and state.body is not None and not self.close_connection:
                state.keep = True
            else:
                send_header(self, "Connection", "close")
            state.closes = 0
        end_headers(self)

    run_wsgi = MotoRequestHandler.run_wsgi

    def run_wsgi_keeping_alive(self: Any) -> None:
        state.keep, state.body, state.closes, state.in_wsgi = False, None, 0, True
        try:
            run_wsgi(self)
        finally:
            keep, body = state.keep, state.body
            state.keep, state.body, state.closes, state.in_wsgi = False, None, 0, False
        if keep and body is not None:
            try:
                body.exhaust()  # the unread rest of this request's body, not the next request
            except Exception:  # noqa: BLE001 - a broken body ends the connection
                self.close_connection = True
        else:
            self.close_connection = True

    class _Selectors:
        """werkzeug.serving's view of `selectors`: after a kept-alive response there is no
        leftover body to wait for (it was read up to Content-Length)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(selectors, name)

        @staticmethod
        def DefaultSelector() -> Any:  # noqa: N802 - the name werkzeug calls
            return _NoLeftovers() if getattr(state, "keep", False) else selectors.DefaultSelector()

    class _NoLeftovers:
        def register(self, *args: Any, **kwargs: Any) -> None:
            pass

        def select(self, timeout: float | None = None) -> list:
            return []

        def close(self) -> None:
            pass

    # werkzeug writes a response's headers and its body separately; on a kept-alive connection
    # Nagle's algorithm holds the body back until the client ACKs the headers, which the client
    # delays (about 40 ms on Linux). Small writes go out at once instead.
    MotoRequestHandler.disable_nagle_algorithm = True
    MotoRequestHandler.make_environ = make_environ_with_limit
    MotoRequestHandler.send_header = send_header_keeping_alive
    MotoRequestHandler.end_headers = end_headers_keeping_alive
    MotoRequestHandler.run_wsgi = run_wsgi_keeping_alive
    serving.selectors = _Selectors()


class EmbeddedAWS:
    """moto's threaded server on localhost:<port>, patched, with an admin user for callers."""

    def __init__(self, port: int, region: str = "us-east-1", faults_file: Path | None = None) -> None:
        self.port = port
        self.region = region
        self.faults_file = faults_file  # see local/faults.py; None: no fault injection
        self.endpoint = f"http://localhost:{port}"
        self._server: Any = None
        self.admin: Credentials | None = None

    def start(self, host: FunctionRunner) -> None:
        """Patch moto, create the admin user and turn IAM enforcement on, then listen: no request
        is ever served without a signature and a policy that allows it."""
        # moto reads this when it is first imported; it must not approve other sites' preflights.
        os.environ["MOTO_DISABLE_GLOBAL_CORS"] = "true"
        from moto.moto_server import werkzeug_app
        from werkzeug.serving import make_server

        werkzeug_app.DISABLE_GLOBAL_CORS = True  # in case moto was imported before (in-process tests)
        _patch_request_overhead()
        _patch_access_control()
        _patch_signature_of_bodyless_requests()
        _patch_iam_action_names()
        _patch_log_group_arn()
        _patch_sqs_lambda_trigger()
        _patch_dynamodb_write_atomicity()
        _patch_sqs_delete_batch()  # before _patch_sqs_thread_safety: it locks the batch
        _patch_sqs_thread_safety()
        _patch_sqs_move_tasks()
        _patch_sqs_send_scans()  # after _patch_sqs_thread_safety: it wraps the locked sends
        _patch_sqs_queue_attributes()
        _patch_dynamodb_item_count()
        _patch_lambda_invoke(host)
        _patch_event_source_mapping_rules()
        _patch_custom_resource_host(self.port)
        _patch_stack_delete_of_resources_gone()
        if self.faults_file:
            from local import faults

            faults.install(self.faults_file)  # after _patch_access_control: it wraps that check
        _patch_keep_alive()
        self.admin = self._create_admin()
        self.enforce_iam()
        app = LoopbackOnly(werkzeug_app.DomainDispatcherApplication(werkzeug_app.create_backend_app), self.port)
        self._server = make_server("127.0.0.1", self.port, app, threaded=True,
                                   request_handler=werkzeug_app.MotoRequestHandler)
        threading.Thread(target=self._server.serve_forever, name="embedded-aws", daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def client(self, service: str, credentials: Credentials | None = None) -> Any:
        import boto3

        creds = credentials or self.admin
        assert creds is not None
        return boto3.client(service, region_name=self.region, endpoint_url=self.endpoint,
                            **creds.as_client_kwargs())

    def _create_admin(self) -> Credentials:
        """The user whose keys `make up` prints, made in moto's IAM directly (before the server
        listens, so there is no unauthenticated window)."""
        from moto.iam.models import iam_backends

        iam = iam_backends[ACCOUNT_ID]["aws"]
        iam.create_user(self.region, ADMIN_USER)
        iam.put_user_policy(ADMIN_USER, "allow-all", json.dumps(_ALLOW_ALL))
        key = iam.create_access_key(ADMIN_USER)
        return Credentials(key.access_key_id, key.secret_access_key)

    @staticmethod
    def enforce_iam(enabled: bool = True) -> None:
        """From now on every request must be signed by known credentials and be allowed."""
        from moto import settings
        from moto.core.authorization import ActionAuthenticatorMixin

        settings.INITIAL_NO_AUTH_ACTION_COUNT = 0 if enabled else float("inf")
        ActionAuthenticatorMixin.request_count = 0

    @staticmethod
    def lambda_function(function_arn: str) -> Any:
        """The stored function (moto's LambdaFunction) an ARN names, for the Lambda host."""
        from moto.awslambda.models import lambda_backends

        region, account = function_arn.split(":")[3:5]
        return lambda_backends[account][region].get_function(function_arn)

    def role_credentials(self, role_arn: str, session_name: str) -> Credentials:
        """What the Lambda service gets for a function's role. Asked of moto's STS backend
        directly: the role trusts lambda.amazonaws.com, which no local caller can sign as."""
        from moto.sts.models import sts_backends

        account = role_arn.split(":")[4]
        role = sts_backends[account]["aws"].assume_role(
            region_name=self.region, role_session_name=session_name[:64], role_arn=role_arn,
            policy="", duration=ROLE_CREDENTIALS_SECONDS, external_id="",
        )
        return Credentials(role.access_key_id, role.secret_access_key, role.session_token)
