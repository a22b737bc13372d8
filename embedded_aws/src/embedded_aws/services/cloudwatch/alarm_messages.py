"""What CloudWatch writes when an alarm changes state, shaped like AWS's own output: StateReason
and StateReasonData, alarm history items, and the alarm notification sent to SNS.

AWS documents none of these shapes; they follow real payloads (docs/local-fidelity.md). Every
function here is pure: `alarm` is anything with moto's Alarm attributes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Any

from embedded_aws.services.cloudwatch.alarm_rules import ALARM, OK, Rule, Verdict

PHRASES = {
    "GreaterThanOrEqualToThreshold": "greater than or equal to",
    "GreaterThanThreshold": "greater than",
    "LessThanThreshold": "less than",
    "LessThanOrEqualToThreshold": "less than or equal to",
}
FILLED_AS = {"breaching": "Breaching", "notBreaching": "NonBreaching"}


def utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def iso(epoch: float) -> str:
    """2020-04-23T13:18:50.528+0000, as alarm payloads write times."""
    moment = utc(epoch)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+0000"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _was(count: int) -> str:
    return "was" if count == 1 else "were"


def state_reason(
    rule: Rule, verdict: Verdict, points: Sequence[float | None], starts: Sequence[float], old_state: str
) -> str:
    """`Threshold Crossed: 1 out of the last 1 datapoints [5.0 (29/11/26 13:00:00)] was greater
    than or equal to the threshold (1.0) (minimum 1 datapoint for OK -> ALARM transition).`"""
    n, m = rule.evaluation_periods, rule.datapoints_to_alarm
    if verdict.basis == "all-missing":
        if verdict.state in (ALARM, OK):
            return (
                f"Threshold Crossed: no datapoints were received for {_plural(n, 'period')} and "
                f"{_plural(n, 'missing datapoint')} {_was(n)} treated as [{FILLED_AS[rule.treat_missing]}]."
            )
        return f"Insufficient Data: {_plural(n, 'datapoint')} {_was(n)} unknown."
    alarming = verdict.state == ALARM
    newest_first = sorted(verdict.evaluated, reverse=True)
    # `evaluated` indexes real datapoints only, so no value here is None.
    shown = [i for i in newest_first if (value := points[i]) is not None and rule.breaches(value) == alarming]
    listed = ", ".join(f"{points[i]!r} ({utc(starts[i]).strftime('%d/%m/%y %H:%M:%S')})" for i in shown)
    negation = "" if alarming else "not "
    needed = m if alarming else n - m + 1
    text = (
        f"Threshold Crossed: {len(shown)} out of the last {len(verdict.evaluated) + verdict.filled} "
        f"datapoints [{listed}] {_was(len(shown))} {negation}{PHRASES[rule.comparison]} the threshold "
        f"({rule.threshold!r})"
    )
    if verdict.filled:
        text += (
            f" and {_plural(verdict.filled, 'missing datapoint')} {_was(verdict.filled)} treated as "
            f"[{FILLED_AS[rule.treat_missing]}]"
        )
    return text + f" (minimum {_plural(needed, 'datapoint')} for {old_state} -> {verdict.state} transition)."


def alarm_period(alarm: Any) -> int:
    """The alarm's Period, or for an alarm on metric math the period of its metric queries."""
    if alarm.period:
        return int(alarm.period)
    return next(int(q.metric_stat.period) for q in alarm.metric_data_queries if q.metric_stat is not None)


def state_reason_data(
    alarm: Any,
    verdict: Verdict,
    points: Sequence[float | None],
    starts: Sequence[float],
    samples: Sequence[float],
    now: float,
) -> dict[str, Any]:
    data: dict[str, Any] = {"version": "1.0", "queryDate": iso(now), "startDate": iso(starts[0])}
    if alarm.unit:
        data["unit"] = alarm.unit
    if alarm.extended_statistic:
        data["extendedStatistic"] = alarm.extended_statistic
    elif alarm.statistic:
        data["statistic"] = alarm.statistic
    data.update(
        {
            "period": alarm_period(alarm),
            "recentDatapoints": [points[i] for i in sorted(verdict.evaluated)],
            "threshold": float(alarm.threshold),
            "evaluatedDatapoints": [
                {"timestamp": iso(starts[i]), "sampleCount": samples[i], "value": points[i]}
                for i in sorted(verdict.evaluated, reverse=True)
            ],
        }
    )
    return data


# --- alarm history ---------------------------------------------------------------------


def history_item(
    alarm_name: str,
    when: float,
    kind: str,
    summary: str,
    data: dict[str, Any],
    alarm_type: str = "MetricAlarm",
) -> dict[str, Any]:
    """One DescribeAlarmHistory item; Timestamp is naive UTC, as moto's serializer expects."""
    return {
        "AlarmName": alarm_name,
        "AlarmType": alarm_type,
        "Timestamp": utc(when).replace(tzinfo=None),
        "HistoryItemType": kind,
        "HistorySummary": summary,
        "HistoryData": json.dumps(data, separators=(",", ":")),
    }


def _state(value: str, reason: str, reason_data: str | None) -> dict[str, Any]:
    state: dict[str, Any] = {"stateValue": value, "stateReason": reason}
    try:
        parsed = json.loads(reason_data) if reason_data else None
    except ValueError:
        parsed = None
    if parsed:
        state["stateReasonData"] = parsed
    return state


def state_update_item(alarm: Any, old: tuple[str, str, str | None], when: float) -> dict[str, Any]:
    """`Alarm updated from OK to ALARM`, with both states in HistoryData."""
    data = {
        "version": "1.0",
        "oldState": _state(*old),
        "newState": _state(alarm.state_value, alarm.state_reason, alarm.state_reason_data),
    }
    return history_item(
        alarm.name, when, "StateUpdate", f"Alarm updated from {old[0]} to {alarm.state_value}", data
    )


