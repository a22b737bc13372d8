"""Metric math for alarms, the part this emulator evaluates: pure functions, no moto.

An alarm on an expression has one query that returns data (the expression) and metric queries
it names. Supported expressions: a query id alone, `DIFF(id)` and `RATE(id)` ("Metric math
syntax and functions", CloudWatch user guide: DIFF is each value minus the one before it in the
time series; RATE is that change per second). As in CloudWatch, a time series holds only the
periods that have data, so DIFF compares each datapoint with the previous datapoint, and the
first one of the series has none. Anything else is `None` from `parse`, and such alarms keep
their state (docs/local-fidelity.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_CALL = re.compile(r"^\s*(?:(?P<function>[A-Z_]+)\s*\(\s*(?P<inner>[a-z]\w*)\s*\)|(?P<bare>[a-z]\w*))\s*$")
FUNCTIONS = ("DIFF", "RATE")


@dataclass(frozen=True)
class Expression:
    function: str | None  # DIFF, RATE, or None for the query itself
    metric_id: str

    def extra_periods(self) -> int:
        """Periods before the evaluation range the expression needs (a predecessor for DIFF)."""
        return 0 if self.function is None else 1


def parse(text: str | None) -> Expression | None:
    match = _CALL.match(text or "")
    if not match:
        return None
    if match["bare"]:
        return Expression(None, match["bare"])
    if match["function"] not in FUNCTIONS:
        return None
    return Expression(match["function"], match["inner"])


def apply(
    expression: Expression, points: Sequence[float | None], period_seconds: float
) -> list[float | None]:
    """The expression's value per period of `points` (oldest first, None where no data)."""
    if expression.function is None:
        return list(points)
    result: list[float | None] = []
    previous: float | None = None
    for value in points:
        if value is None:
            result.append(None)
            continue
        if previous is None:
            result.append(None)
        else:
            change = value - previous
            result.append(change if expression.function == "DIFF" else change / period_seconds)
        previous = value
    return result
