"""Alarm state changes as CloudWatch makes them, on moto's alarms.

A change updates StateValue/StateReason/StateReasonData/StateUpdatedTimestamp, writes a
StateUpdate history item and, when ActionsEnabled, publishes the alarm notification to every
SNS topic among the new state's actions (an Action history item each). moto is corrected where
it differs from AWS: a new alarm starts in INSUFFICIENT_DATA (moto: OK), putting an existing
alarm again keeps its state (moto: resets it), and SetAlarmState runs the actions of the state
it sets. Configuration changes are history items too.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from typing import Any

from embedded_aws.compat import new_objects
from embedded_aws.compat.registry import T, declare, state, states
from embedded_aws.services.cloudwatch.alarm_messages import (
    action_item,
    configuration_item,
    notification,
    state_update_item,
)
from embedded_aws.services.cloudwatch.alarm_rules import ALARM, INSUFFICIENT_DATA, OK, evaluation_window_error
from embedded_aws.services.cloudwatch.history import AlarmHistory
from embedded_aws.services.iam.resource_policies import ALLOW, Principal, Request, decide

log = logging.getLogger("embedded_aws.cloudwatch")

INITIAL_REASON = "Unchecked: Initial alarm creation"


def actions_for(alarm: Any, state: str) -> list[str]:
    return list(
        {
            ALARM: alarm.alarm_actions,
            OK: alarm.ok_actions,
            INSUFFICIENT_DATA: alarm.insufficient_data_actions,
        }[state]
        or []
    )


def publish_to_sns(action_arn: str, subject: str, message: str, alarm_arn: str) -> str | None:
    """Publish through moto's SNS backend (which delivers to SQS subscribers) as CloudWatch does:
    as the service principal cloudwatch.amazonaws.com, which only the topic's policy can allow
    (with the alarm as aws:SourceArn); the error, if any, in AWS's words."""
    from moto.sns.models import sns_backends

    parts = action_arn.split(":")
    if len(parts) < 6 or parts[2] != "sns":
        return "only SNS topic actions are carried out locally"
    backend = sns_backends[parts[4]][parts[3]]
    topic = backend.topics.get(action_arn)
    if topic is not None and not topic_allows_alarm(topic.policy, action_arn, alarm_arn):
        return f"Resource: {alarm_arn} is not authorized to perform: SNS:Publish on resource: {action_arn}"
    try:
        backend.publish(message, arn=action_arn, subject=subject)
    except Exception as error:  # noqa: BLE001 - a failed action is recorded, as CloudWatch does
        return getattr(error, "message", None) or str(error) or type(error).__name__
    return None


def topic_allows_alarm(policy: str | None, topic_arn: str, alarm_arn: str) -> bool:
    """The topic policy lets CloudWatch publish for this alarm. Loopback HTTP counts as secure
    transport (aws:SecureTransport "true"): TLS between two processes of one machine protects
    nothing, and a TLS-only Deny then never refuses a local caller (docs/local-fidelity.md)."""
    account = alarm_arn.split(":")[4]
    request = Request(
        Principal("Service", "cloudwatch.amazonaws.com"),
        "sns:Publish",
        topic_arn,
        {
            "aws:SourceArn": alarm_arn,
            "aws:SourceAccount": account,
            "aws:SourceOwner": account,
            "aws:SecureTransport": "true",
        },
    )
    return decide(policy, request) == ALLOW


def refuse_too_long_evaluation(arguments: dict[str, Any]) -> None:
    """PutMetricAlarm's limit on Period x EvaluationPeriods (evaluation.evaluation_window_error),
    with the period of an alarm on metric math taken from its queries, as a ValidationError."""
    from moto.cloudwatch.exceptions import ValidationError

    periods = [arguments.get("period")]
    for query in arguments.get("metric_data_queries") or []:
        periods.append(query.period)
        if query.metric_stat is not None:
            periods.append(query.metric_stat.period)
    known = [int(p) for p in periods if p]
    if not known or not arguments.get("evaluation_periods"):
        return
    error = evaluation_window_error(max(known), int(arguments["evaluation_periods"]))
    if error:
        raise ValidationError(error)


