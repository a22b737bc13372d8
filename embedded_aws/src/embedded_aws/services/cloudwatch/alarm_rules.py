"""How CloudWatch decides a metric alarm's state from its datapoints: pure functions, no moto.

The rules follow "Configuring how CloudWatch alarms treat missing data" (AlarmThatSendsEmail):
an evaluation range a little longer than EvaluationPeriods (N) is fetched; with at least N real
datapoints the newest N decide (M out of N breaching: ALARM); with fewer, TreatMissingData fills
the gaps (as few filled points as possible); with none, `missing` means INSUFFICIENT_DATA and
`ignore` keeps the state. The "premature alarm" rule sends an alarm to ALARM when its oldest
breaching point among the newest N is at least M periods old and everything newer breaches or
is missing (`ignore` keeps its state instead).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

OK, ALARM, INSUFFICIENT_DATA = "OK", "ALARM", "INSUFFICIENT_DATA"

COMPARISONS = {
    "GreaterThanOrEqualToThreshold": lambda value, threshold: value >= threshold,
    "GreaterThanThreshold": lambda value, threshold: value > threshold,
    "LessThanThreshold": lambda value, threshold: value < threshold,
    "LessThanOrEqualToThreshold": lambda value, threshold: value <= threshold,
}
TREAT_MISSING = ("missing", "ignore", "breaching", "notBreaching")


# PutMetricAlarm (API reference, Period): "An alarm's total current evaluation period can be no
# longer than seven days, so Period multiplied by EvaluationPeriods can't be more than 604,800
# seconds"; with a Period under an hour, no longer than one day.
MAX_EVALUATION_SECONDS = 604_800
MAX_EVALUATION_SECONDS_UNDER_AN_HOUR = 86_400


def evaluation_window_error(period: int, evaluation_periods: int) -> str | None:
    """Why PutMetricAlarm refuses an alarm whose Period x EvaluationPeriods is too long; None if
    it is not (the message is ours: AWS's wording is not recorded)."""
    limit = MAX_EVALUATION_SECONDS if period >= 3600 else MAX_EVALUATION_SECONDS_UNDER_AN_HOUR
    total = period * evaluation_periods
    if total <= limit:
        return None
    return (
        f"Period x EvaluationPeriods is {period} x {evaluation_periods} = {total} seconds; an alarm's "
        f"evaluation period can be at most {limit} seconds"
        + (" with a Period under 3600 seconds" if period < 3600 else "")
    )


def evaluation_range(evaluation_periods: int) -> int:
    """How many periods are fetched. AWS fetches "more than N" (5 for N = 3) without a rule."""
    return evaluation_periods + 2


@dataclass(frozen=True)
class Rule:
    comparison: str
    threshold: float
    evaluation_periods: int
    datapoints_to_alarm: int
    treat_missing: str = "missing"

    def breaches(self, value: float) -> bool:
        breached: bool = COMPARISONS[self.comparison](value, self.threshold)
        return breached


@dataclass(frozen=True)
class Verdict:
    """`state` None keeps the current state. `evaluated` indexes the real datapoints that
    decided it; `filled` missing points were counted as TreatMissingData says."""

    state: str | None
    basis: str  # "threshold", "all-missing" or "premature"
    evaluated: tuple[int, ...] = ()
    filled: int = 0


def evaluate(rule: Rule, points: Sequence[float | None]) -> Verdict:
    """The state `points` (oldest first, one per period, None if missing) put the alarm in."""
    n, m = rule.evaluation_periods, rule.datapoints_to_alarm
    known = {i: value for i, value in enumerate(points) if value is not None}
    real = list(known)
    if not real:
        state = {"missing": INSUFFICIENT_DATA, "breaching": ALARM, "notBreaching": OK}.get(rule.treat_missing)
        return Verdict(state, "all-missing", (), n if state in (ALARM, OK) else 0)
    if len(real) >= n:
        chosen = tuple(real[-n:])
        breaching = sum(rule.breaches(known[i]) for i in chosen)
        return Verdict(ALARM if breaching >= m else OK, "threshold", chosen)
    breaching = sum(rule.breaches(known[i]) for i in real)
    if rule.treat_missing in ("breaching", "notBreaching"):
        filled = n - len(real)
        if rule.treat_missing == "breaching":
            breaching += filled
        return Verdict(ALARM if breaching >= m else OK, "threshold", tuple(real), filled)
    if premature_alarm(rule, points[-n:]):
        newest = tuple(i for i in real if i >= len(points) - n)
        return Verdict(ALARM if rule.treat_missing == "missing" else None, "premature", newest)
    return Verdict(ALARM if breaching >= m else OK, "threshold", tuple(real))


def premature_alarm(rule: Rule, window: Sequence[float | None]) -> bool:
    """The oldest breaching point of `window` (the newest N) is at least M periods old and every
    newer point breaches or is missing."""
    for index, value in enumerate(window):
        if value is not None and rule.breaches(value):
            newer = window[index + 1 :]
            return len(window) - index >= rule.datapoints_to_alarm and all(
                later is None or rule.breaches(later) for later in newer
            )
    return False


# --- statistics of one period ------------------------------------------------------------


def statistic(
    name: str, values: Sequence[float], aggregates: Sequence[tuple[float, float, float, float]] = ()
) -> float | None:
    """`name` (Sum, Average, Minimum, Maximum, SampleCount or a percentile pNN[.N]) over one
    period's raw `values` and (sum, minimum, maximum, sample count) `aggregates`; None if the
    period has no data, or the statistic needs raw values it does not have."""
    count = len(values) + sum(a[3] for a in aggregates)
    if not count:
        return None
    if name == "SampleCount":
        return float(count)
    if name in ("Sum", "Average"):
        total = math.fsum(values) + math.fsum(a[0] for a in aggregates)
        return total if name == "Sum" else total / count
    if name == "Minimum":
        return min([*values, *(a[1] for a in aggregates)])
    if name == "Maximum":
        return max([*values, *(a[2] for a in aggregates)])
    rank = percentile_rank(name)
    if rank is None or not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(rank / 100 * len(ordered)) - 1, 0)]


def percentile_rank(name: str) -> float | None:
    """99.9 for "p99.9"; None for anything that is not a plain percentile statistic."""
    if not name.startswith("p"):
        return None
    try:
        rank = float(name[1:])
    except ValueError:
        return None
    return rank if 0 <= rank <= 100 else None


def supported_statistic(name: str | None) -> bool:
    return name in ("Sum", "Average", "Minimum", "Maximum", "SampleCount") or (
        name is not None and percentile_rank(name) is not None
    )
