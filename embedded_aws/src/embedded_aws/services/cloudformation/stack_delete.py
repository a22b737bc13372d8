"""Deleting a stack whose resources were deleted out of band, as CloudFormation does."""

from __future__ import annotations

import logging
from typing import Any

from embedded_aws.compat.registry import T, declare, install

log = logging.getLogger("embedded_aws.server")


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


@declare(
    "cloudformation.delete-resources-gone",
    "a stack whose resources were deleted by hand deletes",
    T("moto.cloudformation.parsing:ResourceMap._delete_resource", "self", "parsed_resource", "resource_json"),
    fixes_moto="a stack delete stops at the first resource already deleted out of band",
)
def patch_stack_delete_of_resources_gone() -> None:
    """Deleting a stack whose queue, mapping or log group was deleted by hand succeeds on AWS;
    moto stopped at the first missing resource and kept the stack half-deleted."""
    from moto.cloudformation.parsing import ResourceMap

    delete = ResourceMap._delete_resource

    def _delete_resource(self: Any, parsed_resource: Any, resource_json: dict[str, Any]) -> None:
        try:
            delete(self, parsed_resource, resource_json)
        except Exception as error:  # only "already gone" is swallowed
            if not resource_already_gone(error):
                raise
            log.info(
                "stack delete: %s was already gone (%s)",
                getattr(parsed_resource, "logical_resource_id", "?"),
                type(error).__name__,
            )

    install(ResourceMap, "_delete_resource", _delete_resource)
