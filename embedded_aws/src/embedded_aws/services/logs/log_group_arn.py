"""`Fn::GetAtt LogGroup.Arn` as CloudFormation answers it on AWS."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.registry import T, declare, install


@declare(
    "logs.log-group-arn",
    "Fn::GetAtt LogGroup.Arn ends in :* as on AWS",
    T("moto.logs.models:LogGroup.get_cfn_attribute", "self", "attribute_name"),
    fixes_moto="Fn::GetAtt of AWS::Logs::LogGroup Arn lacks the trailing :*",
)
def patch_log_group_arn() -> None:
    """CloudFormation's `Fn::GetAtt LogGroup.Arn` ends in `:*` on AWS (it covers the group's
    streams); moto leaves it off, which would deny every stream a role is granted."""
    from moto.logs.models import LogGroup

    get_attribute = LogGroup.get_cfn_attribute

    def get_cfn_attribute(self: Any, attribute_name: str) -> Any:
        value = get_attribute(self, attribute_name)
        return f"{value}:*" if attribute_name == "Arn" else value

    install(LogGroup, "get_cfn_attribute", get_cfn_attribute)
