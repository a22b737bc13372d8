"""Event filtering for the local Lambda host's SQS event source mappings (FilterCriteria).

The Lambda service evaluates a mapping's filter patterns on each record before it invokes: a
record that matches none of them is not sent to the function, and for SQS the message is
deleted ("Control which events Lambda sends to your function", invocation-eventfiltering.html;
"Using event filtering with an Amazon SQS event source", with-sqs-filtering.html). The rule
syntax is EventBridge's; this module implements the part those pages document:

- exact values: strings, numbers, `true`/`false`, `null`, `""` (empty); a list of values is an OR
- `{"prefix": s}`, `{"suffix": s}`, `{"equals-ignore-case": s}` (strings only)
- `{"anything-but": value | [values] | {"prefix": s} | {"suffix": s}}`
- `{"numeric": [op, n, (op, n)]}` with `=`, `<`, `<=`, `>`, `>=` (numbers only)
- `{"exists": true | false}` (leaf fields)
- `{"$or": [pattern, ...]}` at any object level
- nested objects; an array in the record matches when any of its elements does

Numbers compare by their written form for equality, as the Lambda page says (300, 300.0 and
3.0e2 differ); numeric ranges compare values. `body` is matched as parsed JSON when the pattern
gives it as an object and as a plain string when the pattern gives it as a list; a body whose
format does not fit the pattern's (JSON vs plain string) does not match, as the SQS page's table
says. Anything else (wildcards, `cidr`, `anything-but` with `equals-ignore-case` or `wildcard`) is
refused when the mapping is created or updated, rather than silently treated as a mismatch (which
would delete messages).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_FILTERS = 5  # the default quota per event source mapping
MAX_PATTERN_LENGTH = 4096
_NUMERIC_OPERATORS = {"=", "<", "<=", ">", ">="}
_LEAF_OPERATORS = {"prefix", "suffix", "equals-ignore-case", "anything-but", "numeric", "exists"}


class FilterError(ValueError):
    """A FilterCriteria the host cannot evaluate; the message names the filter and the reason.
    AWS answers every invalid pattern with one message, `Invalid filter pattern definition.`
    (services/awslambda/mappings.py); the detail here is for the host's log and the tests."""


class UnsupportedFilter(FilterError):
    """A rule AWS evaluates that this host does not implement: refused, with a message that
    says so, rather than evaluated wrongly."""


# EventBridge operators AWS evaluates in a filter that this host does not.
_UNIMPLEMENTED_OPERATORS = {"wildcard", "cidr"}


@dataclass(frozen=True)
class Number:
    """A JSON number as written (equality) and as a value (numeric ranges)."""

    text: str

    @property
    def value(self) -> float:
        return float(self.text)


def _loads(text: str) -> Any:
    return json.loads(text, parse_int=Number, parse_float=Number, parse_constant=lambda _: None)


# --- validation -----------------------------------------------------------------------------


