"""An API caller as IAM evaluates it against a resource with a policy of its own (a topic, a
queue): its identity policies' decision, the condition keys it brings, and the decision of both
policies together.

"Policy evaluation logic" (IAM user guide), within one account: an explicit Deny in either
policy denies; otherwise an Allow in either allows; otherwise the request is implicitly denied.
Condition keys: aws:PrincipalArn (a role session's is its role's ARN), aws:PrincipalAccount, and
aws:SecureTransport, "true" for loopback HTTP as for the service principals' own requests
(docs/local-fidelity.md)."""

from __future__ import annotations

import re
from typing import Any

from embedded_aws.services.iam.resource_policies import ALLOW, DENY, IMPLICIT_DENY, Principal, Request, decide

_ROLE_SESSION = re.compile(
    r"^arn:(?P<partition>[^:]+):sts::(?P<account>\d+):assumed-role/(?P<role>[^/]+)/[^/]+$"
)


def principal_arn(caller_arn: str) -> str:
    """aws:PrincipalArn of a caller: a role session's is the role's ARN, any other its own."""
    match = _ROLE_SESSION.match(caller_arn)
    return f"arn:{match['partition']}:iam::{match['account']}:role/{match['role']}" if match else caller_arn


def identity_decision(access_key: Any, action: str, resource: str) -> str:
    """ALLOW, DENY or IMPLICIT_DENY from a moto access key's identity policies."""
    from moto.iam.access_control import IAMPolicy, PermissionResult

    found = IMPLICIT_DENY
    for policy in access_key.collect_policies():
        result = IAMPolicy(policy).is_action_permitted(action, resource)
        if result == PermissionResult.DENIED:
            return DENY
        if result == PermissionResult.PERMITTED:
            found = ALLOW
    return found


def resource_decision(policy: str | None, access_key: Any, account: str, action: str, resource: str) -> str:
    """The resource policy's decision for the caller of `access_key`."""
    arn = principal_arn(access_key.arn)
    return decide(
        policy,
        Request(
            Principal("AWS", arn, account),
            action,
            resource,
            {"aws:PrincipalArn": arn, "aws:PrincipalAccount": account, "aws:SecureTransport": "true"},
        ),
    )


def decision(identity: str, resource: str) -> tuple[bool, str]:
    """(allowed, why not) from the identity policies' and the resource policy's decisions; the
    reason is IAM's wording, with `{action}` to fill in."""
    if identity == DENY:
        return False, "with an explicit deny in an identity-based policy"
    if resource == DENY:
        return False, "with an explicit deny in a resource-based policy"
    if ALLOW in (identity, resource):
        return True, ""
    return False, "because no identity-based policy allows the {action} action"


def refusal(
    access_key: Any, account: str, action: str, resource: str, policy: str | None, spelled: str | None = None
) -> str | None:
    """None when the caller may act on `resource` (whose own policy is `policy`), else IAM's
    denial: `User: <arn> is not authorized to perform: <action> on resource: <resource> <why>`,
    with the action `spelled` as the service spells it there."""
    identity = identity_decision(access_key, action, resource)
    on_resource = (
        resource_decision(policy, access_key, account, action, resource) if resource != "*" else IMPLICIT_DENY
    )
    allowed, why = decision(identity, on_resource)
    if allowed:
        return None
    named = spelled or action
    return (
        f"User: {access_key.arn} is not authorized to perform: {named} on resource: {resource} "
        + why.format(action=named)
    )
