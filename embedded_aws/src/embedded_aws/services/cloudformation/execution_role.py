"""The execution role a CreateStack, UpdateStack or CreateChangeSet names (RoleARN), checked as
CloudFormation checks it before it starts: the caller may pass it (iam:PassRole, "Granting a
user permissions to pass a role to an AWS service") and its trust policy lets
cloudformation.amazonaws.com assume it ("AWS CloudFormation service role"), else ValidationError
"Role <arn> is invalid or cannot be assumed".

What the stack then does (each resource created, updated or deleted) is not authorized again
against the role's policies: moto's backends act directly (docs/local-fidelity.md)."""

from __future__ import annotations

from typing import Any

from embedded_aws.services.sts.trust import IMPLICIT_DENY, Caller, evaluate

SERVICE = "cloudformation.amazonaws.com"


def cannot_be_assumed(role_arn: str, trust_policy: str | None) -> str | None:
    """CloudFormation's refusal when the role (its trust policy, None: no such role) does not let
    CloudFormation assume it; None when it does."""
    if trust_policy is not None and evaluate(trust_policy, Caller(service=SERVICE)).allows(IMPLICIT_DENY):
        return None
    return f"Role {role_arn} is invalid or cannot be assumed"


def trust_policy(role_arn: str, account: str) -> str | None:
    """The trust policy of the role `role_arn` names in moto's IAM, or None without such a role."""
    from moto.iam.exceptions import NotFoundException
    from moto.iam.models import iam_backends

    partition = role_arn.split(":")[1] if role_arn.count(":") >= 5 else "aws"
    try:
        role: Any = iam_backends[account][partition].get_role_by_arn(role_arn)
    except (NotFoundException, KeyError):
        return None
    document: str | None = role.assume_role_policy_document
    return document
