"""A resource whose creation or update fails in moto (a table name that is taken, a queue name
clashing with other attributes, any service error) fails the stack operation as on AWS: the
resource's own CREATE_FAILED or UPDATE_FAILED event with the service's message (failure_messages.py), the
rollback, and every CloudFormation answer in CloudFormation's XML protocol. moto let the service's
error escape the CreateStack call, which answered with that service's JSON error, and left the
stack CREATE_IN_PROGRESS with what it had created so far.

The stack-level wrappers live in custom_resources.py (one owner per moto attribute, as the patch
registry wants) and call the rollbacks here; a custom resource answering FAILED fails the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from embedded_aws.compat.internals import (
    ADD_STACK_EVENT,
    CHANGE_SET_STATE,
    CREATE_OUTPUT_MAP,
    EVENT_TIMESTAMP,
    PARSE_TEMPLATE,
    PARSED_RESOURCES,
    RESOURCE_JSON,
    STACK_STATE,
)
from embedded_aws.compat.registry import T, declare, install
from embedded_aws.services.cloudformation import imports
from embedded_aws.services.cloudformation.failure_messages import ResourceFailed, stack_reason, status_reason
from embedded_aws.services.cloudformation.lifecycle import CustomResourceFailed

log = logging.getLogger("embedded_aws.server")

ROLLING_BACK = ("ROLLBACK_IN_PROGRESS", "ROLLBACK_COMPLETE", "ROLLBACK_FAILED")
_MILLISECOND = timedelta(milliseconds=1)


def forget_outputs(stack: Any) -> None:
    """A stack being deleted or rolled back has no outputs. moto evaluates an output when it is
    described, and evaluating one that names a deleted resource created that resource again."""
    from moto.cloudformation.parsing import OutputMap

    stack.output_map = OutputMap(stack.resource_map, {}, stack.stack_id)


def add_resource_event(
    stack: Any, logical_id: str, resource_type: str, physical_id: str, status: str, reason: str | None = None
) -> None:
    """An event of one resource of the stack (moto records only the stack's own)."""
    from moto.cloudformation.models import Event

    event = Event(
        stack_id=stack.stack_id,
        stack_name=stack.name,
        logical_resource_id=logical_id,
        physical_resource_id=physical_id,
        resource_type=resource_type,
        resource_status=status,
        resource_status_reason=reason,
        resource_properties=None,
    )
    stack.events.append(event)


def _created(stack: Any) -> dict[str, Any]:
    """The stack's resources that exist now, by logical id."""
    resource_map = stack.resource_map
    templated = resource_map._resource_json_map
    return {
        logical_id: resource
        for logical_id, resource in resource_map._parsed_resources.items()
        if logical_id in templated and resource is not None and not isinstance(resource, str)
    }


def _spread_in_time(stack: Any) -> None:
    """Events at least a millisecond apart, as CloudFormation's are: a rollback done in one call
    logs its events within a millisecond, and a client that orders events by time (the CDK CLI,
    a stable sort of the newest-first list) would print them backwards."""
    previous = None
    for event in stack.events:
        if previous is not None and event.timestamp < previous + _MILLISECOND:
            event.timestamp = previous + _MILLISECOND
        previous = event.timestamp


def _record_deletes(stack: Any, before: dict[str, Any]) -> None:
    """A DELETE_COMPLETE event for each resource of `before` the stack no longer has."""
    after = _created(stack)
    for logical_id, resource in before.items():
        if logical_id not in after:
            resource_type = getattr(resource, "cf_resource_type", "")
            add_resource_event(stack, logical_id, resource_type, _physical_id(resource), "DELETE_COMPLETE")


def roll_back_create(stack: Any, failures: list[ResourceFailed]) -> None:
    """After a failed create: each failed resource's CREATE_FAILED, then the stack rolls back as
    CloudFormation does: every resource it created is deleted, except those whose DeletionPolicy
    is Retain, and it ends ROLLBACK_COMPLETE (ROLLBACK_FAILED with the reason if a delete fails)."""
    for failure in failures:
        add_resource_event(
            stack,
            failure.logical_id,
            failure.resource_type,
            failure.physical_id,
            "CREATE_FAILED",
            failure.reason,
        )
    stack.status = "ROLLBACK_IN_PROGRESS"
    forget_outputs(stack)
    stack._add_stack_event(
        "ROLLBACK_IN_PROGRESS",
        resource_status_reason=stack_reason("CREATE", [f.logical_id for f in failures]),
    )
    _roll_back(stack, stack.resource_map.delete, "ROLLBACK")


def custom_resource_failure(error: CustomResourceFailed, action: str = "UPDATE") -> ResourceFailed:
    """A custom resource's failed request as the failure of its resource."""
    return ResourceFailed(
        error.logical_id, error.resource_type, error.physical_id, action, error.status_reason
    )


def record_update_failure(stack: Any, failure: ResourceFailed) -> str:
    """The failed resource's UPDATE_FAILED (CREATE_FAILED for one the update added); returns the
    reason of the stack's UPDATE_ROLLBACK_IN_PROGRESS."""
    add_resource_event(
        stack,
        failure.logical_id,
        failure.resource_type,
        failure.physical_id,
        f"{failure.action}_FAILED",
        failure.reason,
    )
    return stack_reason(failure.action, [failure.logical_id])


def roll_back_update(
    stack: Any, reason: str, previous_template: Any, previous_parameters: dict[str, Any]
) -> None:
    """After a failed update, as CloudFormation rolls it back: the previous template is applied
    again (each changed resource updated back, each added one deleted) and the stack ends
    UPDATE_ROLLBACK_COMPLETE (UPDATE_ROLLBACK_FAILED with the reason if that fails)."""
    stack.status = "UPDATE_ROLLBACK_IN_PROGRESS"
    stack._add_stack_event("UPDATE_ROLLBACK_IN_PROGRESS", resource_status_reason=reason)
    stack.template = previous_template
    stack._parse_template()

    def update_back() -> None:
        stack.resource_map.update(stack.template_dict, previous_parameters)
        stack.output_map = stack._create_output_map()

    _roll_back(stack, update_back, "UPDATE_ROLLBACK")


def _roll_back(stack: Any, undo: Callable[[], None], status: str) -> None:
    """Run the rollback `undo`, record a DELETE_COMPLETE for each resource it removed, and end the
    stack `<status>_COMPLETE`, or `<status>_FAILED` with the reason when `undo` raised."""
    before = _created(stack)
    try:
        undo()
    except Exception as error:  # noqa: BLE001 - the stack says so, as on AWS
        _record_deletes(stack, before)
        stack.status = f"{status}_FAILED"
        stack._add_stack_event(f"{status}_FAILED", resource_status_reason=str(error))
    else:
        _record_deletes(stack, before)
        stack.status = f"{status}_COMPLETE"
        stack._add_stack_event(f"{status}_COMPLETE")
    _spread_in_time(stack)


def _physical_id(resource: Any) -> str:
    try:
        return str(resource.physical_resource_id)
    except Exception:  # noqa: BLE001 - some moto models have none
        return ""


def _identifier(logical_id: str, resource_json: dict[str, Any], resources_map: Any) -> str:
    """The name the resource was to have (its name property, else the generated one)."""
    from moto.cloudformation import parsing

    try:
        parsed = parsing.parse_resource_and_generate_name(logical_id, resource_json, resources_map)
    except Exception:  # noqa: BLE001 - the name itself could not be worked out
        return ""
    return str(parsed[2]) if parsed else ""


def failed_resource(
    action: str, logical_id: str, resource_json: dict[str, Any], resources_map: Any, error: Exception
) -> ResourceFailed:
    """The failure of one resource's create or update, named as CloudFormation names it (an
    updated resource by its physical id), logged."""
    resource_type = resource_json.get("Type", "")
    identifier = _identifier(logical_id, resource_json, resources_map)
    if action == "UPDATE":
        existing = resources_map._parsed_resources.get(logical_id)
        identifier = _physical_id(existing) or identifier
    reason = status_reason(error, resource_type, identifier)
    log.info("stack %s: %s %s_FAILED: %s", resources_map.stack_id, logical_id, action, reason)
    return ResourceFailed(logical_id, resource_type, identifier, action, reason)


def creating_or_failing(create: Any) -> Any:
    """moto's `parse_and_create_resource`, raising ResourceFailed for any error that is not
    CloudFormation's own (a queue whose name is taken included)."""
    from moto.cloudformation.exceptions import CloudFormationError

    def parse_and_create_resource(
        logical_id: str, resource_json: dict[str, Any], resources_map: Any, account_id: str, region_name: str
    ) -> Any:
        try:
            if resource_json.get("Type") == "AWS::SQS::Queue":
                name = _identifier(logical_id, resource_json, resources_map)
                imports.refuse_existing_queue(name, account_id, region_name)
            return create(logical_id, resource_json, resources_map, account_id, region_name)
        except (ResourceFailed, CloudFormationError):
            raise  # a resource it refers to failed first, or the template is wrong
        except Exception as error:  # any service's error fails this resource
            raise failed_resource("CREATE", logical_id, resource_json, resources_map, error) from error

    return parse_and_create_resource


def updating_or_failing(update: Any) -> Any:
    """moto's `parse_and_update_resource`, raising ResourceFailed for any error that is not
    CloudFormation's own."""
    from moto.cloudformation.exceptions import CloudFormationError

    def parse_and_update_resource(
        logical_id: str, resource_json: dict[str, Any], resources_map: Any, account_id: str, region_name: str
    ) -> Any:
        try:
            return update(logical_id, resource_json, resources_map, account_id, region_name)
        except (ResourceFailed, CloudFormationError):
            raise
        except Exception as error:  # any service's error fails this resource
            raise failed_resource("UPDATE", logical_id, resource_json, resources_map, error) from error

    return parse_and_update_resource


def foreign_error(status: int, body: Any) -> str | None:
    """The text of an error answer that is not in CloudFormation's XML (another service's JSON
    error that escaped), or None for a success or an XML error."""
    text = body.decode() if isinstance(body, bytes) else str(body or "")
    if status >= 400 and not text.lstrip().startswith("<"):
        return text
    return None


def internal_failure(response: Any, message: str) -> Any:
    """CloudFormation's InternalFailure (500) with `message`, in its XML."""
    from moto.cloudformation.exceptions import CloudFormationError
    from moto.core.responses import ActionResult

    error = CloudFormationError("InternalFailure", message)
    _, headers, body = response.serialized(ActionResult(error))
    return 500, headers, body


def answering_in_xml(call_action: Any) -> Any:
    """moto's `CloudFormationResponse.call_action`: what escapes an action (a 500 page) or comes
    back in another service's JSON is answered as CloudFormation's InternalFailure, in XML, so
    its SDKs can read it."""

    def call_action_answering_in_xml(self: Any) -> Any:
        try:
            status, headers, body = call_action(self)
        except Exception as error:  # answered, and logged with its traceback
            log.exception("CloudFormation %s failed", self._get_action())
            return internal_failure(self, f"{type(error).__name__}: {error}")
        text = foreign_error(status, body)
        if text is not None:
            return internal_failure(self, text)
        return status, headers, body

    return call_action_answering_in_xml


def rolling_back_change_sets(execute: Any) -> Any:
    """moto's `CloudFormationBackend.execute_change_set`: a change set whose execution fails rolls
    its stack back as CreateStack and UpdateStack do (moto marked it CREATE_COMPLETE or
    UPDATE_COMPLETE whatever happened)."""

    def execute_change_set(self: Any, change_set_name: str, stack_name: str | None = None) -> None:
        try:
            execute(self, change_set_name, stack_name)
        except (ResourceFailed, CustomResourceFailed) as error:
            change_set = self.describe_change_set(change_set_name)
            change_set.execution_status = "EXECUTE_FAILED"
            stack = change_set.stack
            # A custom resource's Update answered FAILED fails as its resource.
            failure = custom_resource_failure(error) if isinstance(error, CustomResourceFailed) else error
            if change_set.change_set_type == "CREATE":
                roll_back_create(stack, [failure])
            else:
                reason = record_update_failure(stack, failure)
                roll_back_update(stack, reason, stack.template, stack.parameters)

    return execute_change_set


@declare(
    "cloudformation.resource-failures",
    (
        "a resource whose create or update fails gives its CREATE_FAILED/UPDATE_FAILED event and rolls "
        "the stack back; CloudFormation answers errors in its own XML"
    ),
    T(
        "moto.cloudformation.parsing:parse_and_create_resource",
        "logical_id",
        "resource_json",
        "resources_map",
        "account_id",
        "region_name",
    ),
    T(
        "moto.cloudformation.parsing:parse_and_update_resource",
        "logical_id",
        "resource_json",
        "resources_map",
        "account_id",
        "region_name",
    ),
    T("moto.cloudformation.responses:CloudFormationResponse.call_action", "self"),
    T(
        "moto.cloudformation.models:CloudFormationBackend.execute_change_set",
        "self",
        "change_set_name",
        "stack_name",
    ),
    PARSED_RESOURCES,
    RESOURCE_JSON,
    ADD_STACK_EVENT,
    PARSE_TEMPLATE,
    CREATE_OUTPUT_MAP,
    *STACK_STATE,
    EVENT_TIMESTAMP,
    *CHANGE_SET_STATE,
    fixes_moto=(
        "a service error while creating a stack's resource (a table name that is taken) escapes "
        "CreateStack as that service's JSON error and leaves the stack CREATE_IN_PROGRESS, with no "
        "rollback"
    ),
)
def patch_resource_failures() -> None:
    """moto's create and update of one resource raise ResourceFailed for any error that is not
    CloudFormation's own (those stay API errors, as the ValidationError of a bad template is on
    AWS); and CloudFormation answers an error that still escapes in its own protocol."""
    from moto.cloudformation import models, parsing, responses

    parsing.parse_and_create_resource = creating_or_failing(parsing.parse_and_create_resource)
    parsing.parse_and_update_resource = updating_or_failing(parsing.parse_and_update_resource)
    install(
        responses.CloudFormationResponse,
        "call_action",
        answering_in_xml(responses.CloudFormationResponse.call_action),
    )
    install(
        models.CloudFormationBackend,
        "execute_change_set",
        rolling_back_change_sets(models.CloudFormationBackend.execute_change_set),
    )
