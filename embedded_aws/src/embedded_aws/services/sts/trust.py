"""A role's trust policy evaluated for sts:AssumeRole as IAM evaluates it: pure functions, no moto.

"IAM JSON policy elements: Principal": an account principal (`123456789012` or
`arn:aws:iam::123456789012:root`) delegates to the account, whose identities then need an
identity-based policy that allows sts:AssumeRole on the role ("Granting a user permissions to
switch roles"); a user or role ARN names that identity (a role also matches its sessions); a
service principal names a service, which no signed caller is. "Policy evaluation logic": role
trust policies are an exception to same-account evaluation, they must allow the principal
explicitly; an explicit Deny in either policy denies.

Conditions: the operators resource_policies.py evaluates, plus `Null`. A statement whose
condition uses another operator cannot be evaluated here: an Allow then allows nothing and a
Deny denies, so an unknown condition never lets a caller in (docs/local-fidelity.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from embedded_aws.services.iam.resource_policies import _OPERATOR, _conditions_hold

ALLOW, DENY, IMPLICIT_DENY = "Allow", "Deny", "ImplicitDeny"

_ARN = re.compile(r"^arn:(?P<partition>[^:]+):(?P<service>iam|sts)::(?P<account>\d{12}):(?P<rest>.+)$")


@dataclass(frozen=True)
class Caller:
    """Who asks to assume a role: an IAM identity (`arn` of a user, a role or a role session) or
    a service (`service`, e.g. cloudformation.amazonaws.com)."""

    arn: str | None = None
    service: str | None = None
    context: Mapping[str, str] = field(default_factory=dict)  # condition keys, e.g. sts:ExternalId

    @property
    def account(self) -> str | None:
        match = _ARN.match(self.arn or "")
        return match["account"] if match else None


@dataclass(frozen=True)
class Trust:
    """The trust policy's decision: DENY, ALLOW or IMPLICIT_DENY, and whether the Allow named the
    caller itself (then no identity policy is needed) or only its account."""

    decision: str
    names_caller: bool = False

    def allows(self, identity: str) -> bool:
        """Whether AssumeRole goes ahead, given the identity policies' decision for the caller."""
        if self.decision != ALLOW or identity == DENY:
            return False
        return self.names_caller or identity == ALLOW


def evaluate(policy: str | Mapping[str, Any] | None, caller: Caller, action: str = "sts:AssumeRole") -> Trust:
    """The trust policy's decision for `caller` asking `action` of the role."""
    document = json.loads(policy) if isinstance(policy, str) else (policy or {})
    statements = document.get("Statement", [])
    if isinstance(statements, Mapping):
        statements = [statements]
    allowed_by: set[str] = set()
    for statement in statements:
        # moto's CloudFormation leaves `Fn::If [..., Ref AWS::NoValue]` statements as null.
        if not isinstance(statement, Mapping) or not _action_matches(statement, action):
            continue
        match = principal_match(statement.get("Principal"), caller)
        if match is None:
            continue
        effect = statement.get("Effect")
        if not _conditions_apply(statement.get("Condition") or {}, caller, deny=effect == DENY):
            continue
        if effect == DENY:
            return Trust(DENY)
        if effect == ALLOW:
            allowed_by.add(match)
    if not allowed_by:
        return Trust(IMPLICIT_DENY)
    return Trust(ALLOW, names_caller="caller" in allowed_by)


def principal_match(principal: Any, caller: Caller) -> str | None:
    """How a statement's Principal matches the caller: "caller" (its own ARN, or its role's),
    "account" (its account, or everyone), or None."""
    if principal == "*":
        return "account" if caller.arn else None
    if not isinstance(principal, Mapping):
        return None
    if caller.service:
        return "caller" if caller.service in _listed(principal.get("Service")) else None
    found = None
    for name in _listed(principal.get("AWS")):
        if name == "*" or name == caller.account or name == f"arn:aws:iam::{caller.account}:root":
            found = found or "account"
        elif _names(name, caller.arn or ""):
            return "caller"
    return found


def _names(principal: str, caller_arn: str) -> bool:
    """A principal ARN names the caller: the same ARN, or the role of a role session."""
    if principal == caller_arn:
        return True
    wanted, given = _ARN.match(principal), _ARN.match(caller_arn)
    if not (wanted and given) or wanted["account"] != given["account"]:
        return False
    session = re.match(r"^assumed-role/(?P<role>[^/]+)/[^/]+$", given["rest"])
    role = re.match(r"^role/(?:.*/)?(?P<role>[^/]+)$", wanted["rest"])
    return bool(session and role and wanted["service"] == "iam" and session["role"] == role["role"])


def _action_matches(statement: Mapping[str, Any], action: str) -> bool:
    import fnmatch

    if "Action" in statement:
        return any(fnmatch.fnmatchcase(action.lower(), a.lower()) for a in _listed(statement["Action"]))
    if "NotAction" in statement:
        return not any(
            fnmatch.fnmatchcase(action.lower(), a.lower()) for a in _listed(statement["NotAction"])
        )
    return False


def _conditions_apply(conditions: Mapping[str, Mapping[str, Any]], caller: Caller, *, deny: bool) -> bool:
    """Whether a statement's conditions hold; one this module cannot evaluate holds for a Deny and
    fails for an Allow."""
    given = {key.lower(): value for key, value in caller.context.items()}
    rest = {}
    for operator, keys in conditions.items():
        if operator == "Null":
            for key, wanted in keys.items():
                absent = key.lower() not in given
                if absent != (str(wanted).lower() == "true"):
                    return False
        elif _OPERATOR.match(operator):
            rest[operator] = keys
        else:
            return deny
    return _conditions_hold(rest, caller.context)


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])
