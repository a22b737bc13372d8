"""CloudFormation custom resources as on AWS: `Update` and `Delete` requests (moto sends `Create`
only) at a response URL that is this server's, on `localhost`, and a FAILED answer fails the
operation and rolls back a create or an update."""

from __future__ import annotations

import json
import os
import threading
import uuid
from typing import Any



def patch_custom_resource_host(port: int) -> None:
    from moto import settings

    os.environ["MOTO_PORT"] = str(port)
    settings.moto_server_host = lambda: "http://localhost"


def forget_outputs(stack: Any) -> None:
    """A stack being deleted or rolled back has no outputs. moto evaluates an output when it is
    described, and evaluating one that names a deleted resource created that resource again."""
    from moto.cloudformation.parsing import OutputMap

    stack.output_map = OutputMap(stack.resource_map, {}, stack.stack_id)


class CustomResourceFailed(Exception):
    """The custom resource's function answered FAILED (or never answered)."""


def patch_custom_resource_requests() -> None:
    """A custom resource gets `Update` (with `OldResourceProperties`) when its properties change
    and `Delete` when it is removed, and a FAILED answer fails the stack operation; moto only
    sent `Create` and ignored FAILED. Update and Delete are sent synchronously: the function
    answers at the response URL before its invocation returns. Custom resources are deleted
    before everything else of the stack, as their dependencies on their function and its role
    make CloudFormation do; moto's delete follows no dependency order."""
    from moto.awslambda.utils import get_backend as lambda_backend
    from moto.cloudformation import responses
    from moto.cloudformation.custom_model import CustomModel
    from moto.cloudformation.parsing import ResourceMap

    create = CustomModel.create_from_cloudformation_json.__func__

    def create_from_cloudformation_json(cls: Any, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, **kwargs: Any) -> Any:
        model = create(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        model.account_id, model.stack_id = account_id, kwargs["StackId"]
        model.resource_type, model.properties = kwargs["ResourceType"], cloudformation_json["Properties"]
        return model

    # Requests awaiting their answer, by (stack id, logical id): while a stack is deleted moto
    # keeps it in neither of its stack lists, so the answer cannot find it there.
    in_flight: dict[tuple[str, str], Any] = {}

    def send(model: Any, request_type: str, properties: dict[str, Any], **extra: Any) -> None:
        from moto import settings

        model.failure = None
        token = properties["ServiceToken"]
        event = {
            "RequestType": request_type, "ServiceToken": token,
            "ResponseURL": f"{settings.moto_server_host()}:{settings.moto_server_port()}"
                           f"/cloudformation_{model.region_name}/cfnresponse?stack={model.stack_id}",
            "StackId": model.stack_id, "RequestId": str(uuid.uuid4()), "LogicalResourceId": model.logical_id,
            "ResourceType": model.resource_type,
            "PhysicalResourceId": getattr(model, "returned_physical_id", None) or model.physical_resource_id,
            "ResourceProperties": properties, **extra,
        }
        answered = model.data, model._finished
        model._finished = False
        in_flight[(model.stack_id, model.logical_id)] = model
        try:
            lambda_backend(model.account_id, model.region_name).get_function(token).invoke(json.dumps(event), {}, {})
        finally:
            in_flight.pop((model.stack_id, model.logical_id), None)
        if model.failure is not None or not model._finished:
            model.data, model._finished = answered
            raise CustomResourceFailed(
                f"custom resource {model.logical_id}: {request_type} failed: {model.failure or 'no SUCCESS response'}")

    def update_from_cloudformation_json(cls: Any, original_resource: Any, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str, region_name: str) -> Any:
        properties = cloudformation_json["Properties"]
        if properties != original_resource.properties:
            try:
                send(original_resource, "Update", properties, OldResourceProperties=original_resource.properties)
            except CustomResourceFailed as error:
                # Raised after moto's loop (update_failing_on_custom_resources): moto retries a
                # resource that raises, which would send the same Update again.
                original_resource.update_failure = error
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
        """Keeps the PhysicalResourceId the function answered (later requests carry it, as on
        AWS), and takes the answers to Update and Delete: moto's handler would look the stack up
        where a deleted one is not, and mark an updated one CREATE_COMPLETE."""
        key = (self._get_param("StackId"), self._get_param("LogicalResourceId"))
        resource = in_flight.get(key)
        if resource is None:
            try:
                stack = self.cloudformation_backend.get_stack(key[0])
                created = stack.custom_resources.get(key[1])
            except Exception:  # noqa: BLE001 - moto's handler reports an unknown stack
                created = None
            if created is not None and self._get_param("PhysicalResourceId"):
                created.returned_physical_id = self._get_param("PhysicalResourceId")
            if created is not None and self._get_param("Status") == "FAILED":
                with rollback_lock:
                    created.failure = self._get_param("Reason") or "FAILED"
                    ready = getattr(stack, "resources_created", False)
                if ready:
                    start_rollback(stack)
            return process(self)
        if self._get_param("Status") == "SUCCESS":
            resource.returned_physical_id = self._get_param("PhysicalResourceId") or getattr(resource, "returned_physical_id", None)
            resource.set_data(self._get_param("Data") or {})
        else:
            resource.failure = self._get_param("Reason") or "FAILED"
        return 200, {"status": 200}, json.dumps("{}")

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
        for resource in self._parsed_resources.values():
            failure = getattr(resource, "update_failure", None)
            if failure is not None:
                resource.update_failure = None
                raise failure

    ResourceMap.update = update_failing_on_custom_resources

    # A FAILED answer to Create rolls the stack back, as AWS does; moto ignored it and the stack
    # stayed CREATE_IN_PROGRESS. The rollback starts once moto has created every resource (the
    # answer can come while it still creates the others), in a thread, as on AWS after
    # CreateStack has returned.
    rollback_lock = threading.Lock()

    def failed_custom_resources(stack: Any) -> list[Any]:
        return [r for r in stack.custom_resources.values() if getattr(r, "failure", None) and not r.is_created()]

    def start_rollback(stack: Any) -> None:
        with rollback_lock:
            if getattr(stack, "rolling_back", False):
                return
            stack.rolling_back = True
        threading.Thread(target=roll_back, args=(stack,), name=f"rollback-{stack.name}", daemon=True).start()

    def roll_back(stack: Any) -> None:
        failed = failed_custom_resources(stack)
        reason = "; ".join(f"custom resource {r.logical_id}: Create failed: {r.failure}" for r in failed)
        stack._add_stack_event("CREATE_FAILED", resource_status_reason=reason)
        stack.status = "ROLLBACK_IN_PROGRESS"
        forget_outputs(stack)
        stack._add_stack_event("ROLLBACK_IN_PROGRESS", resource_status_reason=
                               f"The following resource(s) failed to create: [{', '.join(r.logical_id for r in failed)}].")
        try:
            stack.resource_map.delete()
        except Exception as error:  # noqa: BLE001 - the stack says so, as on AWS
            stack.status = "ROLLBACK_FAILED"
            stack._add_stack_event("ROLLBACK_FAILED", resource_status_reason=str(error))
            return
        stack.status = "ROLLBACK_COMPLETE"
        stack._add_stack_event("ROLLBACK_COMPLETE")

    from moto.cloudformation.models import Stack

    create_resources = Stack.create_resources

    def create_resources_then_roll_back_failures(self: Any) -> None:
        create_resources(self)
        with rollback_lock:
            self.resources_created = True
            failed = bool(failed_custom_resources(self))
        if failed:
            start_rollback(self)

    Stack.create_resources = create_resources_then_roll_back_failures

    update_stack = Stack.update

    def update_rolling_back(self: Any, template: str, role_arn: str | None = None,
                            parameters: dict[str, Any] | None = None, tags: dict[str, str] | None = None) -> None:
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
