"""CloudFormation custom resources as on AWS: `Update` and `Delete` requests (moto sends `Create`
only) at a response URL that is this server's, on `localhost`, and a FAILED answer fails the
operation and rolls back a create or an update."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from embedded_aws.compat.cloudformation_models import after_create
from embedded_aws.compat.registry import T, declare
from embedded_aws.services.cloudformation.failures import ResourceFailed, stack_reason
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


@declare(
    "cloudformation.response-url",
    "custom resources answer this server, on localhost",
    T("moto.settings:moto_server_host"),
    uses=("port",),
)
def patch_custom_resource_host(port: int) -> None:
    from moto import settings

    os.environ["MOTO_PORT"] = str(port)
    settings.moto_server_host = lambda: "http://localhost"


@declare(
    "cloudformation.custom-resources",
    (
        "custom resources get Update and Delete; FAILED, or a resource's failure, fails and rolls back; "
        "an update deletes the resources it removes last"
    ),
    T(
        "moto.cloudformation.custom_model:CustomModel.create_from_cloudformation_json",
        "cls",
        "resource_name",
        "cloudformation_json",
        "account_id",
        "region_name",
        "kwargs",
    ),
    T(
        "moto.cloudformation.custom_model:CustomModel.update_from_cloudformation_json",
        "cls",
        "original_resource",
        "new_resource_name",
        "cloudformation_json",
        "account_id",
        "region_name",
    ),
    T("moto.cloudformation.custom_model:CustomModel.delete", adds=True),
    T("moto.cloudformation.responses:CloudFormationResponse.process_cfn_response", "self"),
    T("moto.cloudformation.parsing:ResourceMap.delete", "self"),
    T("moto.cloudformation.parsing:ResourceMap.update", "self", "template", "parameters"),
    T("moto.cloudformation.models:Stack.create_resources", "self"),
    T("moto.cloudformation.models:Stack.update", "self", "template", "role_arn", "parameters", "tags"),
    T("moto.cloudformation.models:Stack.delete", "self"),
    fixes_moto="custom resources get Create only; a FAILED answer is ignored and the stack stays CREATE_IN_PROGRESS",
)
def patch_custom_resource_requests(lifecycle: CustomResourceLifecycle | None = None) -> None:
    """The adapter between moto and the custom-resource lifecycle (lifecycle.py): a custom
    resource gets `Update` (with `OldResourceProperties`) when its properties change and `Delete`
    when it is removed, and a FAILED answer fails the stack operation and rolls back a create or
    an update; moto only sent `Create` and ignored FAILED. Custom resources are deleted before
    everything else of the stack, as their dependencies on their function and its role make
    CloudFormation do; moto's delete follows no dependency order."""
    from moto.awslambda.utils import get_backend as lambda_backend
    from moto.cloudformation import responses
    from moto.cloudformation.custom_model import CustomModel
    from moto.cloudformation.models import Stack
    from moto.cloudformation.parsing import ResourceMap

    lifecycle = lifecycle or CustomResourceLifecycle()

    def key(model: Any) -> tuple[str, str]:
        return model.stack_id, model.logical_id

    def remember(
        model: Any,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        kwargs: dict[str, Any],
    ) -> None:
        model.account_id, model.stack_id = account_id, kwargs["StackId"]
        model.resource_type, model.properties = kwargs["ResourceType"], cloudformation_json["Properties"]

    def send(model: Any, request_type: str, properties: dict[str, Any], **extra: Any) -> None:
        from moto import settings

        token = properties["ServiceToken"]
        event = lifecycle.event(
            key(model),
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
        answer = lifecycle.send(key(model), event, lambda event: function.invoke(json.dumps(event), {}, {}))
        model.set_data(answer.data)

    def update_from_cloudformation_json(
        cls: Any,
        original_resource: Any,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> Any:
        properties = cloudformation_json["Properties"]
        if properties != original_resource.properties:
            try:
                send(
                    original_resource,
                    "Update",
                    properties,
                    OldResourceProperties=original_resource.properties,
                )
            except CustomResourceFailed as error:
                # moto retries a resource that raises, which would send the same Update again.
                lifecycle.defer_update_failure(original_resource.stack_id, error)
            else:
                original_resource.properties = properties
        return original_resource

    def delete(self: Any, account_id: str, region_name: str) -> None:
        send(self, "Delete", self.properties)

    after_create(CustomModel, remember)
    CustomModel.update_from_cloudformation_json = classmethod(update_from_cloudformation_json)
    CustomModel.delete = delete

    process = responses.CloudFormationResponse.process_cfn_response

    def process_cfn_response(self: Any) -> Any:
        """Answers to Update and Delete are taken by the lifecycle (moto's handler would look the
        stack up where a deleted one is not, and mark an updated one CREATE_COMPLETE); answers to
        Create go on to moto's handler, unless the stack is rolling back (moto's handler would
        check the stack's readiness, which creates its resources again)."""
        answered = (self._get_param("StackId"), self._get_param("LogicalResourceId"))
        answer = Answer(
            self._get_param("Status"),
            self._get_param("PhysicalResourceId") or None,
            self._get_param("Data") or {},
            self._get_param("Reason"),
            self._get_param("RequestId"),
        )
        whose = lifecycle.answer(answered, answer)
        if whose is AnswerTo.REQUEST:
            return 200, {"status": 200}, json.dumps("{}")
        try:
            stack = self.cloudformation_backend.get_stack(answered[0])
        except Exception:  # noqa: BLE001 - moto's handler reports an unknown stack
            stack = None
        if stack is not None and stack.status in ROLLING_BACK:
            return 200, {"status": 200}, json.dumps("{}")
        if whose is AnswerTo.CREATE and stack is not None and stack.status != "CREATE_IN_PROGRESS":
            # A custom resource an update added, or one answering after its stack was deleted:
            # keep its data, leave the stack's status alone (moto's handler marks any stack
            # CREATE_COMPLETE, so an answer after the update finished turned UPDATE_COMPLETE
            # into CREATE_COMPLETE, and a deleted stack into a live-looking one).
            resource = stack.custom_resources.get(answered[1])
            if answer.status == "SUCCESS" and resource is not None:
                resource.set_data(answer.data)
            return 200, {"status": 200}, json.dumps("{}")
        if whose is AnswerTo.CREATE_THEN_ROLL_BACK and stack is not None:
            start_rollback(stack)
        return process(self)

    responses.CloudFormationResponse.process_cfn_response = process_cfn_response

    delete_all = ResourceMap.delete

    def delete_custom_resources_first(self: Any) -> None:
        for logical_id, resource in list(self._parsed_resources.items()):
            resource_json = self._resource_json_map.get(logical_id, {})
            if isinstance(resource, CustomModel) and resource_json.get("DeletionPolicy") != "Retain":
                self._delete_resource(resource, resource_json)
                self._parsed_resources.pop(logical_id)
        delete_all(self)

    ResourceMap.delete = delete_custom_resources_first

    update_all = ResourceMap.update

    def update_then_clean_up(
        self: Any, template: dict[str, Any], parameters: dict[str, Any] | None = None
    ) -> None:
        """As CloudFormation updates a stack: resources are created and updated first, and those
        the template no longer has are deleted only once that succeeded (moto deleted them first,
        so a failed update lost them). A failed custom resource Update fails the update here.
        A deleted resource is forgotten (moto kept it, so adding it back later created nothing)."""
        removed = {
            name: self._resource_json_map[name]
            for name in self._resource_json_map
            if name not in template["Resources"]
        }
        if removed:
            update_all(self, {**template, "Resources": {**template["Resources"], **removed}}, parameters)
            lifecycle.raise_update_failure(self.stack_id)
        update_all(self, template, parameters)
        for name in removed:
            self._parsed_resources.pop(name, None)
        lifecycle.raise_update_failure(self.stack_id)

    ResourceMap.update = update_then_clean_up

    def failed_creates(stack: Any) -> list[tuple[str, str]]:
        return lifecycle.failed_creates(
            [
                (stack.stack_id, logical_id)
                for logical_id, resource in stack.custom_resources.items()
                if not resource.is_created()
            ]
        )

    def start_rollback(stack: Any) -> None:
        """As on AWS after CreateStack has returned: in a thread."""
        if lifecycle.claim_rollback(stack.stack_id):
            threading.Thread(
                target=roll_back, args=(stack,), name=f"rollback-{stack.name}", daemon=True
            ).start()

    def roll_back(stack: Any) -> None:
        failures = []
        for logical_id, _ in failed_creates(stack):
            key, resource = (stack.stack_id, logical_id), stack.custom_resources[logical_id]
            failures.append(
                ResourceFailed(
                    logical_id,
                    resource.resource_type,
                    lifecycle.physical_id(key, resource.physical_resource_id),
                    "CREATE",
                    lifecycle.create_failure_reason(key),
                )
            )
        roll_back_create(stack, failures)

    create_resources = Stack.create_resources

    def create_resources_then_roll_back_failures(self: Any) -> None:
        """A resource that fails to create rolls the stack back at once (ResourceFailed); a
        custom resource whose function answers FAILED, once its answer and all the others are in."""
        try:
            create_resources(self)
        except ResourceFailed as failure:
            if lifecycle.claim_rollback(self.stack_id):
                roll_back_create(self, [failure])
            return
        pending = [
            (self.stack_id, logical_id)
            for logical_id, resource in self.custom_resources.items()
            if not resource.is_created()
        ]
        if lifecycle.all_created(self.stack_id, pending):
            start_rollback(self)

    Stack.create_resources = create_resources_then_roll_back_failures

    update_stack = Stack.update

    def update_rolling_back(
        self: Any,
        template: str,
        role_arn: str | None = None,
        parameters: dict[str, Any] | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        """A failed update is rolled back as on AWS: the previous template is applied again
        (moto updates each changed resource back, deletes the ones the update added) and the
        stack ends UPDATE_ROLLBACK_COMPLETE."""
        previous_template, previous_parameters = self.template, self.parameters
        try:
            update_stack(self, template, role_arn, parameters, tags)
        except (CustomResourceFailed, ResourceFailed) as error:
            if isinstance(error, CustomResourceFailed):
                error = custom_resource_failure(error)
            reason = record_update_failure(self, error)
            roll_back_update(self, reason, previous_template, previous_parameters)

    delete_stack = Stack.delete

    def delete_or_fail(self: Any) -> None:
        """A FAILED Delete leaves the stack DELETE_FAILED with the reason (moto answered 500)."""
        forget_outputs(self)
        try:
            delete_stack(self)
        except CustomResourceFailed as error:
            failure = custom_resource_failure(error, "DELETE")
            add_resource_event(
                self,
                failure.logical_id,
                failure.resource_type,
                failure.physical_id,
                "DELETE_FAILED",
                failure.reason,
            )
            self.status = "DELETE_FAILED"
            self._add_stack_event(
                "DELETE_FAILED", resource_status_reason=stack_reason("DELETE", [failure.logical_id])
            )

    Stack.update = update_rolling_back
    Stack.delete = delete_or_fail
