"""Lambda event source mappings answered and refused as AWS answers and refuses them (moto stores
them without a word and answers in its own shape). The values are those LocalStack recorded on
AWS (embedded_aws/tests/test_conformance/recordings.py cites each)."""

from __future__ import annotations

import functools
import json
from typing import Any

from embedded_aws.compat import new_objects
from embedded_aws.compat.registry import T, declare, install, state

# An error body of the Lambda API carries "Type": "User" for a caller's mistake.
_USER_ERROR = "User"

# What a mapping's answers hold for an SQS source when the caller set nothing (AWS's defaults).
_SQS_DEFAULTS = {"FunctionResponseTypes": [], "MaximumBatchingWindowInSeconds": 0}


def answer_shape(configuration: dict[str, Any]) -> dict[str, Any]:
    """moto's GetEventSourceMapping body as AWS shapes it for an SQS source: the defaults present
    (FunctionResponseTypes [], MaximumBatchingWindowInSeconds 0), StateTransitionReason
    `USER_INITIATED` (moto: `User initiated`), no empty Tags (AWS lists none)."""
    shaped = dict(configuration)
    if ":sqs:" in shaped.get("EventSourceArn", ""):
        for key, default in _SQS_DEFAULTS.items():
            if shaped.get(key) is None:
                shaped[key] = list(default) if isinstance(default, list) else default
        shaped.pop("StartingPosition", None)
    if shaped.get("StateTransitionReason") == "User initiated":
        shaped["StateTransitionReason"] = "USER_INITIATED"
    if not shaped.get("Tags"):
        shaped.pop("Tags", None)
    return shaped


def transition(settled: str, spec: dict[str, Any], before_enabled: bool | None) -> str:
    """The State an UpdateEventSourceMapping answer shows: `Enabling` or `Disabling` when the call
    changes Enabled, else `Updating` (recorded). The next read shows the settled state."""
    enabled = spec.get("Enabled")
    if enabled is not None and before_enabled is not None and bool(enabled) != before_enabled:
        return "Enabling" if enabled else "Disabling"
    return "Updating" if settled in ("Enabled", "Disabled") else settled


def duplicate_message(queue_arn: str, function: str, uuid: str) -> str:
    return (
        f'An event source mapping with SQS arn (" {queue_arn} ") and function (" {function} ") already exists. '
        f"Please update or delete the existing mapping with UUID {uuid}"
    )


MISSING_QUEUE = (
    "Error occurred while ReceiveMessage. SQS Error Code: AWS.SimpleQueueService.NonExistentQueue. "
    "SQS Error Message: The specified queue does not exist."
)
INVALID_FILTER = "Invalid filter pattern definition."


@functools.cache
def message_member(error: str) -> str:
    """The member that holds an error's message in the Lambda API's model: `Message` for some
    errors (ResourceNotFoundException), `message` for others (InvalidParameterValueException)."""
    import botocore.session

    for shape in botocore.session.get_session().get_service_model("lambda").error_shapes:
        if shape.name == error:
            members: dict[str, Any] = getattr(shape, "members", {})  # error shapes are structures
            return next((name for name in members if name.lower() == "message"), "message")
    return "message"


@declare(
    "lambda.user-errors",
    'Lambda client errors carry "Type": "User" as AWS\'s do',
    T("moto.awslambda.exceptions:LambdaClientError.__init__", "self", "error", "message"),
    fixes_moto='Lambda error bodies lack AWS\'s "Type": "User"',
)
def patch_lambda_user_errors() -> None:
    """Every client error of moto's Lambda API has AWS's body: `"Type": "User"` and the message
    under the member the API's model names (boto3 shows both on the response)."""
    from moto.awslambda.exceptions import LambdaClientError

    init = LambdaClientError.__init__

    def __init__(self: Any, error: str, message: str) -> None:
        init(self, error, message)
        self.description = json.dumps({"Type": _USER_ERROR, message_member(error): self.message})

    install(LambdaClientError, "__init__", __init__)


