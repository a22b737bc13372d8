"""The stack's dead-letter-expiry alarm, as synthesized, warns at least DEAD_LETTER_EXPIRY_WARNING_DAYS
before a dead letter can expire, also when operators have read it three times or more and a
redrive is moving other dead letters out meanwhile: the case where SQS leaves the message out of
ApproximateAgeOfOldestMessage ("Available CloudWatch metrics for Amazon SQS"), which the stack's
warning watched before.

Days cannot be waited for, even at the local CloudWatch's 12x. So the DLQ is simulated minute by
minute over a week with the embedded AWS's own rules: its SQS gauge code (services/sqs/metrics.py,
age from the move, three receives left out) makes the samples SQS would publish, and its
CloudWatch code reads the alarm as CloudFormation creates it (resource_types.py), buckets the
samples per period and decides the state (alarm_rules.py, metric_math.py). The old age-based alarm
is evaluated on the same samples: it stays silent, which is what this test exists to catch.

On FIFO queues (`-c fifo=true`) SQS restarts a dead letter's retention at its move and counts the
DLQ's age from the same move, leaving no message out of it ("Setting-up dead-letter queue
retention"; "Available CloudWatch metrics for Amazon SQS"): the stack's FIFO warning is that age,
one datapoint, and the same simulation shows it firing about DEAD_LETTER_EXPIRY_WARNING_DAYS before
the expiry, where the standard one would fire nine days early. Both templates' alarms are pinned,
and every alarm of each fits PutMetricAlarm's evaluation window."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from embedded_aws.services.cloudwatch.alarm_messages import alarm_period
from embedded_aws.services.cloudwatch.alarm_rules import ALARM, evaluate, evaluation_range, statistic
from embedded_aws.services.cloudwatch.evaluator import math_of, rule_of, supported
from embedded_aws.services.cloudwatch.metric_math import evaluate as math_evaluate
from embedded_aws.services.cloudwatch.metric_math import extra_periods
from embedded_aws.services.cloudwatch.resource_types import _metric_data_queries
from embedded_aws.services.sqs import dead_letters
from embedded_aws.services.sqs.metrics import gauges
from idempotent_consumer.alarms import DEAD_LETTER_EXPIRY_WARNING_DAYS, MAX_ALARM_EVALUATION_SECONDS
from stacks.config import StackConfig
from tests.conftest import synth_stack

pytestmark = pytest.mark.jsii  # run in one worker with the other synthesizing modules (conftest.py)

PREFIX = "labex-q05"
MINUTE, HOUR, DAY = 60, 3600, 86400
CONFIG = StackConfig.from_context({})
FIFO_CONFIG = StackConfig.from_context({"fifo": "true"})
JOBS_ARN = f"arn:aws:sqs:us-east-1:123456789012:{PREFIX}-jobs"
MOVE = 1_800_000_000 + 17 * MINUTE + 20  # 17 minutes into an hour; every time below is relative to it


class Message:
    """What the gauge code reads of a message (moto's Message has the same attributes)."""

    def __init__(self, name: str, first_enqueue: float) -> None:
        self.id = name
        self.sent_timestamp = first_enqueue * 1000
        self.visible_at = 0.0
        self.delayed_until = 0.0
        self.approximate_receive_count = 5  # the jobs queue's maxReceiveCount: it failed there


@dataclass
class Scenario:
    """Events on the DLQ, in time order: (time, action, message name, hold seconds)."""

    reads_of_the_old_letter: int
    events: list[tuple[float, str, str, float]]


def scenario(reads: int, redrive_reads_it: bool = True) -> Scenario:
    """`old` arrives at MOVE after a whole jobs retention (less a minute) in the jobs queue, the
    latest a dead letter can arrive for its expiry. Operators list the DLQ `reads` times in its
    first hour (each listing holds every message for 30 s). From the second day to the fourth a
    redrive runs: every 50 minutes a new dead letter arrives and is moved back to the jobs queue
    15 minutes later, the redrive receiving `old` too (unless not `redrive_reads_it`) and leaving
    it (it is not safe to send)."""
    events = [(MOVE, "move", "old", 0.0)]
    events += [(MOVE + 10 * MINUTE * (i + 1), "receive", "old", 30.0) for i in range(reads)]
    t, i = MOVE + DAY, 0
    while t < MOVE + 3 * DAY:
        other = f"other-{i}"
        events += [(t, "move", other, 0.0), (t + 15 * MINUTE + 1, "delete", other, 0.0)]
        if redrive_reads_it:
            events.append((t + 15 * MINUTE, "receive", "old", 20.0))
        t, i = t + 50 * MINUTE, i + 1
    return Scenario(reads, sorted(events))


@pytest.fixture(scope="module")
def fifo_template():
    from aws_cdk.assertions import Template

    _, stack = synth_stack({"fifo": "true"})
    return Template.from_stack(stack)


def samples(
    plan: Scenario, start: float, end: float, fifo: bool = False
) -> Iterator[tuple[float, dict[str, float]]]:
    """The DLQ's AWS/SQS gauges once a minute (30 s into it), from the embedded AWS's gauge code,
    and NumberOfMessagesDeleted since the sample before."""
    first_enqueue = MOVE - CONFIG.job_retention_days * DAY + MINUTE
    queue: dict[str, Message] = {}
    pending = iter(plan.events)
    event = next(pending, None)
    t = math.floor(start / MINUTE) * MINUTE + 30
    deleted = 0
    while t < end:
        while event is not None and event[0] <= t:
            when, action, name, hold = event
            if action == "move":
                queue[name] = Message(name, first_enqueue if name == "old" else when - HOUR)
                dead_letters.note(queue[name], JOBS_ARN, moved_at_ms=when * 1000)
            elif action == "receive":
                queue[name].approximate_receive_count += 1
                queue[name].visible_at = (when + hold) * 1000
            else:
                del queue[name]
                deleted += when >= start
            event = next(pending, None)
        yield t, {**gauges(list(queue.values()), t * 1000, fifo=fifo), "NumberOfMessagesDeleted": deleted}
        t, deleted = t + MINUTE, 0


def alarm_of(props: dict[str, Any]) -> SimpleNamespace:
    """The alarm as the embedded CloudWatch stores it from its CloudFormation properties."""
    return SimpleNamespace(
        rule=None,
        namespace=props.get("Namespace"),
        metric_name=props.get("MetricName"),
        statistic=props.get("Statistic"),
        extended_statistic=None,
        period=props.get("Period"),
        unit=None,
        metric_data_queries=_metric_data_queries(props.get("Metrics")),
        comparison_operator=props["ComparisonOperator"],
        threshold=props["Threshold"],
        evaluation_periods=props["EvaluationPeriods"],
        datapoints_to_alarm=props.get("DatapointsToAlarm"),
        treat_missing_data=props.get("TreatMissingData"),
    )


def first_alarm(
    props: dict[str, Any], plan: Scenario, start: float, end: float, fifo: bool = False
) -> float | None:
    """When the alarm, evaluated at the end of each of its periods, first reaches ALARM."""
    alarm = alarm_of(props)
    assert supported(alarm)
    rule, period = rule_of(alarm), alarm_period(alarm)
    if alarm.metric_data_queries:
        resolved_math = math_of(alarm)
        assert resolved_math is not None, "supported() holds, so the metric math is resolved"
        tree, queries = resolved_math
        wanted = {qid: (q.metric_stat.metric.metric_name, q.metric_stat.stat) for qid, q in queries.items()}
        extra = extra_periods(tree)
    else:
        tree, wanted, extra = None, {"m": (alarm.metric_name, alarm.statistic)}, 0
    by_period: dict[float, list[dict[str, float]]] = defaultdict(list)
    for t, values in samples(plan, start, end, fifo):
        by_period[t // period * period].append(values)
    count = evaluation_range(rule.evaluation_periods) + extra
    end_of_period = math.ceil(start / period) * period
    while end_of_period <= end:
        starts = [end_of_period - (count - i) * period for i in range(count)]
        series = {
            qid: [statistic(stat, [v[metric] for v in by_period.get(s, [])]) for s in starts]
            for qid, (metric, stat) in wanted.items()
        }
        points = math_evaluate(tree, series, period, count)[extra:] if tree else series["m"]
        if evaluate(rule, points).state == ALARM:
            return end_of_period
        end_of_period += period
    return None


def stack_alarm(template, what: str, prefix: str = PREFIX) -> dict[str, Any]:
    (props,) = (
        a["Properties"]
        for a in template.find_resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"]["AlarmName"] == f"{prefix}-{what}"
    )
    alarm: dict[str, Any] = props
    return alarm


# The warning this stack had before: the DLQ's ApproximateAgeOfOldestMessage (Maximum, one minute)
# above the time in the DLQ after which a dead letter may be 2 days from its expiry.
AGE_BASED = {
    "Namespace": "AWS/SQS",
    "MetricName": "ApproximateAgeOfOldestMessage",
    "Statistic": "Maximum",
    "Period": 60,
    "ComparisonOperator": "GreaterThanThreshold",
    "Threshold": CONFIG.dead_letter_expiry_alarm_days * DAY,
    "EvaluationPeriods": 1,
    "DatapointsToAlarm": 1,
    "TreatMissingData": "notBreaching",
}


def expiry() -> float:
    """The earliest the dead letter `old` can expire: its first enqueue plus the DLQ's retention."""
    return MOVE - CONFIG.job_retention_days * DAY + MINUTE + CONFIG.dead_letter_retention_days * DAY


@pytest.mark.parametrize("reads", [0, 3, 6])
def test_the_expiry_warning_fires_days_before_expiry_however_often_the_letter_was_read(template, reads):
    """Read 0, 3 or 6 times, with a redrive moving others out for two days, the dead letter is
    warned about at least DEAD_LETTER_EXPIRY_WARNING_DAYS and an hour (CloudWatch's own delay)
    before it can expire."""
    plan = scenario(reads)
    fired = first_alarm(stack_alarm(template, "dead-letter-expiry"), plan, MOVE - 2 * HOUR, expiry())
    assert fired is not None, "dead-letter-expiry never fired before the dead letter expired"
    assert fired <= expiry() - DEAD_LETTER_EXPIRY_WARNING_DAYS * DAY - HOUR, (
        f"fired only {(expiry() - fired) / HOUR:.1f} h before expiry"
    )


def test_the_age_based_warning_goes_blind_after_three_reads():
    """The same simulation shows the flaw the stack's alarm avoids, so the test above can fail: the
    age alarm fires before expiry for a dead letter nobody read, and never once operators have
    listed it three times, nor when only the redrive's receives read it."""
    unread = first_alarm(AGE_BASED, scenario(0, redrive_reads_it=False), MOVE - 2 * HOUR, expiry())
    assert unread is not None and unread < expiry()
    assert first_alarm(AGE_BASED, scenario(3, redrive_reads_it=False), MOVE - 2 * HOUR, expiry()) is None
    assert first_alarm(AGE_BASED, scenario(0), MOVE - 2 * HOUR, expiry()) is None


def test_new_dead_letters_counts_an_arrival_while_a_redrive_moves_one_out(template):
    """A dead letter arriving in the minute a redrive moves another out leaves the depth unchanged;
    new-dead-letters (DIFF of the depth plus the DLQ's deletes) still fires for it, where DIFF of
    the depth alone, the stack's former expression, stays silent."""
    plan = Scenario(
        0,
        [
            (MOVE, "move", "old", 0.0),
            (MOVE + HOUR + 15, "move", "new", 0.0),  # both between two samples
            (MOVE + HOUR + 25, "delete", "old", 0.0),
        ],
    )
    props = stack_alarm(template, "new-dead-letters")
    start, end = MOVE + 30 * MINUTE, MOVE + 2 * HOUR
    fired = first_alarm(props, plan, start, end)
    assert fired is not None and MOVE + HOUR < fired <= MOVE + HOUR + 2 * MINUTE
    depth_only = [
        {**q, "Expression": "DIFF(depth)"} if q.get("ReturnData", True) and "Expression" in q else q
        for q in props["Metrics"]
    ]
    assert first_alarm({**props, "Metrics": depth_only}, plan, start, end) is None


def fifo_expiry() -> float:
    """A FIFO dead letter expires the DLQ's retention after its move, however long it waited before."""
    return MOVE + FIFO_CONFIG.dead_letter_retention_days * DAY


@pytest.mark.parametrize("reads", [0, 3, 6])
def test_on_fifo_the_expiry_warning_comes_about_two_days_before_the_expiry(fifo_template, reads):
    """On a FIFO DLQ the same letter, read 0, 3 or 6 times during a redrive of others, is warned
    about between DEAD_LETTER_EXPIRY_WARNING_DAYS and an hour, and that plus three hours, before
    its expiry 14 days after the move: not at the standard queue's 118 hours, nine days early."""
    props = stack_alarm(fifo_template, "dead-letter-expiry")
    fired = first_alarm(props, scenario(reads), MOVE - 2 * HOUR, fifo_expiry(), fifo=True)
    assert fired is not None, "dead-letter-expiry never fired before the FIFO dead letter expired"
    lead = fifo_expiry() - fired
    warning = DEAD_LETTER_EXPIRY_WARNING_DAYS * DAY
    assert warning + HOUR <= lead <= warning + 3 * HOUR, f"fired {lead / HOUR:.1f} h before expiry"


def alarm_timing(props: dict[str, Any]) -> tuple[int, int]:
    """(Period, EvaluationPeriods): a metric-math alarm's period is its metrics' (they share one)."""
    periods = {q["MetricStat"]["Period"] for q in props.get("Metrics", []) if "MetricStat" in q}
    if "Period" in props:
        periods.add(props["Period"])
    (period,) = periods
    return period, props["EvaluationPeriods"]


@pytest.mark.parametrize(
    ("queue_type", "what", "expected"),
    [
        (
            "standard",
            "dead-letter-expiry",
            {"Period": 3600, "EvaluationPeriods": 118, "DatapointsToAlarm": 118, "Threshold": 1},
        ),
        (
            "fifo",
            "dead-letter-expiry",
            {
                "MetricName": "ApproximateAgeOfOldestMessage",
                "Namespace": "AWS/SQS",
                "Statistic": "Maximum",
                "Period": 60,
                "EvaluationPeriods": 1,
                "DatapointsToAlarm": 1,
                "ComparisonOperator": "GreaterThanThreshold",
                # 14 - 2 days after the move, less two hours of CloudWatch's delays
                "Threshold": (14 - 2) * DAY - 2 * HOUR,
            },
        ),
    ],
)
def test_the_expiry_warnings_threshold_and_timing_follow_the_queue_type(
    template, fifo_template, queue_type, what, expected
):
    """Standard: the DLQ's depth, >= 1 in each of 118 consecutive hours (its letters have 7 days
    there at least). FIFO: the DLQ's age, one minute above 12 days less two hours (14 days there)."""
    props = stack_alarm(template if queue_type == "standard" else fifo_template, what)
    period, _ = alarm_timing(props)
    found = {**props, "Period": period}
    assert {key: found.get(key) for key in expected} == expected


def test_the_dead_letter_texts_follow_the_queue_type(template, fifo_template):
    """What the notification says of a dead letter's time left: at least DLQ - jobs retention from
    its first enqueue on a standard queue, the DLQ's whole retention from its move on FIFO."""
    standard = stack_alarm(template, "dead-letters")["AlarmDescription"]
    fifo = stack_alarm(fifo_template, "dead-letters")["AlarmDescription"]
    assert "at least 7 days (expiry counts from its first enqueue)" in standard
    assert "at least 14 days (expiry counts from its move into the DLQ)" in fifo
    assert "118 hours in a row" in stack_alarm(template, "dead-letter-expiry")["AlarmDescription"]
    assert "14 days after its move" in stack_alarm(fifo_template, "dead-letter-expiry")["AlarmDescription"]


@pytest.mark.parametrize("queue_type", ["standard", "fifo"])
def test_every_alarm_fits_cloudwatchs_evaluation_window(template, fifo_template, queue_type):
    """PutMetricAlarm (`Period`): Period x EvaluationPeriods at most 604,800 s, and at most 86,400 s
    for a period under an hour; CloudFormation would fail the deploy otherwise."""
    chosen = template if queue_type == "standard" else fifo_template
    alarms = [a["Properties"] for a in chosen.find_resources("AWS::CloudWatch::Alarm").values()]
    assert len(alarms) == 10
    for props in alarms:
        period, count = alarm_timing(props)
        limit = MAX_ALARM_EVALUATION_SECONDS if period >= HOUR else DAY
        assert period * count <= limit, (props["AlarmName"], period, count)
