"""A template's Rules evaluated as CloudFormation evaluates them before it creates or updates a
stack: pure functions, no moto.

"Rules syntax" (CloudFormation user guide): each rule has an optional RuleCondition and
Assertions; when the condition holds (or there is none), every assertion's Assert must be true,
else the request is refused with the assertion's AssertDescription. "Rule functions": Fn::And,
Fn::Or, Fn::Not, Fn::Equals, Fn::Contains, Fn::EachMemberEquals, Fn::EachMemberIn, and Ref to a
parameter (or a pseudo parameter). Fn::RefAll and Fn::ValueOf, which look up the account's EC2
resources, are not evaluated: a rule that uses them is refused in one line naming the function,
never passed (docs/local-fidelity.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class RuleFailed(Exception):
    """An assertion did not hold, or a rule cannot be evaluated; the message is the answer."""


def check(template: Mapping[str, Any], values: Mapping[str, Any]) -> None:
    """Raise RuleFailed with the first failing assertion's description; `values`: every
    parameter's value (SSM parameters already resolved) and the pseudo parameters."""
    for name, rule in (template.get("Rules") or {}).items():
        condition = rule.get("RuleCondition")
        if condition is not None and not _truth(evaluate(condition, values), name):
            continue
        for assertion in rule.get("Assertions") or []:
            if not _truth(evaluate(assertion.get("Assert"), values), name):
                raise RuleFailed(
                    assertion.get("AssertDescription") or f"Template error: rule {name} assertion failed"
                )


def evaluate(expression: Any, values: Mapping[str, Any]) -> Any:
    """The value of a rule expression: a literal, a list, a Ref or a rule function."""
    if isinstance(expression, list):
        return [evaluate(item, values) for item in expression]
    if not isinstance(expression, Mapping):
        return expression
    if len(expression) != 1:
        raise RuleFailed(f"Template error: a rule function takes one key, found {sorted(expression)}")
    ((function, arguments),) = expression.items()
    if function == "Ref":
        if arguments not in values:
            raise RuleFailed(f"Template error: rule refers to unknown parameter {arguments}")
        return values[arguments]
    if function not in _FUNCTIONS:
        raise RuleFailed(f"Template error: the local CloudFormation cannot evaluate rule function {function}")
    return _FUNCTIONS[function](evaluate(arguments, values))


def _truth(value: Any, rule: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise RuleFailed(f"Template error: rule {rule} does not evaluate to a boolean")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _contains(arguments: list[Any]) -> bool:
    members, value = arguments
    return str(value) in [str(member) for member in _as_list(members)]


def _each_member_equals(arguments: list[Any]) -> bool:
    members, value = arguments
    return all(str(member) == str(value) for member in _as_list(members))


def _each_member_in(arguments: list[Any]) -> bool:
    members, allowed = arguments
    return all(str(member) in [str(a) for a in _as_list(allowed)] for member in _as_list(members))


def _equals(arguments: list[Any]) -> bool:
    left, right = arguments
    return str(left) == str(right) if not isinstance(left, list) else left == right


_FUNCTIONS = {
    "Fn::And": lambda arguments: all(_truth(a, "Fn::And") for a in arguments),
    "Fn::Or": lambda arguments: any(_truth(a, "Fn::Or") for a in arguments),
    "Fn::Not": lambda arguments: not _truth(_as_list(arguments)[0], "Fn::Not"),
    "Fn::Equals": _equals,
    "Fn::Contains": _contains,
    "Fn::EachMemberEquals": _each_member_equals,
    "Fn::EachMemberIn": _each_member_in,
}
