"""moto's CloudFormation model classmethods extended one way: moto's own create, update or delete
still runs, and a hook of ours runs before or after it (AWS::Lambda::Function, AWS::IAM::Role,
Custom::*). The patch that calls these declares the classmethods as its targets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# moto's signatures of the two classmethods, as the patches' targets declare them.
CREATE_PARAMETERS = ("cls", "resource_name", "cloudformation_json", "account_id", "region_name", "kwargs")
UPDATE_PARAMETERS = (
    "cls",
    "original_resource",
    "new_resource_name",
    "cloudformation_json",
    "account_id",
    "region_name",
)

# hook(resource, cloudformation_json, account_id, region_name, kwargs): kwargs are moto's extra
# arguments to create (StackId, ResourceType, ...), empty for an update.
Hook = Callable[[Any, dict[str, Any], str, str, dict[str, Any]], None]


def after_create(model: Any, hook: Hook) -> None:
    """`model.create_from_cloudformation_json`: moto's, then `hook` on the resource it made."""
    create = model.create_from_cloudformation_json.__func__

    def create_from_cloudformation_json(
        cls: Any,
        /,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> Any:
        resource = create(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        hook(resource, cloudformation_json, account_id, region_name, kwargs)
        return resource

    model.create_from_cloudformation_json = classmethod(create_from_cloudformation_json)


def after_update(
    model: Any,
    hook: Hook,
    prepare: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None,
) -> None:
    """`model.update_from_cloudformation_json`: moto's, given `prepare(cls, cloudformation_json)`
    when there is one, then `hook` on the resource it answers."""
    update = model.update_from_cloudformation_json.__func__

    def update_from_cloudformation_json(
        cls: Any,
        original_resource: Any,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> Any:
        if prepare is not None:
            cloudformation_json = prepare(cls, cloudformation_json)
        resource = update(
            cls, original_resource, new_resource_name, cloudformation_json, account_id, region_name
        )
        hook(resource, cloudformation_json, account_id, region_name, {})
        return resource

    model.update_from_cloudformation_json = classmethod(update_from_cloudformation_json)


def before_delete(model: Any, hook: Callable[[str, str, str], None]) -> None:
    """`model.delete_from_cloudformation_json`: `hook(resource_name, account_id, region_name)`,
    then moto's."""
    delete = model.delete_from_cloudformation_json.__func__

    def delete_from_cloudformation_json(
        cls: Any, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str
    ) -> None:
        hook(resource_name, account_id, region_name)
        delete(cls, resource_name, cloudformation_json, account_id, region_name)

    model.delete_from_cloudformation_json = classmethod(delete_from_cloudformation_json)
