"""AWS::IAM::ManagedPolicy (moto has it, without a delete): deleting the stack deletes it too."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.registry import T, declare


def delete_managed_policy(policy: Any, account_id: str, region_name: str) -> None:
    """moto's AWS::IAM::ManagedPolicy has no delete: a deleted stack left it behind. Detached
    from every role, user and group first, as CloudFormation does."""
    backend = policy.backend
    for holder in [*backend.roles.values(), *backend.users.values(), *backend.groups.values()]:
        if policy.arn in holder.managed_policies:
            policy.detach_from(holder)
    backend.delete_policy(policy.arn)


@declare(
    "iam.managed-policy-delete",
    "deleting a stack deletes its AWS::IAM::ManagedPolicy",
    T("moto.iam.models:ManagedPolicy.delete", adds=True),
    fixes_moto="AWS::IAM::ManagedPolicy has no delete: a deleted stack leaves it behind",
)
def patch_managed_policy_delete() -> None:
    """Gives moto's ManagedPolicy the delete above."""
    from moto.iam.models import ManagedPolicy

    ManagedPolicy.delete = delete_managed_policy  # type: ignore[attr-defined]  # a method moto lacks
