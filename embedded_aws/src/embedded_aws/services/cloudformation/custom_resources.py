"""CloudFormation custom resources as on AWS: `Update` and `Delete` requests (moto sends `Create`
only) at a response URL that is this server's, on `localhost`, and a FAILED answer fails the
operation and rolls back a create or an update."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from embedded_aws.services.cloudformation.lifecycle import (
    Answer,
    AnswerTo,
    CustomResourceFailed,
    CustomResourceLifecycle,
)


def patch_custom_resource_host(port: int) -> None:
    from moto import settings

    os.environ["MOTO_PORT"] = str(port)
    settings.moto_server_host = lambda: "http://localhost"


def forget_outputs(stack: Any) -> None:
    """A stack being deleted or rolled back has no outputs. moto evaluates an output when it is
    described, and evaluating one that names a deleted resource created that resource again."""
    from moto.cloudformation.parsing import OutputMap

    stack.output_map = OutputMap(stack.resource_map, {}, stack.stack_id)


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
    create = CustomModel.create_from_cloudformation_json.__func__

    def key(model: Any) -> tuple[str, str]:
        return model.stack_id, model.logical_id

    def create_from_cloudformation_json(
        cls: Any,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> Any:
        model = create(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        model.account_id, model.stack_id = account_id, kwargs["StackId"]
        model.resource_type, model.properties = kwargs["ResourceType"], cloudformation_json["Properties"]
        return model

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

    CustomModel.create_from_cloudformation_json = classmethod(create_from_cloudformation_json)
    CustomModel.update_from_cloudformation_json = classmethod(update_from_cloudformation_json)
    CustomModel.delete = delete

    process = responses.CloudFormationResponse.process_cfn_response

    def process_cfn_response(self: Any) -> Any:
        """Answers to Update and Delete are taken by the lifecycle (moto's handler would look the
        stack up where a deleted one is not, and mark an updated one CREATE_COMPLETE); answers to
        Create go on to moto's handler."""
        answered = (self._get_param("StackId"), self._get_param("LogicalResourceId"))
        answer = Answer(
            self._get_param("Status"),
            self._get_param("PhysicalResourceId") or None,
            self._get_param("Data") or {},
            self._get_param("Reason"),
        )
        whose = lifecycle.answer(answered, answer)
        if whose is AnswerTo.REQUEST:
            return 200, {"status": 200}, json.dumps("{}")
        if whose is AnswerTo.CREATE_THEN_ROLL_BACK:
            try:
                stack = self.cloudformation_backend.get_stack(answered[0])
            except Exception:  # noqa: BLE001 - moto's handler reports an unknown stack
                stack = None
            if stack is not None:
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

    def update_failing_on_custom_resources(self: Any, *args: Any, **kwargs: Any) -> None:
        update_all(self, *args, **kwargs)
        lifecycle.raise_update_failure(self.stack_id)

    ResourceMap.update = update_failing_on_custom_resources

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
        create_failed, rolling_back = lifecycle.rollback_reasons(failed_creates(stack))
        stack._add_stack_event("CREATE_FAILED", resource_status_reason=create_failed)
        stack.status = "ROLLBACK_IN_PROGRESS"
        forget_outputs(stack)
        stack._add_stack_event("ROLLBACK_IN_PROGRESS", resource_status_reason=rolling_back)
        try:
            stack.resource_map.delete()
        except Exception as error:  # noqa: BLE001 - the stack says so, as on AWS
            stack.status = "ROLLBACK_FAILED"
            stack._add_stack_event("ROLLBACK_FAILED", resource_status_reason=str(error))
            return
        stack.status = "ROLLBACK_COMPLETE"
        stack._add_stack_event("ROLLBACK_COMPLETE")

    create_resources = Stack.create_resources

    def create_resources_then_roll_back_failures(self: Any) -> None:
        create_resources(self)
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
        (moto updates each changed resource back) and the stack ends UPDATE_ROLLBACK_COMPLETE."""
        previous_template, previous_parameters = self.template, self.parameters
        try:
            update_stack(self, template, role_arn, parameters, tags)
        except CustomResourceFailed as error:
            self._add_stack_event("UPDATE_FAILED", resource_status_reason=str(error))
            self.status = "UPDATE_ROLLBACK_IN_PROGRESS"
            self._add_stack_event("UPDATE_ROLLBACK_IN_PROGRESS", resource_status_reason=str(error))
            self.template = previous_template
            self._parse_template()
            try:
                self.resource_map.update(self.template_dict, previous_parameters)
            except Exception as rollback_error:  # noqa: BLE001 - the stack says so, as on AWS
                self.status = "UPDATE_ROLLBACK_FAILED"
                self._add_stack_event("UPDATE_ROLLBACK_FAILED", resource_status_reason=str(rollback_error))
                return
            self.output_map = self._create_output_map()
            self.status = "UPDATE_ROLLBACK_COMPLETE"
            self._add_stack_event("UPDATE_ROLLBACK_COMPLETE")

    delete_stack = Stack.delete

    def delete_or_fail(self: Any) -> None:
        """A FAILED Delete leaves the stack DELETE_FAILED with the reason (moto answered 500)."""
        forget_outputs(self)
        try:
            delete_stack(self)
        except CustomResourceFailed as error:
            self.status = "DELETE_FAILED"
            self._add_stack_event("DELETE_FAILED", resource_status_reason=str(error))

    Stack.update = update_rolling_back
    Stack.delete = delete_or_fail
