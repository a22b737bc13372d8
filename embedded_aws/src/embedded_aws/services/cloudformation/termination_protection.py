"""Stack termination protection as CloudFormation enforces it: UpdateTerminationProtection turns it
on or off and answers the StackId; DeleteStack of a protected stack is refused and the stack, its
status included, stays as it was.

AWS's rules ("Protect CloudFormation stacks from being deleted", CloudFormation User Guide; the
UpdateTerminationProtection API reference): protection is off unless CreateStack (or a later
UpdateTerminationProtection) turns it on; it can be set on a stack in any status except
DELETE_IN_PROGRESS and DELETE_COMPLETE. The refusal's words, as AWS answers them (botocore output
quoted in rackspace/runway#199 and ekristen/aws-nuke#821, a 400): ValidationError "Stack [<name>]
cannot be deleted while TerminationProtection is enabled". LocalStack recorded DescribeStacks'
EnableTerminationProtection true and then false after the two calls on AWS
(tests/aws/services/cloudformation/api/test_stacks.snapshot.json, test_update_termination_protection).

moto already stores CreateStack's EnableTerminationProtection and answers it in DescribeStacks;
it has no UpdateTerminationProtection and its DeleteStack never refuses.
"""

from __future__ import annotations

from typing import Any

from embedded_aws.compat import new_objects
from embedded_aws.compat.registry import T, declare, install, state

GONE = ("DELETE_IN_PROGRESS", "DELETE_COMPLETE")


def refusal(stack_name: str) -> str:
    """DeleteStack's message for a protected stack (`stack_name` as the caller gave it)."""
    return f"Stack [{stack_name}] cannot be deleted while TerminationProtection is enabled"


def live_stack(backend: Any, name_or_id: str) -> Any:
    """The stack of that name or id that has not been deleted, or None."""
    if name_or_id in backend.stacks:
        return backend.stacks[name_or_id]
    return next((stack for stack in backend.stacks.values() if stack.name == name_or_id), None)


def _validation_error(message: str) -> Exception:
    from moto.cloudformation.exceptions import CloudFormationError

    return CloudFormationError("ValidationError", message)


@declare(
    "cloudformation.termination-protection",
    "UpdateTerminationProtection; DeleteStack of a protected stack refused in AWS's words",
    T("moto.cloudformation.responses:CloudFormationResponse.update_termination_protection", adds=True),
    T("moto.cloudformation.responses:CloudFormationResponse.delete_stack", "self"),
    state("moto.cloudformation.models:Stack.enable_termination_protection", new_objects.stack),
    fixes_moto=(
        "UpdateTerminationProtection is not implemented, and DeleteStack deletes a stack created with "
        "EnableTerminationProtection (AWS: ValidationError, 'Stack [<name>] cannot be deleted while "
        "TerminationProtection is enabled')"
    ),
)
def patch_termination_protection() -> None:
    """UpdateTerminationProtection added to moto's CloudFormation responses; DeleteStack checks
    the stack's protection before moto deletes it."""
    from moto.cloudformation.responses import CloudFormationResponse
    from moto.core.responses import ActionResult

    delete_stack = CloudFormationResponse.delete_stack

    def update_termination_protection(self: Any) -> ActionResult:
        name = self._get_param("StackName")
        enable = self._get_bool_param("EnableTerminationProtection")
        if enable is None:  # the SDKs check it first; moto's words for a missing parameter
            from moto.cloudformation.exceptions import MissingParameterError

            raise MissingParameterError("EnableTerminationProtection")
        stack = live_stack(self.cloudformation_backend, name)
        if stack is None or stack.status in GONE:
            raise _validation_error(f"Stack with id {name} does not exist")
        stack.enable_termination_protection = bool(enable)
        return ActionResult({"StackId": stack.stack_id})

    def protected_delete_stack(self: Any) -> Any:
        name = self._get_param("StackName")
        stack = live_stack(self.cloudformation_backend, name)
        if stack is not None and stack.enable_termination_protection:
            raise _validation_error(refusal(name))
        return delete_stack(self)

    CloudFormationResponse.update_termination_protection = update_termination_protection  # type: ignore[attr-defined]
    install(CloudFormationResponse, "delete_stack", protected_delete_stack)
