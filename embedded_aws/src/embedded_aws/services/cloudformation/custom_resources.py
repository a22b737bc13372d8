"""CloudFormation custom resources as on AWS: `Update` and `Delete` requests (moto sends `Create`
only) at a response URL that is this server's, on `localhost`, and a FAILED answer fails the
operation and rolls back a create or an update."""

from __future__ import annotations

import enum
import json
import os
import threading
from collections.abc import Callable
from typing import Any

from embedded_aws.compat import new_objects
from embedded_aws.compat.cloudformation_models import CREATE_PARAMETERS, UPDATE_PARAMETERS, after_create
from embedded_aws.compat.internals import (
    ADD_STACK_EVENT,
    DELETE_RESOURCE,
    GET_PARAM,
    PARSED_RESOURCES,
    RESOURCE_JSON,
    STACK_STATE,
)
from embedded_aws.compat.registry import T, declare, install, states
from embedded_aws.services.cloudformation.failure_messages import ResourceFailed, stack_reason
from embedded_aws.services.cloudformation.lifecycle import (
    Answer,
    AnswerTo,
    CustomResourceFailed,
    CustomResourceLifecycle,
)
from embedded_aws.services.cloudformation.resource_failures import (
    ROLLING_BACK,
    add_resource_event,
    custom_resource_failure,
    forget_outputs,
    record_update_failure,
    roll_back_create,
    roll_back_update,
)

# What the response URL answers once an answer is taken (moto's handler answers the same).
_TAKEN = (200, {"status": 200}, json.dumps("{}"))


@declare(
    "cloudformation.response-url",
    "custom resources answer this server, on localhost",
    T("moto.settings:moto_server_host"),
    uses=("port",),
)
def patch_custom_resource_host(port: int) -> None:
    from moto import settings

    os.environ["MOTO_PORT"] = str(port)
    settings.moto_server_host = lambda: "http://localhost"  # type: ignore[assignment]


class AnswerRoute(enum.Enum):
    """Where an answer at the response URL goes, once the lifecycle has seen it."""

    TAKEN = "an Update or Delete answer: the lifecycle has it"
    IGNORED = "the stack is rolling back: moto's handler would create its resources again"
    DATA_ONLY = "a Create answer after the stack's create: keep its data, leave the stack's status"
    ROLL_BACK_THEN_MOTO = "a FAILED Create that completes the stack's creates: roll back, then moto"
    MOTO = "moto's handler records it"


def answer_route(whose: AnswerTo, stack_status: str | None) -> AnswerRoute:
    """The route of an answer the lifecycle called `whose`, to a stack in `stack_status` (None:
    moto knows no such stack)."""
    if whose is AnswerTo.REQUEST:
        return AnswerRoute.TAKEN
    if stack_status is None:
        return AnswerRoute.MOTO
    if stack_status in ROLLING_BACK:
        return AnswerRoute.IGNORED
    if whose is AnswerTo.CREATE and stack_status != "CREATE_IN_PROGRESS":
        # A custom resource an update added, or one answering after its stack was deleted (moto's
        # handler marks any stack CREATE_COMPLETE, so an answer after the update finished turned
        # UPDATE_COMPLETE into CREATE_COMPLETE, and a deleted stack into a live-looking one).
        return AnswerRoute.DATA_ONLY
    if whose is AnswerTo.CREATE_THEN_ROLL_BACK:
        return AnswerRoute.ROLL_BACK_THEN_MOTO
    return AnswerRoute.MOTO


def answer_from(param: Callable[[str], Any]) -> tuple[tuple[str, str], Answer]:
    """The resource an answer is for (stack id, logical id) and the answer, from the request's
    parameters (`param(name)`)."""
    answered = (param("StackId"), param("LogicalResourceId"))
    answer = Answer(
        param("Status"),
        param("PhysicalResourceId") or None,
        param("Data") or {},
        param("Reason"),
        param("RequestId"),
    )
    return answered, answer