@declare(
    "lambda.mapping-answers",
    (
        "CreateEventSourceMapping answers 202 Creating, UpdateEventSourceMapping its transition; every "
        "answer with AWS's SQS defaults and USER_INITIATED"
    ),
    T("moto.awslambda.models:EventSourceMapping.get_configuration", "self"),
    T("moto.awslambda.responses:LambdaResponse.create_event_source_mapping", "self"),
    T("moto.awslambda.responses:LambdaResponse.update_event_source_mapping", "self"),
    T("moto.awslambda.responses:LambdaResponse.delete_event_source_mapping", "self"),
    fixes_moto=(
        "CreateEventSourceMapping answers 201 and State Enabled (AWS: 202, Creating); "
        "FunctionResponseTypes and MaximumBatchingWindowInSeconds are missing when unset (AWS: [] and 0);"
        " StateTransitionReason is 'User initiated' (AWS: USER_INITIATED)"
    ),
)
def patch_event_source_mapping_answers() -> None:
    """CreateEventSourceMapping answers 202 with `State: Creating` (moto: 201, `Enabled`), and
    UpdateEventSourceMapping its transition (moto: the settled state): both settle by the next
    read, where AWS takes seconds. Every answer is shaped as `answer_shape` says; an update or
    delete of a mapping that does not exist is ResourceNotFoundException (moto: a bare 404)."""
    from moto.awslambda.models import EventSourceMapping
    from moto.awslambda.responses import LambdaResponse

    configuration = EventSourceMapping.get_configuration

    def get_configuration(self: Any) -> dict[str, Any]:
        return answer_shape(configuration(self))

    def create_event_source_mapping(self: Any) -> Any:
        esm = self.backend.create_event_source_mapping(self.json_body)
        return 202, {"status": 202}, json.dumps({**esm.get_configuration(), "State": "Creating"})

    def update_event_source_mapping(self: Any) -> Any:
        uuid = self.path.split("/")[-1]
        before = self.backend.get_event_source_mapping(uuid)
        before_enabled = bool(before.enabled) if before is not None else None
        esm = self.backend.update_event_source_mapping(uuid, self.json_body)
        if esm is None:
            from moto.awslambda.exceptions import GenericResourcNotFound

            raise GenericResourcNotFound()
        answer = esm.get_configuration()
        answer["State"] = transition(answer["State"], self.json_body, before_enabled)
        return 202, {"status": 202}, json.dumps(answer)

    def delete_event_source_mapping(self: Any) -> Any:
        esm = self.backend.delete_event_source_mapping(self.path.split("/")[-1])
        if esm is None:
            from moto.awslambda.exceptions import GenericResourcNotFound

            raise GenericResourcNotFound()
        return 202, {"status": 202}, json.dumps({**esm.get_configuration(), "State": "Deleting"})

    install(EventSourceMapping, "get_configuration", get_configuration)
    install(LambdaResponse, "create_event_source_mapping", create_event_source_mapping)
    install(LambdaResponse, "update_event_source_mapping", update_event_source_mapping)
    install(LambdaResponse, "delete_event_source_mapping", delete_event_source_mapping)


def settings_refusal(settings: dict[str, Any], source_arn: str) -> str | None:
    """Why AWS refuses a mapping's batching and filter settings for an SQS source, in its words
    (None: it takes them, or the source is not SQS). A filter rule the Lambda host does not
    implement is refused too, a local limit: it would otherwise let messages through unfiltered."""
    from embedded_aws.lambda_host.event_source_mappings.filters import (
        MAX_FILTERS,
        FilterError,
        UnsupportedFilter,
        compile_filters,
    )

    if ":sqs:" not in source_arn:
        return None
    batch_size = int(settings.get("BatchSize") or 10)
    window = settings.get("MaximumBatchingWindowInSeconds")
    if window is not None and not 0 <= int(window) <= 300:
        return "MaximumBatchingWindowInSeconds must be between 0 and 300"
    if source_arn.endswith(".fifo") and window:
        return "Batching window is not supported for FIFO queues"
    if batch_size > 10 and not window:
        return (
            "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10"
        )
    try:
        compile_filters(settings.get("FilterCriteria"))
    except UnsupportedFilter as error:
        return f"Invalid filter pattern definition: {error}"
    except FilterError as error:
        if len((settings.get("FilterCriteria") or {}).get("Filters") or []) > MAX_FILTERS:
            return str(error)
        return INVALID_FILTER
    return None


def visibility_refusal(visibility_timeout: int, function_timeout: int) -> str | None:
    """AWS refuses a mapping whose queue's visibility timeout is shorter than the function's timeout."""
    if visibility_timeout < function_timeout:
        return (
            f"Queue visibility timeout: {visibility_timeout} seconds is less than Function timeout: "
            f"{function_timeout} seconds"
        )
    return None


@functools.cache
def _resource_conflict() -> type[Exception]:
    """Lambda's 409 ResourceConflictException (moto has none)."""
    from moto.awslambda.exceptions import LambdaClientError

    class ResourceConflictException(LambdaClientError):
        code = 409

        def __init__(self, message: str) -> None:
            super().__init__("ResourceConflictException", message)

    return ResourceConflictException


def _invalid(message: str) -> Exception:
    from moto.awslambda.exceptions import InvalidParameterValueException

    return InvalidParameterValueException(message)


