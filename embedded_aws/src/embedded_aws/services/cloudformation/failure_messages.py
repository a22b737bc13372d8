"""What CloudFormation says when a resource fails, with no moto in it: a service's error turned into
the resource event's ResourceStatusReason, and the stack's reasons for rolling back.

AWS's resource handlers report a failure as `Resource handler returned message: "<message>"
(RequestToken: <uuid>, HandlerErrorCode: <code>)`; a name that is taken reads "Resource of type
'<type>' with identifier '<name>' already exists." (recorded on AWS: serverless/serverless#12312
for AWS::Logs::LogGroup; aws-solutions/amazon-marketing-cloud-uploader-from-aws#167). The stack's
own event names the failed resources: "The following resource(s) failed to create: [<ids>]."
(serverless/serverless#3237; LocalStack's test_stacks.snapshot.json, recorded on AWS, for
"failed to delete").

services/cloudformation/resource_failures.py wires this into moto.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_ALREADY_EXISTS = ("alreadyexists", "already exist", "queuenameexists", "entityalreadyexists")
# (text found in the error's code or message, HandlerErrorCode), first match wins.
_HANDLER_CODES = (
    (("notfound", "nosuch", "nonexistent", "does not exist", "doesnotexist"), "NotFound"),
    (("accessdenied", "unauthorized", "not authorized"), "AccessDenied"),
    (("throttl", "toomanyrequests", "rate exceeded"), "Throttling"),
    (("limitexceeded", "quota"), "ServiceLimitExceeded"),
    (("resourceinuse", "conflict", "inprogress"), "ResourceConflict"),
    (("validation", "invalid", "malformed", "missing", "unsupported"), "InvalidRequest"),
)


@dataclass(frozen=True)
class ServiceError:
    """A service's error as its API reports it: code and message."""

    code: str
    message: str
    from_service: bool = True  # False: a failure of the emulator itself, not a service's answer


class ResourceFailed(Exception):
    """A resource of the stack could not be created or updated; carries its event's reason."""

    def __init__(self, logical_id: str, resource_type: str, physical_id: str, action: str, reason: str):
        super().__init__(f"{logical_id} ({resource_type}): {action}_FAILED: {reason}")
        self.logical_id, self.resource_type, self.physical_id = logical_id, resource_type, physical_id
        self.action, self.reason = action, reason


def service_error(error: BaseException) -> ServiceError:
    """The code and message of a service's error, whichever way moto raised it (a service
    exception with `code`, a REST error with `error_type`); anything else is the emulator's own."""
    message = getattr(error, "message", None)
    error_type = getattr(error, "error_type", None)
    code = error_type if isinstance(error_type, str) and error_type else getattr(error, "code", None)
    if isinstance(code, str) and code and isinstance(message, str):
        return ServiceError(code.split("#")[-1], message)
    return ServiceError(type(error).__name__, str(error) or type(error).__name__, from_service=False)


def handler_error_code(error: ServiceError) -> str:
    """The HandlerErrorCode an AWS resource handler gives for a service's error."""
    if not error.from_service:
        return "InternalFailure"
    text = f"{error.code} {error.message}".lower()
    if any(marker in text for marker in _ALREADY_EXISTS):
        return "AlreadyExists"
    for markers, handler_code in _HANDLER_CODES:
        if any(marker in text for marker in markers):
            return handler_code
    return "GeneralServiceException"


def status_reason(
    error: BaseException,
    resource_type: str,
    identifier: str,
    request_token: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> str:
    """The ResourceStatusReason of a resource whose handler failed with `error`."""
    found = service_error(error)
    code = handler_error_code(found)
    if code == "AlreadyExists":
        message = f"Resource of type '{resource_type}' with identifier '{identifier}' already exists."
    else:
        message = found.message
    return f'Resource handler returned message: "{message}" (RequestToken: {request_token()}, HandlerErrorCode: {code})'


def stack_reason(action: str, logical_ids: Iterable[str]) -> str:
    """The reason of the stack's ROLLBACK_IN_PROGRESS (action CREATE) or
    UPDATE_ROLLBACK_IN_PROGRESS (action UPDATE) event."""
    listed = ", ".join(logical_ids)
    return f"The following resource(s) failed to {action.lower()}: [{listed}]."
