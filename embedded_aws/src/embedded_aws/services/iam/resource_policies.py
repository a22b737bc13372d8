"""Resource-based policies (an SNS topic's, an SQS queue's) evaluated as IAM evaluates them:
pure functions, no moto.

"Policy evaluation logic" (IAM user guide): an explicit Deny in any statement that applies wins;
otherwise an Allow that applies allows; otherwise the request is implicitly denied. A statement
applies when its Principal, Action and Resource (or their Not* forms) match and every condition
holds: each operator's keys must all match (AND), a key matches when any of its values does
(OR); a key absent from the request fails the condition, except for negated operators, which
then hold, and for `...IfExists`, which then holds too. Supported operators: String(Not)Equals,
String(Not)Like, Arn(Not)Equals, Arn(Not)Like, Bool, each with IfExists. A statement with any
other operator does not apply (an Allow then allows nothing, a Deny denies nothing); local-
fidelity.md says so.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ALLOW, DENY, IMPLICIT_DENY = "Allow", "Deny", "ImplicitDeny"


@dataclass(frozen=True)
class Principal:
    kind: str  # "Service" or "AWS"
    name: str  # cloudwatch.amazonaws.com, or an IAM ARN
    account: str | None = None  # the IAM principal's account


@dataclass(frozen=True)
class Request:
    principal: Principal
    action: str  # sns:Publish
    resource: str
    context: Mapping[str, str] = field(default_factory=dict)  # condition keys, any case


def decide(policy: str | Mapping[str, Any] | None, request: Request) -> str:
    """ALLOW, DENY (an explicit Deny applies) or IMPLICIT_DENY."""
    document = json.loads(policy) if isinstance(policy, str) else (policy or {})
    statements = document.get("Statement", [])
    if isinstance(statements, Mapping):
        statements = [statements]
    effects = {statement.get("Effect") for statement in statements if applies(statement, request)}
    if DENY in effects:
        return DENY
    return ALLOW if ALLOW in effects else IMPLICIT_DENY


def applies(statement: Mapping[str, Any], request: Request) -> bool:
    return (
        _principal_matches(statement, request.principal)
        and _matches(statement, "Action", request.action, case_sensitive=False)
        and _matches(statement, "Resource", request.resource, case_sensitive=True)
        and _conditions_hold(statement.get("Condition", {}), request.context)
    )


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _like(pattern: str, value: str, case_sensitive: bool) -> bool:
    if not case_sensitive:
        pattern, value = pattern.lower(), value.lower()
    return fnmatch.fnmatchcase(value, pattern)


def _matches(statement: Mapping[str, Any], key: str, value: str, *, case_sensitive: bool) -> bool:
    if key in statement:
        return any(_like(p, value, case_sensitive) for p in _listed(statement[key]))
    if f"Not{key}" in statement:
        return not any(_like(p, value, case_sensitive) for p in _listed(statement[f"Not{key}"]))
    return False


def _principal_matches(statement: Mapping[str, Any], principal: Principal) -> bool:
    if "Principal" not in statement:
        return False  # NotPrincipal is not evaluated here: such a statement does not apply
    given = statement["Principal"]
    if given == "*" or "*" in _listed(given.get("AWS")):
        return True  # everyone, service principals included
    for name in _listed(given.get(principal.kind)):
        if name == "*":
            return True
        if principal.kind == "Service" and name == principal.name:
            return True
        if principal.kind == "AWS" and (
            name == principal.name or name in (principal.account, f"arn:aws:iam::{principal.account}:root")
        ):
            return True
    return False


_OPERATOR = re.compile(
    r"^(?P<base>String(?:Not)?(?:Equals|Like)|Arn(?:Not)?(?:Equals|Like)|Bool)(?P<if>IfExists)?$"
)


def _conditions_hold(conditions: Mapping[str, Mapping[str, Any]], context: Mapping[str, str]) -> bool:
    given = {key.lower(): value for key, value in context.items()}
    for operator, keys in conditions.items():
        match = _OPERATOR.match(operator)
        if not match:
            return False
        base, negated = match["base"], "Not" in match["base"]
        for key, wanted in keys.items():
            value = given.get(key.lower())
            if value is None:
                if negated or match["if"]:
                    continue
                return False
            if not _holds(base, _listed(wanted) if not isinstance(wanted, bool) else [str(wanted)], value):
                return False
    return True


def _holds(base: str, wanted: list[str], value: str) -> bool:
    if base == "Bool":
        return any(str(w).lower() == value.lower() for w in wanted)
    like = base.endswith("Like")
    found = any(_like(w, value, True) if like else w == value for w in wanted)
    return not found if "Not" in base else found
