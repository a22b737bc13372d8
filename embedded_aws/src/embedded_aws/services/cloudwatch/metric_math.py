"""Metric math for alarms, the part this emulator evaluates: pure functions, no moto.

An alarm on metric math has one query that returns data (an expression) and the queries it
names, metric queries or other expressions ("Metric math syntax and functions", CloudWatch user
guide: an expression uses the Id of a metric or of another expression, `m1+m2`, `e1-MIN(e1)`).
Supported here: numbers, query ids, `+ - * /` with the usual precedence and parentheses, and
`DIFF(...)` and `RATE(...)` of any of those (DIFF is each value minus the one before it in the
time series; RATE is that change per second). As in CloudWatch, a time series holds only the
periods that have data, so DIFF compares each datapoint with the previous datapoint, and the
first one of the series has none. Arithmetic of two series is computed where both have data
(how CloudWatch aligns series that miss different periods is not documented). Anything else is
`None` from `parse`, and such alarms keep their state (docs/local-fidelity.md).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

FUNCTIONS = ("DIFF", "RATE")
_TOKEN = re.compile(r"\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<name>[A-Za-z_]\w*)|(?P<op>[-+*/()]))")


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Ref:
    id: str  # a metric query's id once resolved; any query's id as parsed


@dataclass(frozen=True)
class Call:
    function: str  # DIFF or RATE
    argument: Node


@dataclass(frozen=True)
class Binary:
    operator: str
    left: Node
    right: Node


Node = Number | Ref | Call | Binary
Series = list[float | None]


def _tokens(text: str) -> list[tuple[str, str]] | None:
    found, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            return None
        kind = match.lastgroup or ""
        found.append((kind, match[kind]))
        position = match.end()
    return found


# Every alarm's expressions are read again at each tick of the evaluator: the
# trees are immutable, so each text is parsed once.
@functools.lru_cache(maxsize=1024)
def parse(text: str | None) -> Node | None:
    """The expression's tree, or None when it uses anything this emulator does not evaluate."""
    tokens = _tokens(text or "")
    if not tokens:
        return None
    position = 0

    def peek() -> tuple[str, str] | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> tuple[str, str]:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def binary(operand: Callable[[], Node | None], operators: str) -> Node | None:
        left = operand()
        while (
            left is not None and (token := peek()) is not None and token[0] == "op" and token[1] in operators
        ):
            take()
            right = operand()
            if right is None:
                return None
            left = Binary(token[1], left, right)
        return left

    def factor() -> Node | None:
        token = peek()
        if token is None:
            return None
        kind, value = take()
        if kind == "number":
            return Number(float(value))
        if kind == "op" and value == "(":
            inner = binary(term, "+-")
            return inner if inner is not None and peek() == ("op", ")") and take() else None
        if kind != "name":
            return None
        if peek() == ("op", "("):
            if value not in FUNCTIONS:
                return None
            take()
            inner = binary(term, "+-")
            return Call(value, inner) if inner is not None and peek() == ("op", ")") and take() else None
        return Ref(value) if value[0].islower() else None

    def term() -> Node | None:
        return binary(factor, "*/")

    tree = binary(term, "+-")
    return tree if tree is not None and position == len(tokens) else None


def resolve(
    node: Node, expressions: Mapping[str, str | None], metrics: set[str], seen: frozenset[str] = frozenset()
) -> Node | None:
    """`node` with every reference to another expression replaced by that expression's tree, so
    only metric query ids remain; None if a reference is unknown, unsupported or circular."""
    if isinstance(node, Number):
        return node
    if isinstance(node, Ref):
        if node.id in metrics:
            return node
        if node.id in seen or node.id not in expressions:
            return None
        inner = parse(expressions[node.id])
        return resolve(inner, expressions, metrics, seen | {node.id}) if inner is not None else None
    if isinstance(node, Call):
        argument = resolve(node.argument, expressions, metrics, seen)
        return Call(node.function, argument) if argument is not None else None
    left, right = (
        resolve(node.left, expressions, metrics, seen),
        resolve(node.right, expressions, metrics, seen),
    )
    return Binary(node.operator, left, right) if left is not None and right is not None else None


def metric_ids(node: Node) -> set[str]:
    if isinstance(node, Ref):
        return {node.id}
    if isinstance(node, Call):
        return metric_ids(node.argument)
    if isinstance(node, Binary):
        return metric_ids(node.left) | metric_ids(node.right)
    return set()


def extra_periods(node: Node) -> int:
    """Periods before the evaluation range the expression needs (a predecessor per DIFF/RATE)."""
    if isinstance(node, Call):
        return 1 + extra_periods(node.argument)
    if isinstance(node, Binary):
        return max(extra_periods(node.left), extra_periods(node.right))
    return 0


def _change(function: str, points: Series, period_seconds: float) -> Series:
    result: Series = []
    previous: float | None = None
    for value in points:
        if value is None:
            result.append(None)
            continue
        result.append(
            None
            if previous is None
            else (value - previous)
            if function == "DIFF"
            else (value - previous) / period_seconds
        )
        previous = value
    return result


def _arithmetic(operator: str, left: float | None, right: float | None) -> float | None:
    if left is None or right is None:
        return None
    if operator == "+":
        return left + right
    if operator == "-":
        return left - right
    if operator == "*":
        return left * right
    return left / right if right else None  # a division by zero: no value (not documented)


def evaluate(
    node: Node, series: Mapping[str, Sequence[float | None]], period_seconds: float, length: int
) -> Series:
    """The value per period of a resolved expression, over metric series of `length` periods
    (oldest first, None where no data)."""
    if isinstance(node, Number):
        return [node.value] * length
    if isinstance(node, Ref):
        return list(series[node.id])
    if isinstance(node, Call):
        return _change(node.function, evaluate(node.argument, series, period_seconds, length), period_seconds)
    left = evaluate(node.left, series, period_seconds, length)
    right = evaluate(node.right, series, period_seconds, length)
    return [_arithmetic(node.operator, a, b) for a, b in zip(left, right)]
