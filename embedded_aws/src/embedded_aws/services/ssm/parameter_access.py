"""The resource IAM checks an SSM Parameter Store request against: the parameter's ARN,
`arn:aws:ssm:<region>:<account>:parameter/<name without its leading slash>` ("Actions, resources,
and condition keys for AWS Systems Manager"). moto checked `*`, so CDK's deploy role, allowed
`ssm:GetParameter` on the bootstrap-version parameter alone, was refused reading it."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.registry import T, declare


def parameter_arn(name: str, region: str, account: str) -> str:
    if name.startswith("arn:"):
        return name
    return f"arn:aws:ssm:{region}:{account}:parameter/{name.lstrip('/')}"


def request_resource(params: dict[str, Any], region: str, account: str) -> str:
    """The ARN a request names: its `Name`, or its one `Names` entry; `*` otherwise (a request
    naming several parameters is checked against `*`, see docs/local-fidelity.md)."""
    names = [params["Name"]] if params.get("Name") else list(params.get("Names") or [])
    return parameter_arn(str(names[0]), region, account) if len(names) == 1 else "*"


@declare(
    "ssm.parameter-resource",
    "SSM Parameter Store requests authorized against the parameter's ARN",
    T("moto.ssm.responses:SimpleSystemManagerResponse._determine_resource", adds=True),
    fixes_moto="SSM requests are checked against '*': a policy scoped to one parameter's ARN allows nothing",
)
def patch_parameter_resource() -> None:
    import json

    from moto.ssm.responses import SimpleSystemManagerResponse

    def _determine_resource(self: Any) -> str:
        try:
            params = json.loads(self.body or "{}")
        except (TypeError, ValueError):
            params = {}
        return request_resource(params if isinstance(params, dict) else {}, self.region, self.current_account)

    SimpleSystemManagerResponse._determine_resource = _determine_resource  # type: ignore[attr-defined]