class AlarmStates:
    """Every state change of every alarm goes through here (one lock: the evaluator thread and
    API requests change alarms concurrently)."""

    def __init__(self, history: AlarmHistory) -> None:
        self.history = history
        self.lock = threading.RLock()

    def change(self, backend: Any, alarm: Any, state: str, reason: str, reason_data: str) -> bool:
        """Move `alarm` to `state` unless it was replaced, deleted or is there already."""
        with self.lock:
            if backend.alarms.get(alarm.name) is not alarm or alarm.state_value == state:
                return False
            old = (alarm.state_value, alarm.state_reason, alarm.state_reason_data)
            alarm.update_state(reason, reason_data, state)
            self._changed(backend, alarm, old)
            return True

    def _changed(self, backend: Any, alarm: Any, old: tuple[str, str, str | None]) -> None:
        alarm.state_transitioned_timestamp = alarm.state_updated_timestamp
        account, region = backend.account_id, backend.region_name
        self.history.add(account, region, state_update_item(alarm, old, time.time()))
        if not alarm.actions_enabled:
            return
        for action_arn in actions_for(alarm, alarm.state_value):
            subject, message = notification(alarm, old[0], account, region)
            error = publish_to_sns(action_arn, subject, message, alarm.alarm_arn)
            if error:
                log.warning("alarm %s: action %s failed: %s", alarm.name, action_arn, error)
            self.history.add(
                account, region, action_item(alarm, action_arn, time.time(), published=message, error=error)
            )

    def install(self) -> None:
        """Route moto's PutMetricAlarm, SetAlarmState and DeleteAlarms through here."""
        from moto.cloudwatch.models import CloudWatchBackend

        put_metric_alarm = CloudWatchBackend.put_metric_alarm
        set_alarm_state = CloudWatchBackend.set_alarm_state
        delete_alarms = CloudWatchBackend.delete_alarms
        states = self

        def put(backend: Any, *args: Any, **kwargs: Any) -> Any:
            name = kwargs["name"] if "name" in kwargs else args[0]
            refuse_too_long_evaluation(
                inspect.signature(put_metric_alarm).bind(backend, *args, **kwargs).arguments
            )
            with states.lock:
                previous = backend.alarms.get(name)
                alarm: Any = put_metric_alarm(backend, *args, **kwargs)  # gains fields moto's Alarm lacks
                # DescribeAlarms lists Metrics only for an alarm on metric queries (moto: [] for every
                # alarm), and StateTransitionedTimestamp, the last change of StateValue (as recorded).
                alarm.metric_data_queries = alarm.metric_data_queries or None
                if previous is None:
                    alarm.state_value, alarm.state_reason, alarm.state_reason_data = (
                        INSUFFICIENT_DATA,
                        INITIAL_REASON,
                        None,
                    )
                    alarm.state_transitioned_timestamp = alarm.state_updated_timestamp
                else:
                    alarm.state_value, alarm.state_reason = previous.state_value, previous.state_reason
                    alarm.state_reason_data = previous.state_reason_data
                    alarm.state_updated_timestamp = previous.state_updated_timestamp
                    alarm.state_transitioned_timestamp = previous.state_transitioned_timestamp
                states.history.add(
                    backend.account_id,
                    backend.region_name,
                    configuration_item(alarm, "Update" if previous else "Create", time.time()),
                )
                return alarm

        def set_state(backend: Any, alarm_name: str, reason: str, reason_data: str, state_value: str) -> None:
            with states.lock:
                alarm = backend.alarms.get(alarm_name)
                old = (alarm.state_value, alarm.state_reason, alarm.state_reason_data) if alarm else None
                set_alarm_state(backend, alarm_name, reason, reason_data, state_value)
                if old and old[0] != state_value:
                    states._changed(backend, alarm, old)

        def delete(backend: Any, alarm_names: list[str]) -> None:
            with states.lock:
                for name in alarm_names:
                    alarm = backend.alarms.get(name)
                    if alarm is not None:
                        states.history.add(
                            backend.account_id,
                            backend.region_name,
                            configuration_item(alarm, "Delete", time.time()),
                        )
                delete_alarms(backend, alarm_names)

        # Replacements with their own signatures (the assignment ignores); registry.py checks moto's.
        CloudWatchBackend.put_metric_alarm = put  # type: ignore[assignment]
        CloudWatchBackend.set_alarm_state = set_state  # type: ignore[assignment]
        CloudWatchBackend.delete_alarms = delete  # type: ignore[assignment]


@declare(
    "cloudwatch.alarm-states",
    "alarm state changes recorded and their actions notified",
    T(
        "moto.cloudwatch.models:CloudWatchBackend.put_metric_alarm",
        "self",
        "name",
        "namespace",
        "metric_name",
        "comparison_operator",
        "evaluation_periods",
        "period",
        "threshold",
        "statistic",
        "description",
        "dimensions",
        "alarm_actions",
        "metric_data_queries",
        "datapoints_to_alarm",
        "extended_statistic",
        "ok_actions",
        "insufficient_data_actions",
        "unit",
        "actions_enabled",
        "treat_missing_data",
        "evaluate_low_sample_count_percentile",
        "threshold_metric_id",
        "rule",
        "tags",
    ),
    T(
        "moto.cloudwatch.models:CloudWatchBackend.set_alarm_state",
        "self",
        "alarm_name",
        "reason",
        "reason_data",
        "state_value",
    ),
    T("moto.cloudwatch.models:CloudWatchBackend.delete_alarms", "self", "alarm_names"),
    *states(
        "moto.cloudwatch.models:Alarm",
        new_objects.alarm,
        *(
            "state_value",
            "state_reason",
            "state_reason_data",
            "state_updated_timestamp",
            "metric_data_queries",
        ),
    ),
    # AWS's StateTransitionedTimestamp, which moto lacks
    state("moto.cloudwatch.models:Alarm.state_transitioned_timestamp", new_objects.alarm, adds=True),
    fixes_moto="CloudWatch stores alarms but never evaluates them nor runs their actions",
    uses=("cloudwatch.states",),
)
def patch_alarm_states(states: AlarmStates) -> None:
    """Route moto's alarm calls through `states` (see AlarmStates.install)."""
    states.install()