def removed_resources(resource_json_map: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """The resources (logical id -> JSON) a stack has and the new `template` no longer names."""
    return {name: resource_json_map[name] for name in resource_json_map if name not in template["Resources"]}


def _key(model: Any) -> tuple[str, str]:
    return model.stack_id, model.logical_id


def _remember(
    model: Any,
    cloudformation_json: dict[str, Any],
    account_id: str,
    region_name: str,
    kwargs: dict[str, Any],
) -> None:
    """What a Create leaves on the custom resource for its later Update and Delete."""
    model.account_id, model.stack_id = account_id, kwargs["StackId"]
    model.resource_type, model.properties = kwargs["ResourceType"], cloudformation_json["Properties"]


def _pending_creates(stack: Any) -> list[tuple[str, str]]:
    """The custom resources of `stack` whose Create has not been answered yet."""
    return [
        (stack.stack_id, logical_id)
        for logical_id, resource in stack.custom_resources.items()
        if not resource.is_created()
    ]


def _as_method(hook: Callable[..., Any]) -> Callable[..., Any]:
    """A plain function a moto class can hold as a method: its `self` is `hook`'s first argument."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return hook(self, *args, **kwargs)

    return method


class CustomResourceHooks:
    """The replacements of moto's custom-resource and stack methods, around moto's own (the
    originals are read when this is made, before the patch binds the replacements)."""

    def __init__(self, lifecycle: CustomResourceLifecycle) -> None:
        from moto.cloudformation import responses
        from moto.cloudformation.models import Stack
        from moto.cloudformation.parsing import ResourceMap

        self.lifecycle = lifecycle
        self._process_cfn_response = responses.CloudFormationResponse.process_cfn_response
        self._delete_all = ResourceMap.delete
        self._update_all = ResourceMap.update
        self._create_resources = Stack.create_resources
        self._update_stack = Stack.update
        self._delete_stack = Stack.delete

    def send(self, model: Any, request_type: str, properties: dict[str, Any], **extra: Any) -> None:
        """Sends a request to the custom resource's function and keeps the data it answers."""
        from moto import settings
        from moto.awslambda.utils import get_backend as lambda_backend

        token = properties["ServiceToken"]
        event = self.lifecycle.event(
            _key(model),
            request_type,
            service_token=token,
            resource_type=model.resource_type,
            response_url=f"{settings.moto_server_host()}:{settings.moto_server_port()}"
            f"/cloudformation_{model.region_name}/cfnresponse?stack={model.stack_id}",
            default_physical_id=model.physical_resource_id,
            properties=properties,
            **extra,
        )
        function = lambda_backend(model.account_id, model.region_name).get_function(token)

        def invoke(event: dict[str, Any]) -> None:
            function.invoke(json.dumps(event), {}, {})

        answer = self.lifecycle.send(_key(model), event, invoke)
        model.set_data(answer.data)

    def update_custom_resource(
        self,
        cls: Any,
        original_resource: Any,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> Any:
        """CustomModel.update_from_cloudformation_json: an Update when the properties changed."""
        properties = cloudformation_json["Properties"]
        if properties != original_resource.properties:
            try:
                self.send(
                    original_resource,
                    "Update",
                    properties,
                    OldResourceProperties=original_resource.properties,
                )
            except CustomResourceFailed as error:
                # moto retries a resource that raises, which would send the same Update again.
                self.lifecycle.defer_update_failure(original_resource.stack_id, error)
            else:
                original_resource.properties = properties
        return original_resource

    def delete_custom_resource(self, model: Any, account_id: str, region_name: str) -> None:
        """CustomModel.delete: a Delete request."""
        self.send(model, "Delete", model.properties)

    def process_cfn_response(self, response: Any) -> Any:
        """Answers to Update and Delete are taken by the lifecycle (moto's handler would look the
        stack up where a deleted one is not, and mark an updated one CREATE_COMPLETE); answers to
        Create go on to moto's handler, unless the stack is rolling back (moto's handler would
        check the stack's readiness, which creates its resources again)."""
        answered, answer = answer_from(response._get_param)
        whose = self.lifecycle.answer(answered, answer)
        if whose is AnswerTo.REQUEST:
            return _TAKEN
        try:
            stack = response.cloudformation_backend.get_stack(answered[0])
        except Exception:  # noqa: BLE001 - moto's handler reports an unknown stack
            stack = None
        route = answer_route(whose, None if stack is None else stack.status)
        if route is AnswerRoute.IGNORED:
            return _TAKEN
        if route is AnswerRoute.DATA_ONLY:
            resource = stack.custom_resources.get(answered[1])
            if answer.status == "SUCCESS" and resource is not None:
                resource.set_data(answer.data)
            return _TAKEN
        if route is AnswerRoute.ROLL_BACK_THEN_MOTO:
            self.start_rollback(stack)
        return self._process_cfn_response(response)

    def delete_custom_resources_first(self, resource_map: Any) -> None:
        """ResourceMap.delete: custom resources first (their dependencies on their function and
        its role make CloudFormation do so), those kept by DeletionPolicy Retain excepted."""
        from moto.cloudformation.custom_model import CustomModel

        for logical_id, resource in list(resource_map._parsed_resources.items()):
            resource_json = resource_map._resource_json_map.get(logical_id, {})
            if isinstance(resource, CustomModel) and resource_json.get("DeletionPolicy") != "Retain":
                resource_map._delete_resource(resource, resource_json)
                resource_map._parsed_resources.pop(logical_id)
        self._delete_all(resource_map)

    def update_then_clean_up(
        self, resource_map: Any, template: dict[str, Any], parameters: dict[str, Any] | None = None
    ) -> None:
        """As CloudFormation updates a stack: resources are created and updated first, and those
        the template no longer has are deleted only once that succeeded (moto deleted them first,
        so a failed update lost them). A failed custom resource Update fails the update here.
        A deleted resource is forgotten (moto kept it, so adding it back later created nothing)."""
        removed = removed_resources(resource_map._resource_json_map, template)
        if removed:
            self._update_all(
                resource_map, {**template, "Resources": {**template["Resources"], **removed}}, parameters
            )
            self.lifecycle.raise_update_failure(resource_map.stack_id)
        self._update_all(resource_map, template, parameters)
        for name in removed:
            resource_map._parsed_resources.pop(name, None)
        self.lifecycle.raise_update_failure(resource_map.stack_id)

    def start_rollback(self, stack: Any) -> None:
        """As on AWS after CreateStack has returned: in a thread."""
        if self.lifecycle.claim_rollback(stack.stack_id):
            threading.Thread(
                target=self.roll_back, args=(stack,), name=f"rollback-{stack.name}", daemon=True
            ).start()

    def roll_back(self, stack: Any) -> None:
        """Rolls back the create of `stack`, whose failed custom resources are the reason."""
        failures = []
        for logical_id, _ in self.lifecycle.failed_creates(_pending_creates(stack)):
            key, resource = (stack.stack_id, logical_id), stack.custom_resources[logical_id]
            failures.append(
                ResourceFailed(
                    logical_id,
                    resource.resource_type,
                    self.lifecycle.physical_id(key, resource.physical_resource_id),
                    "CREATE",
                    self.lifecycle.create_failure_reason(key),
                )
            )
        roll_back_create(stack, failures)

    def create_resources_then_roll_back_failures(self, stack: Any) -> None:
        """A resource that fails to create rolls the stack back at once (ResourceFailed); a
        custom resource whose function answers FAILED, once its answer and all the others are in."""
        try:
            self._create_resources(stack)
        except ResourceFailed as failure:
            if self.lifecycle.claim_rollback(stack.stack_id):
                roll_back_create(stack, [failure])
            return
        if self.lifecycle.all_created(stack.stack_id, _pending_creates(stack)):
            self.start_rollback(stack)

    def update_rolling_back(
        self,
        stack: Any,
        template: str,
        role_arn: str | None = None,
        parameters: dict[str, Any] | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        """A failed update is rolled back as on AWS: the previous template is applied again
        (moto updates each changed resource back, deletes the ones the update added) and the
        stack ends UPDATE_ROLLBACK_COMPLETE."""
        previous_template, previous_parameters = stack.template, stack.parameters
        try:
            self._update_stack(stack, template, role_arn, parameters, tags)
        except (CustomResourceFailed, ResourceFailed) as error:
            failure = custom_resource_failure(error) if isinstance(error, CustomResourceFailed) else error
            reason = record_update_failure(stack, failure)
            roll_back_update(stack, reason, previous_template, previous_parameters)

    def delete_or_fail(self, stack: Any) -> None:
        """A FAILED Delete leaves the stack DELETE_FAILED with the reason (moto answered 500)."""
        forget_outputs(stack)
        try:
            self._delete_stack(stack)
        except CustomResourceFailed as error:
            failure = custom_resource_failure(error, "DELETE")
            add_resource_event(
                stack,
                failure.logical_id,
                failure.resource_type,
                failure.physical_id,
                "DELETE_FAILED",
                failure.reason,
            )
            stack.status = "DELETE_FAILED"
            stack._add_stack_event(
                "DELETE_FAILED", resource_status_reason=stack_reason("DELETE", [failure.logical_id])
            )


@declare(
    "cloudformation.custom-resources",
    (
        "custom resources get Update and Delete; FAILED, or a resource's failure, fails and rolls back; "
        "an update deletes the resources it removes last"
    ),
    T("moto.cloudformation.custom_model:CustomModel.create_from_cloudformation_json", *CREATE_PARAMETERS),
    T("moto.cloudformation.custom_model:CustomModel.update_from_cloudformation_json", *UPDATE_PARAMETERS),
    T("moto.cloudformation.custom_model:CustomModel.delete", adds=True),
    T("moto.cloudformation.responses:CloudFormationResponse.process_cfn_response", "self"),
    T("moto.cloudformation.parsing:ResourceMap.delete", "self"),
    T("moto.cloudformation.parsing:ResourceMap.update", "self", "template", "parameters"),
    T("moto.cloudformation.models:Stack.create_resources", "self"),
    T("moto.cloudformation.models:Stack.update", "self", "template", "role_arn", "parameters", "tags"),
    T("moto.cloudformation.models:Stack.delete", "self"),
    PARSED_RESOURCES,
    RESOURCE_JSON,
    DELETE_RESOURCE,
    ADD_STACK_EVENT,
    GET_PARAM,
    *STACK_STATE,
    # what a Create leaves on the custom resource for its Update and Delete
    *states(
        "moto.cloudformation.custom_model:CustomModel",
        new_objects.custom_model,
        *("account_id", "stack_id", "resource_type", "properties"),
        adds=True,
    ),
    fixes_moto="custom resources get Create only; a FAILED answer is ignored and the stack stays CREATE_IN_PROGRESS",
)
def patch_custom_resource_requests(lifecycle: CustomResourceLifecycle | None = None) -> None:
    """The adapter between moto and the custom-resource lifecycle (lifecycle.py): a custom
    resource gets `Update` (with `OldResourceProperties`) when its properties change and `Delete`
    when it is removed, and a FAILED answer fails the stack operation and rolls back a create or
    an update; moto only sent `Create` and ignored FAILED. Custom resources are deleted before
    everything else of the stack, as their dependencies on their function and its role make
    CloudFormation do; moto's delete follows no dependency order."""
    from moto.cloudformation.custom_model import CustomModel
    from moto.cloudformation.models import Stack
    from moto.cloudformation.parsing import ResourceMap
    from moto.cloudformation.responses import CloudFormationResponse

    hooks = CustomResourceHooks(lifecycle or CustomResourceLifecycle())
    after_create(CustomModel, _remember)
    CustomModel.update_from_cloudformation_json = classmethod(_as_method(hooks.update_custom_resource))  # type: ignore[assignment]  # a classmethod of ours
    CustomModel.delete = _as_method(hooks.delete_custom_resource)  # type: ignore[attr-defined]
    install(CloudFormationResponse, "process_cfn_response", _as_method(hooks.process_cfn_response))
    install(ResourceMap, "delete", _as_method(hooks.delete_custom_resources_first))
    install(ResourceMap, "update", _as_method(hooks.update_then_clean_up))
    install(Stack, "create_resources", _as_method(hooks.create_resources_then_roll_back_failures))
    install(Stack, "update", _as_method(hooks.update_rolling_back))
    install(Stack, "delete", _as_method(hooks.delete_or_fail))