def _queue_of(arn: str) -> Any:
    from moto.sqs.models import sqs_backends

    try:
        _, _, _, region, account, queue_name = arn.split(":", 5)
        return sqs_backends[account][region].queues.get(queue_name)
    except (ValueError, KeyError):
        return None


def check_source_and_function(backend: Any, spec: dict[str, Any]) -> None:
    """At create only, in AWS's order: the function exists, then the queue; no mapping of the
    queue calls the same function; the queue's visibility timeout covers the function's
    timeout (AWS does not check an update or a later change of either timeout)."""
    source_arn = spec.get("EventSourceArn") or ""
    try:
        function = backend.get_function(spec.get("FunctionName") or "")
    except Exception:  # noqa: BLE001 - moto's not-found, by name or ARN
        raise _invalid("Function does not exist") from None
    queue = _queue_of(source_arn)
    if queue is None:
        raise _invalid(MISSING_QUEUE)
    for esm in backend._event_source_mappings.values():
        if esm.event_source_arn == source_arn and esm.function_arn == function.function_arn:
            raise _resource_conflict()(duplicate_message(source_arn, spec["FunctionName"], esm.uuid))
    refusal = visibility_refusal(int(queue.visibility_timeout), int(function.timeout))
    if refusal is not None:
        raise _invalid(refusal)


def check_create(backend: Any, spec: dict[str, Any]) -> None:
    """What CreateEventSourceMapping refuses before moto stores the mapping."""
    if not spec.get("EventSourceArn"):
        raise _invalid("Unrecognized event source.")
    refusal = settings_refusal(spec, spec.get("EventSourceArn") or "")
    if refusal is not None:
        raise _invalid(refusal)
    if ":sqs:" in (spec.get("EventSourceArn") or ""):
        check_source_and_function(backend, spec)


def check_update(backend: Any, uuid: str, spec: dict[str, Any]) -> None:
    """What UpdateEventSourceMapping refuses: the settings the mapping would have afterwards."""
    esm = backend.get_event_source_mapping(uuid)
    if esm is not None:
        current = {
            "BatchSize": esm.batch_size,
            "MaximumBatchingWindowInSeconds": esm.max_batch_window,
            "FilterCriteria": esm.filter_criteria,
        }
        refusal = settings_refusal({**current, **spec}, esm.event_source_arn)
        if refusal is not None:
            raise _invalid(refusal)


@declare(
    "lambda.mapping-rules",
    "CreateEventSourceMapping and UpdateEventSourceMapping refuse what AWS refuses, in AWS's words",
    T("moto.awslambda.models:LambdaBackend.create_event_source_mapping", "self", "spec"),
    T("moto.awslambda.models:LambdaBackend.update_event_source_mapping", "self", "uuid", "spec"),
    # every mapping, for the one-mapping-per-queue-and-function rule
    state("moto.awslambda.models:LambdaBackend._event_source_mappings", new_objects.lambda_backend),
    fixes_moto=(
        "event source mappings are stored without AWS's checks of batch size, window, filters, visibility"
        " timeout and duplicates; a missing queue is ResourceNotFoundException (AWS: "
        "InvalidParameterValueException)"
    ),
)
def patch_event_source_mapping_rules() -> None:
    """CreateEventSourceMapping and UpdateEventSourceMapping refuse, as AWS does, what moto
    stores without a word: no event source, a function or a queue that does not exist (moto:
    XML MissingParameter and ResourceNotFoundException), a
    second mapping of the same queue and function (409 ResourceConflictException), a batch size
    over 10 without a batching window of at least 1 s, a window outside 0-300 s or on a FIFO
    queue, FilterCriteria that are not valid (more than five filters; any pattern AWS refuses
    gets its one message), and (at create) a queue whose visibility timeout is shorter than the
    function's timeout; and, a local limit, filter rules the Lambda host does not implement
    (lambda_host/event_source_mappings/filters.py), which would otherwise drop messages
    unfiltered. InvalidParameterValueException, as for AWS's own checks."""
    from moto.awslambda.models import LambdaBackend

    create = LambdaBackend.create_event_source_mapping
    update = LambdaBackend.update_event_source_mapping

    def create_event_source_mapping(self: Any, spec: dict[str, Any]) -> Any:
        check_create(self, spec)
        return create(self, spec)

    def update_event_source_mapping(self: Any, uuid: str, spec: dict[str, Any]) -> Any:
        check_update(self, uuid, spec)
        return update(self, uuid, spec)

    install(LambdaBackend, "create_event_source_mapping", create_event_source_mapping)
    install(LambdaBackend, "update_event_source_mapping", update_event_source_mapping)