def action_item(
    alarm: Any, action_arn: str, when: float, *, published: str | None, error: str | None
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "actionState": "Failed" if error else "Succeeded",
        "stateUpdateTimestamp": int(alarm.state_updated_timestamp.replace(tzinfo=UTC).timestamp() * 1000),
        "notificationResource": action_arn,
    }
    if error:
        data["error"] = error
        summary = f'Failed to execute action {action_arn}. Received error: "{error}"'
    else:
        data["publishedMessage"] = published
        summary = f"Successfully executed action {action_arn}"
    return history_item(alarm.name, when, "Action", summary, data)


def configuration_item(alarm: Any, kind: str, when: float) -> dict[str, Any]:
    """`Alarm "x" created` / `updated` / `deleted`."""
    verb = {"Create": "created", "Update": "updated", "Delete": "deleted"}[kind]
    key = {"Create": "createdAlarm", "Update": "updatedAlarm", "Delete": "deletedAlarm"}[kind]
    summary = {
        "alarmName": alarm.name,
        "namespace": alarm.namespace,
        "metricName": alarm.metric_name,
        "threshold": alarm.threshold,
        "comparisonOperator": alarm.comparison_operator,
        "evaluationPeriods": alarm.evaluation_periods,
        "period": alarm.period,
    }
    alarm_type = "CompositeAlarm" if alarm.rule else "MetricAlarm"
    return history_item(
        alarm.name,
        when,
        "ConfigurationUpdate",
        f'Alarm "{alarm.name}" {verb}',
        {"version": "1.0", "type": kind, key: summary},
        alarm_type,
    )


# --- the SNS notification --------------------------------------------------------------


@cache  # botocore's endpoint data: a megabyte of JSON, parsed again by every new session
def region_description(region: str) -> str:
    """ "US East (N. Virginia)": the Region field of an alarm notification is the display name."""
    import botocore.session

    for partition in botocore.session.get_session().get_data("endpoints")["partitions"]:
        if region in partition["regions"]:
            description: str = partition["regions"][region].get("description", region)
            return description
    return region


def _query(query: Any) -> dict[str, Any]:
    """One metric-math query of an alarm as its notification's Trigger lists it."""
    shown: dict[str, Any] = {"Id": query.id}
    if query.label:
        shown["Label"] = query.label
    if query.expression:
        shown["Expression"] = query.expression
    if query.metric_stat is not None:
        metric = query.metric_stat.metric
        shown["MetricStat"] = {
            "Metric": {
                "Dimensions": [{"value": d.value, "name": d.name} for d in metric.dimensions],
                "MetricName": metric.metric_name,
                "Namespace": metric.namespace,
            },
            "Period": int(query.metric_stat.period),
            "Stat": query.metric_stat.stat,
        }
    shown["ReturnData"] = returns_data(query)
    return shown


def returns_data(query: Any) -> bool:
    """ReturnData as given (CloudFormation: a boolean; the query API: "true"/"false"); default true."""
    value = query.return_data
    return value is None or value is True or str(value).lower() == "true"


def notification(alarm: Any, old_state: str, account_id: str, region: str) -> tuple[str, str]:
    """(Subject, Message) of the SNS notification CloudWatch publishes for a state change."""
    trigger: dict[str, Any]
    if alarm.metric_data_queries:
        trigger = {"Metrics": [_query(q) for q in alarm.metric_data_queries]}
    else:
        trigger = {"MetricName": alarm.metric_name, "Namespace": alarm.namespace}
        if alarm.extended_statistic:
            trigger.update(StatisticType="ExtendedStatistic", ExtendedStatistic=alarm.extended_statistic)
        else:
            trigger.update(StatisticType="Statistic", Statistic=(alarm.statistic or "").upper())
        trigger.update(
            {"Unit": alarm.unit, "Dimensions": [{"value": d.value, "name": d.name} for d in alarm.dimensions]}
        )
    trigger.update(
        {
            "Period": alarm_period(alarm),
            "EvaluationPeriods": int(alarm.evaluation_periods),
            "DatapointsToAlarm": int(alarm.datapoints_to_alarm or alarm.evaluation_periods),
            "ComparisonOperator": alarm.comparison_operator,
            "Threshold": float(alarm.threshold),
            "TreatMissingData": alarm.treat_missing_data or "",
            "EvaluateLowSampleCountPercentile": alarm.evaluate_low_sample_count_percentile or "",
        }
    )
    message = {
        "AlarmName": alarm.name,
        "AlarmDescription": alarm.description,
        "AWSAccountId": account_id,
        "AlarmConfigurationUpdatedTimestamp": iso(
            alarm.configuration_updated_timestamp.replace(tzinfo=UTC).timestamp()
        ),
        "NewStateValue": alarm.state_value,
        "NewStateReason": alarm.state_reason,
        "StateChangeTime": iso(alarm.state_updated_timestamp.replace(tzinfo=UTC).timestamp()),
        "Region": region_description(region),
        "AlarmArn": alarm.alarm_arn,
        "OldStateValue": old_state,
        "OKActions": list(alarm.ok_actions),
        "AlarmActions": list(alarm.alarm_actions),
        "InsufficientDataActions": list(alarm.insufficient_data_actions),
        "Trigger": trigger,
    }
    subject = f'{alarm.state_value}: "{alarm.name}" in {region_description(region)}'
    return subject[:100], json.dumps(message, separators=(",", ":"))
