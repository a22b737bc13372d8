"""The alarm evaluator: every metric alarm moto holds, evaluated once per (scaled) period.

For each alarm it buckets the metric's datapoints into the evaluation range (periods aligned to
the epoch, ending at the last closed one), computes the alarm's statistic per bucket, and lets
`alarm_rules.evaluate` decide; a different state goes through `AlarmStates.change`. A new or
re-put alarm is evaluated at once. Supported: single-metric alarms with Statistic or a
percentile ExtendedStatistic, alarms on the metric math `metric_math.py` evaluates (arithmetic
of metric queries and other expressions, DIFF and RATE), and the four threshold comparisons;
other metric math, anomaly-detection and composite alarms are left alone (they keep the state
they have).
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from embedded_aws.services.cloudwatch.alarm_messages import (
    alarm_period,
    returns_data,
    state_reason,
    state_reason_data,
)
from embedded_aws.services.cloudwatch.alarm_rules import (
    COMPARISONS,
    TREAT_MISSING,
    Rule,
    evaluate,
    evaluation_range,
    statistic,
    supported_statistic,
)
from embedded_aws.services.cloudwatch.alarm_state import AlarmStates
from embedded_aws.services.cloudwatch.clock import Clock, bucket_end
from embedded_aws.services.cloudwatch.metric_math import Node, extra_periods, metric_ids, parse, resolve
from embedded_aws.services.cloudwatch.metric_math import evaluate as math_evaluate
from embedded_aws.services.cloudwatch.metrics import MetricIndex, metric_key

log = logging.getLogger("embedded_aws.cloudwatch")

MAX_GRACE_SECONDS = 1.0  # how long after a period closes late datapoints may still arrive for it


def math_of(alarm: Any) -> tuple[Node, dict[str, Any]] | None:
    """(the returned expression with every reference resolved to metric queries, those metric
    queries by id) of an alarm on metric math this evaluator supports; None otherwise."""
    returned = [q for q in alarm.metric_data_queries if returns_data(q)]
    if len(returned) != 1 or returned[0].metric_stat is not None:
        return None
    metrics = {q.id: q for q in alarm.metric_data_queries if q.metric_stat is not None}
    expressions = {q.id: q.expression for q in alarm.metric_data_queries if q.metric_stat is None}
    parsed = parse(returned[0].expression)
    tree = (
        resolve(parsed, expressions, set(metrics), frozenset({returned[0].id}))
        if parsed is not None
        else None
    )
    if tree is None or not metric_ids(tree):
        return None
    used = {name: metrics[name] for name in metric_ids(tree)}
    if not all(supported_statistic(query.metric_stat.stat) for query in used.values()):
        return None
    return tree, used


def supported(alarm: Any) -> bool:
    if alarm.rule is not None or alarm.comparison_operator not in COMPARISONS:
        return False
    if alarm.metric_data_queries:
        return math_of(alarm) is not None
    return alarm.metric_name is not None and supported_statistic(alarm.extended_statistic or alarm.statistic)


def rule_of(alarm: Any) -> Rule:
    periods = int(alarm.evaluation_periods)
    treat_missing = alarm.treat_missing_data if alarm.treat_missing_data in TREAT_MISSING else "missing"
    if alarm.namespace == "AWS/DynamoDB":
        treat_missing = "ignore"  # AWS: alarms on DynamoDB metrics always ignore missing data
    return Rule(
        alarm.comparison_operator,
        float(alarm.threshold),
        periods,
        int(alarm.datapoints_to_alarm or periods),
        treat_missing,
    )


class AlarmEvaluator:
    def __init__(self, clock: Clock, states: AlarmStates) -> None:
        self.clock = clock
        self.states = states
        self._indexes: dict[int, MetricIndex] = {}
        self._indexes_lock = threading.Lock()
        self._evaluated: dict[str, tuple[Any, float]] = {}  # alarm ARN -> (alarm object, range end)

    def index(self, backend: Any) -> MetricIndex:
        """The one index of a backend (its offsets into moto's list must not diverge)."""
        with self._indexes_lock:
            index = self._indexes.get(id(backend))
            if index is None or index.backend is not backend:
                index = self._indexes[id(backend)] = MetricIndex(backend)
            return index

    def backends(self) -> list[Any]:
        from moto.cloudwatch.models import cloudwatch_backends

        return [backend for _, _, backend in list(cloudwatch_backends.iter_backends())]

    def tick(self, now: float) -> None:
        """Evaluate every alarm whose period closed since it was last evaluated."""
        present = set()
        for backend in self.backends():
            index = self.index(backend)
            index.sync()
            for alarm in list(backend.alarms.values()):
                present.add(alarm.alarm_arn)
                if not supported(alarm):
                    continue
                width = self.clock.wall(alarm_period(alarm))
                end = bucket_end(now - min(width / 5, MAX_GRACE_SECONDS), width)
                last = self._evaluated.get(alarm.alarm_arn)
                if last is not None and last[0] is alarm and last[1] >= end:
                    continue
                self._evaluated[alarm.alarm_arn] = (alarm, end)
                try:
                    self.evaluate(backend, index, alarm, end, width, now)
                except Exception:  # one bad alarm must not stop the others
                    log.exception("evaluating alarm %s failed", alarm.name)
        for arn in set(self._evaluated) - present:
            del self._evaluated[arn]

    def evaluate(
        self, backend: Any, index: MetricIndex, alarm: Any, end: float, width: float, now: float
    ) -> None:
        rule = rule_of(alarm)
        periods = evaluation_range(rule.evaluation_periods)
        math = math_of(alarm) if alarm.metric_data_queries else None
        extra = extra_periods(math[0]) if math else 0
        starts = [end - (periods + extra - i) * width for i in range(periods + extra)]
        if math:
            tree, queries = math
            series, counts = {}, []
            for name, query in sorted(queries.items()):
                metric = query.metric_stat.metric
                key = metric_key(
                    metric.namespace, metric.metric_name, ((d.name, d.value) for d in metric.dimensions)
                )
                series[name], found = self._series(
                    index, key, query.metric_stat.stat, query.metric_stat.unit, starts, width
                )
                counts.append(found)
            points = math_evaluate(tree, series, alarm_period(alarm), len(starts))
            samples = [min(column) for column in zip(*counts)]
            starts, points, samples = starts[extra:], points[extra:], samples[extra:]
        else:
            key = metric_key(
                alarm.namespace, alarm.metric_name, ((d.name, d.value) for d in alarm.dimensions)
            )
            points, samples = self._series(
                index, key, alarm.extended_statistic or alarm.statistic, alarm.unit, starts, width
            )
        verdict = evaluate(rule, points)
        if verdict.state is None or verdict.state == alarm.state_value:
            return
        reason = state_reason(rule, verdict, points, starts, alarm.state_value)
        data = state_reason_data(alarm, verdict, points, starts, samples, now)
        self.states.change(backend, alarm, verdict.state, reason, json.dumps(data, separators=(",", ":")))

    @staticmethod
    def _series(
        index: MetricIndex, key: Any, name: str, unit: str | None, starts: list[float], width: float
    ) -> tuple[list[float | None], list[float]]:
        """The statistic `name` of the metric `key` per period starting at `starts`, and the
        sample count of each."""
        points, samples = [], []
        for start in starts:
            found = index.points(key, start, start + width, unit)
            values = [p.value for p in found if p.value is not None]
            aggregates = [p.aggregate for p in found if p.aggregate is not None]
            points.append(statistic(name, values, aggregates))
            samples.append(float(len(values) + sum(a[3] for a in aggregates)))
        return points, samples
