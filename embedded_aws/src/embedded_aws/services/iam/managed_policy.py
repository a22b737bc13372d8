"""AWS::IAM::ManagedPolicy (moto has it, without a delete): deleting the stack deletes it too."""

from __future__ import annotations

from typing import Any


def delete_managed_policy(policy: Any, account_id: str, region_name: str) -> None:
    """moto's AWS::IAM::ManagedPolicy has no delete: a deleted stack left it behind. Detached
    from every role, user and group first, as CloudFormation does."""
    backend = policy.backend
    for holder in [*backend.roles.values(), *backend.users.values(), *backend.groups.values()]:
        if policy.arn in holder.managed_policies:
            policy.detach_from(holder)
    backend.delete_policy(policy.arn)
