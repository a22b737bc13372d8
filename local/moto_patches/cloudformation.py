"""CloudFormation as the stack relies on it: `Fn::GetAtt LogGroup.Arn` ends in `:*`, a stack
whose resources were deleted out of band deletes, and a custom resource's response URL is this
server's, on `localhost`."""

from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger("local.emulator")


def patch_log_group_arn() -> None:
    """CloudFormation's `Fn::GetAtt LogGroup.Arn` ends in `:*` on AWS (it covers the group's
    streams); moto leaves it off, which would deny every stream a role is granted."""
    from moto.logs.models import LogGroup

    get_attribute = LogGroup.get_cfn_attribute

    def get_cfn_attribute(self: Any, attribute_name: str) -> Any:
        value = get_attribute(self, attribute_name)
        return f"{value}:*" if attribute_name == "Arn" else value

    LogGroup.get_cfn_attribute = get_cfn_attribute



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


def patch_stack_delete_of_resources_gone() -> None:
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


def patch_custom_resource_host(port: int) -> None:
    from moto import settings

    os.environ["MOTO_PORT"] = str(port)
    settings.moto_server_host = lambda: "http://localhost"
