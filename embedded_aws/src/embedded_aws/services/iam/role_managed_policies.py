"""An `AWS::IAM::Role`'s `ManagedPolicyArns` attached as CloudFormation attaches them, detached
before the role is deleted. moto's CloudFormation ignored the property, so CDK's deploy role
lacked `AWSCloudFormationReadOnlyAccess` (DescribeStacks, GetTemplate) once the CLI used it.

An AWS managed policy (`arn:aws:iam::aws:policy/...`) is taken from the copy of AWS's policies
moto ships, when a template first names it (moto loads none of them by default: all of them cost
a few seconds at every start). A policy that exists in neither place is left unattached
(docs/local-fidelity.md)."""

from __future__ import annotations

import functools
import json
from typing import Any

from embedded_aws.compat.cloudformation_models import (
    CREATE_PARAMETERS,
    UPDATE_PARAMETERS,
    after_create,
    after_update,
    before_delete,
)
from embedded_aws.compat.registry import T, declare

AWS_POLICY = "arn:aws:iam::aws:policy/"


@functools.cache
def _aws_policies() -> dict[str, Any]:
    from moto.iam.aws_managed_policies import aws_managed_policies_data

    policies: dict[str, Any] = json.loads(aws_managed_policies_data)
    return policies


def find_policy(backend: Any, arn: str) -> Any:
    """The managed policy `arn` names in moto's IAM, an AWS one added on first use; or None."""
    from moto.iam.models import AWSManagedPolicy

    if arn in backend.managed_policies:
        return backend.managed_policies[arn]
    if not arn.startswith(AWS_POLICY):
        return None
    name = arn.rsplit("/", 1)[-1]
    data = _aws_policies().get(name)
    if data is None:
        return None
    policy = AWSManagedPolicy.from_data(name, backend.account_id, "us-east-1", data)
    if policy.arn != arn:  # the same name under another path
        return None
    backend.managed_policies[arn] = policy
    return policy


def attach_listed(backend: Any, role: Any, arns: Any) -> None:
    """Attach exactly the listed managed policies that exist to `role`, detaching the others."""
    wanted = [arn for arn in (arns or []) if isinstance(arn, str)]
    for arn in list(role.managed_policies):
        if arn not in wanted:
            role.managed_policies[arn].detach_from(role)
    for arn in wanted:
        policy = find_policy(backend, arn)
        if policy is not None and arn not in role.managed_policies:
            policy.attach_to(role)


@declare(
    "iam.role-managed-policies",
    (
        "a CloudFormation role's ManagedPolicyArns attached (AWS's own policies from moto's copy), "
        "detached before the role is deleted"
    ),
    T("moto.iam.models:Role.create_from_cloudformation_json", *CREATE_PARAMETERS),
    T("moto.iam.models:Role.update_from_cloudformation_json", *UPDATE_PARAMETERS),
    T(
        "moto.iam.models:Role.delete_from_cloudformation_json",
        "cls",
        "resource_name",
        "cloudformation_json",
        "account_id",
        "region_name",
    ),
    fixes_moto="AWS::IAM::Role ignores ManagedPolicyArns: a role CloudFormation creates lacks its managed policies",
)
def patch_role_managed_policies() -> None:
    from moto.iam.models import Role, iam_backends
    from moto.utilities.utils import get_partition

    def backend(account_id: str, region_name: str) -> Any:
        return iam_backends[account_id][get_partition(region_name)]

    def attach(
        role: Any, cloudformation_json: dict[str, Any], account_id: str, region_name: str, _: Any
    ) -> None:
        arns = cloudformation_json.get("Properties", {}).get("ManagedPolicyArns")
        attach_listed(backend(account_id, region_name), role, arns)

    def detach(resource_name: str, account_id: str, region_name: str) -> None:
        for role in list(backend(account_id, region_name).roles.values()):
            if role.name == resource_name:
                attach_listed(backend(account_id, region_name), role, [])

    after_create(Role, attach)
    after_update(Role, attach)
    before_delete(Role, detach)