def compile_filters(filter_criteria: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The parsed patterns of a mapping's FilterCriteria; [] when it has none. Raises
    FilterError for what AWS refuses (too many filters, a pattern that is not a JSON object)
    and for rules this host does not implement."""
    filters = (filter_criteria or {}).get("Filters") or []
    if len(filters) > MAX_FILTERS:
        raise FilterError(f"FilterCriteria has {len(filters)} filters; at most {MAX_FILTERS} are allowed")
    patterns = []
    for number, entry in enumerate(filters, 1):
        text = (entry or {}).get("Pattern")
        if not isinstance(text, str) or not text.strip():
            raise FilterError(f"filter {number}: Pattern is missing")
        if len(text) > MAX_PATTERN_LENGTH:
            raise FilterError(f"filter {number}: Pattern is longer than {MAX_PATTERN_LENGTH} characters")
        try:
            pattern = _loads(text)
        except ValueError as error:
            raise FilterError(f"filter {number}: Pattern is not valid JSON ({error})") from None
        if not isinstance(pattern, dict) or not pattern:
            raise FilterError(f"filter {number}: Pattern must be a non-empty JSON object")
        _check_object(pattern, f"filter {number}")
        patterns.append(pattern)
    return patterns


def _check_object(pattern: dict[str, Any], where: str) -> None:
    for key, value in pattern.items():
        here = f"{where}: {key}"
        if key == "$or":
            if (
                not isinstance(value, list)
                or len(value) < 2
                or not all(isinstance(p, dict) and p for p in value)
            ):
                raise FilterError(f"{here} must be a list of at least two patterns")
            for option in value:
                _check_object(option, here)
        elif isinstance(value, dict):
            if not value:
                raise FilterError(f"{here} is an empty object")
            _check_object(value, here)
        elif isinstance(value, list):
            if not value:
                raise FilterError(f"{here} is an empty list of rules")
            for rule in value:
                _check_rule(rule, here)
        else:
            raise FilterError(
                f"{here} must be a list of rules or an object, not {json.dumps(_as_json(value))}"
            )


def _check_rule(rule: Any, where: str) -> None:
    if rule is None or isinstance(rule, (str, bool, Number)):
        return
    if not isinstance(rule, dict) or len(rule) != 1:
        raise FilterError(
            f"{where}: rule {json.dumps(_as_json(rule))} is not a value or a one-key operator object"
        )
    ((operator, operand),) = rule.items()
    if operator in _UNIMPLEMENTED_OPERATORS:
        raise UnsupportedFilter(f"{where}: operator {operator!r} is not supported by the local Lambda host")
    if operator not in _LEAF_OPERATORS:
        raise FilterError(f"{where}: {operator!r} is not a filter operator")
    if operator in ("prefix", "suffix", "equals-ignore-case") and not isinstance(operand, str):
        raise FilterError(f"{where}: {operator} takes a string")
    if operator == "exists" and not isinstance(operand, bool):
        raise FilterError(f"{where}: exists takes true or false")
    if operator == "numeric":
        _check_numeric(operand, where)
    if operator == "anything-but":
        if isinstance(operand, dict):
            if len(operand) == 1 and next(iter(operand)) in ("equals-ignore-case", "wildcard"):
                raise UnsupportedFilter(
                    f"{where}: anything-but with {next(iter(operand))} is not supported "
                    "by the local Lambda host"
                )
            if (
                len(operand) != 1
                or next(iter(operand)) not in ("prefix", "suffix")
                or not isinstance(next(iter(operand.values())), str)
            ):
                raise FilterError(f"{where}: anything-but takes values, or one prefix or suffix string")
        else:
            values = operand if isinstance(operand, list) else [operand]
            if not values or not all(isinstance(v, (str, Number)) for v in values):
                raise FilterError(f"{where}: anything-but takes strings or numbers")


def _check_numeric(operand: Any, where: str) -> None:
    if not isinstance(operand, list) or len(operand) not in (2, 4):
        raise FilterError(f"{where}: numeric takes [op, number] or [op, number, op, number]")
    for index in range(0, len(operand), 2):
        operator, number = operand[index], operand[index + 1]
        if operator not in _NUMERIC_OPERATORS or not isinstance(number, Number):
            raise FilterError(f"{where}: numeric {json.dumps(_as_json(operand))} is not op/number pairs")
    if len(operand) == 4 and ("=" in (operand[0], operand[2])):
        raise FilterError(f"{where}: numeric '=' cannot be part of a range")


def _as_json(value: Any) -> Any:
    """A parsed pattern back to plain JSON types, for messages."""
    if isinstance(value, Number):
        return value.value
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_json(item) for item in value]
    return value


# --- matching -------------------------------------------------------------------------------

_MISSING = object()


def record_matches(record: dict[str, Any], patterns: list[dict[str, Any]]) -> bool:
    """Whether the Lambda service would send this SQS record to the function: no patterns, or
    at least one that matches (filters are ORed)."""
    if not patterns:
        return True
    view = _record_view(record)
    return any(_match_body_format(pattern, record) and _match_object(pattern, view) for pattern in patterns)


def _record_view(record: dict[str, Any]) -> dict[str, Any]:
    """The record as the patterns see it: values re-parsed so numbers keep their written form,
    and `body` twice, as a string and (when it is JSON) parsed."""
    view: dict[str, Any] = _loads(json.dumps({key: value for key, value in record.items() if key != "body"}))
    view["body"] = record.get("body", "")
    return view


def _body_json(body: str) -> Any:
    try:
        return _loads(body)
    except ValueError:
        return _MISSING


def _match_body_format(pattern: dict[str, Any], record: dict[str, Any]) -> bool:
    """with-sqs-filtering.html: a JSON pattern for `body` needs a JSON body, a plain-string
    pattern a body that is not JSON; a mismatch drops the message. No `body` key: no check."""
    if "body" not in pattern:
        return True
    is_json = _body_json(record.get("body", "")) is not _MISSING
    return is_json if isinstance(pattern["body"], dict) else not is_json


def _match_object(pattern: dict[str, Any], event: Any) -> bool:
    for key, rules in pattern.items():
        if key == "$or":
            if not any(_match_object(option, event) for option in rules):
                return False
            continue
        value = event.get(key, _MISSING) if isinstance(event, dict) else _MISSING
        if key == "body" and isinstance(rules, dict) and isinstance(value, str):
            value = _body_json(value)
        if isinstance(rules, dict):
            if value is _MISSING or not any(_match_object(rules, item) for item in _as_list(value)):
                return False
        elif not _match_leaf(rules, value):
            return False
    return True


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _match_leaf(rules: list[Any], value: Any) -> bool:
    for rule in rules:
        if isinstance(rule, dict) and "exists" in rule:
            present = value is not _MISSING
            if present == rule["exists"]:
                return True
            continue
        if value is _MISSING:
            continue
        if any(_match_rule(rule, item) for item in _as_list(value)):
            return True
    return False


def _match_rule(rule: Any, value: Any) -> bool:
    if not isinstance(rule, dict):
        return _same(rule, value)
    ((operator, operand),) = rule.items()
    if operator == "prefix":
        return isinstance(value, str) and value.startswith(operand)
    if operator == "suffix":
        return isinstance(value, str) and value.endswith(operand)
    if operator == "equals-ignore-case":
        return isinstance(value, str) and value.casefold() == operand.casefold()
    if operator == "numeric":
        return isinstance(value, Number) and _in_range(operand, value.value)
    if operator == "anything-but":
        if isinstance(operand, dict):
            ((kind, text),) = operand.items()
            if not isinstance(value, str):
                return False
            return not (value.startswith(text) if kind == "prefix" else value.endswith(text))
        excluded = operand if isinstance(operand, list) else [operand]
        return (
            value is not None
            and not isinstance(value, (bool, dict))
            and not any(_same(item, value) for item in excluded)
        )
    return False


def _same(rule: Any, value: Any) -> bool:
    if rule is None or isinstance(rule, bool):
        return value is rule
    if isinstance(rule, Number):
        return isinstance(value, Number) and value.text == rule.text
    return isinstance(value, str) and value == rule


def _in_range(operand: list[Any], number: float) -> bool:
    for index in range(0, len(operand), 2):
        operator, bound = operand[index], operand[index + 1].value
        if not {
            "=": number == bound,
            "<": number < bound,
            "<=": number <= bound,
            ">": number > bound,
            ">=": number >= bound,
        }[operator]:
            return False
    return True
