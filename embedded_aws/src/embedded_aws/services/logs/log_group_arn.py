"""`Fn::GetAtt LogGroup.Arn` as CloudFormation answers it on AWS."""

from __future__ import annotations

from typing import Any


def patch_log_group_arn() -> None:
    """CloudFormation's `Fn::GetAtt LogGroup.Arn` ends in `:*` on AWS (it covers the group's
    streams); moto leaves it off, which would deny every stream a role is granted."""
    from moto.logs.models import LogGroup

    get_attribute = LogGroup.get_cfn_attribute

    def get_cfn_attribute(self: Any, attribute_name: str) -> Any:
        value = get_attribute(self, attribute_name)
        return f"{value}:*" if attribute_name == "Arn" else value

    LogGroup.get_cfn_attribute = get_cfn_attribute
