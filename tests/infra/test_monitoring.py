"""Monitoring in the template: every alarm's metric, statistic, period, threshold, comparison,
missing-data rule and actions; the topic; the dashboard; the saved queries; the mapping's
concurrency and metrics; deletion protection on the orders table."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from idempotent_consumer.alarms import (
    ALARMS,
    DECISION_ALARM_MINUTES,
    MAX_ALARM_EVALUATION_SECONDS,
    dead_letter_expiry_periods,
    resolved,
)
from stacks.config import StackConfig
from tests.conftest import synth_stack
from tests.infra import assertions

if TYPE_CHECKING:
    from aws_cdk.assertions import Match, Template

pytestmark = pytest.mark.jsii  # run in one worker with the other synthesizing modules (conftest.py)

PREFIX = "labex-q05"
# The per-attempt decision alarms: one breaching minute of the last DECISION_ALARM_MINUTES.
DECISION_ALARMS = ("conflicting-orders", "failed-records", "malformed-jobs")


def topic_ref(template: Template) -> dict:
    (logical_id,) = template.find_resources(
        "AWS::SNS::Topic", {"Properties": {"TopicName": f"{PREFIX}-alarms"}}
    )
    return {"Ref": logical_id}


def ref_of(template: Template, resource_type: str, properties: dict) -> dict:
    found = template.find_resources(resource_type, {"Properties": assertions.Match.object_like(properties)})
    assert len(found) == 1, found
    return {"Ref": next(iter(found))}


def alarm_cases(template: Template) -> list[tuple[str, dict]]:
    worker = ref_of(template, "AWS::Lambda::Function", {"FunctionName": f"{PREFIX}-worker"})
    jobs_name = {
        "Fn::GetAtt": [
            ref_of(template, "AWS::SQS::Queue", {"QueueName": f"{PREFIX}-jobs"})["Ref"],
            "QueueName",
        ]
    }
    orders = ref_of(template, "AWS::DynamoDB::Table", {"TableName": f"{PREFIX}-orders"})
    return [
        (
            "conflicting-orders",
            {
                "Namespace": "IdempotentOrderConsumer",
                "MetricName": "Conflict",
                "Statistic": "Sum",
                "Dimensions": [{"Name": "FunctionName", "Value": worker}],
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "Threshold": 1,
            },
        ),
        (
            "failed-records",
            {
                "Namespace": "IdempotentOrderConsumer",
                "MetricName": "Error",
                "Statistic": "Sum",
                "Dimensions": [{"Name": "FunctionName", "Value": worker}],
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "Threshold": 1,
            },
        ),
        (
            "malformed-jobs",
            {
                "Namespace": "IdempotentOrderConsumer",
                "MetricName": "Malformed",
                "Statistic": "Sum",
                "Dimensions": [{"Name": "FunctionName", "Value": worker}],
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "Threshold": 1,
            },
        ),
        (
            "oldest-job-age",
            {
                "Namespace": "AWS/SQS",
                "MetricName": "ApproximateAgeOfOldestMessage",
                "Statistic": "Maximum",
                "Dimensions": [{"Name": "QueueName", "Value": jobs_name}],
                "ComparisonOperator": "GreaterThanThreshold",
                "Threshold": 300,
            },
        ),
        (
            "worker-errors",
            {
                "Namespace": "AWS/Lambda",
                "MetricName": "Errors",
                "Statistic": "Sum",
                "Dimensions": [{"Name": "FunctionName", "Value": worker}],
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "Threshold": 1,
            },
        ),
        (
            "worker-throttles",
            {
                "Namespace": "AWS/Lambda",
                "MetricName": "Throttles",
                "Statistic": "Sum",
                "Dimensions": [{"Name": "FunctionName", "Value": worker}],
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "Threshold": 1,
            },
        ),
        (
            "orders-throttled",
            {
                "Namespace": "AWS/DynamoDB",
                "MetricName": "WriteThrottleEvents",
                "Statistic": "Sum",
                "Dimensions": [{"Name": "TableName", "Value": orders}],
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "Threshold": 1,
            },
        ),
    ]


ALARM_NAMES = [
    "conflicting-orders",
    "failed-records",
    "malformed-jobs",
    "oldest-job-age",
    "worker-errors",
    "worker-throttles",
    "orders-throttled",
]


@pytest.mark.parametrize("what", ALARM_NAMES)
def test_each_alarm_watches_its_metric_and_notifies_the_topic(template, what):
    """One-minute periods, one breaching datapoint alarms (a decision alarm looks at the last
    DECISION_ALARM_MINUTES, so a record retried every visibility timeout keeps it in ALARM),
    missing data not breaching, alarm and OK actions on the topic."""
    expected = dict(alarm_cases(template))[what]
    topic = topic_ref(template)
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": f"{PREFIX}-{what}",
            **expected,
            "Period": 60,
            "EvaluationPeriods": DECISION_ALARM_MINUTES if what in DECISION_ALARMS else 1,
            "DatapointsToAlarm": 1,
            "TreatMissingData": "notBreaching",
            "AlarmActions": [topic],
            "OKActions": [topic],
            "AlarmDescription": assertions.Match.any_value(),
        },
    )


def dlq_query(template, query_id: str, metric: str, stat: str = "Maximum", period: int = 60) -> Match:
    dlq = ref_of(template, "AWS::SQS::Queue", {"QueueName": f"{PREFIX}-jobs-dlq"})["Ref"]
    return assertions.Match.object_like(
        {
            "Id": query_id,
            "ReturnData": False,
            "MetricStat": {
                "Metric": {
                    "Namespace": "AWS/SQS",
                    "MetricName": metric,
                    "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq, "QueueName"]}}],
                },
                "Period": period,
                "Stat": stat,
            },
        }
    )


def dlq_depth_queries(template, period: int = 60) -> list:
    """The two metric queries of the DLQ's depth: visible and in flight (Maximum)."""
    return [
        dlq_query(template, "visible", "ApproximateNumberOfMessagesVisible", period=period),
        dlq_query(template, "held", "ApproximateNumberOfMessagesNotVisible", period=period),
    ]


def test_dead_letters_alarm_counts_visible_and_in_flight_dead_letters(template):
    """A metric-math alarm on visible + in flight >= 1: an operator holding the DLQ's messages
    while listing them does not turn it OK."""
    topic = topic_ref(template)
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": f"{PREFIX}-dead-letters",
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "Threshold": 1,
            "EvaluationPeriods": 1,
            "DatapointsToAlarm": 1,
            "TreatMissingData": "notBreaching",
            "AlarmActions": [topic],
            "OKActions": [topic],
            "Metrics": assertions.Match.array_with(
                [
                    assertions.Match.object_like({"Expression": "visible + held", "ReturnData": True}),
                    *dlq_depth_queries(template),
                ]
            ),
        },
    )


def test_new_dead_letters_alarm_counts_arrivals_a_redrive_cannot_cancel(template):
    """A metric-math alarm, DIFF of the DLQ's depth (visible + in flight) plus the messages deleted
    from it, >= 1 in a minute: a new dead letter notifies even while older ones keep dead-letters
    in ALARM (actions run on state changes) and while a redrive or a discard takes as many out
    (each a delete), and a listing releasing what it held is no rise."""
    topic = topic_ref(template)
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": f"{PREFIX}-new-dead-letters",
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "Threshold": 1,
            "EvaluationPeriods": 1,
            "DatapointsToAlarm": 1,
            "TreatMissingData": "notBreaching",
            "AlarmActions": [topic],
            "OKActions": [topic],
            "Metrics": assertions.Match.array_with(
                [
                    assertions.Match.object_like({"Expression": "DIFF(depth) + deleted", "ReturnData": True}),
                    assertions.Match.object_like(
                        {"Id": "depth", "Expression": "visible + held", "ReturnData": False}
                    ),
                    *dlq_depth_queries(template),
                    dlq_query(template, "deleted", "NumberOfMessagesDeleted", stat="Sum"),
                ]
            ),
        },
    )


def test_dead_letter_expiry_fires_on_a_dlq_not_empty_for_consecutive_hours(template):
    """dead-letter-expiry: the DLQ's depth (visible + in flight, Maximum per hour) >= 1 in each of
    N consecutive hourly periods, N = dead_letter_expiry_periods(7 - 2 days) = 118, missing data
    not breaching. Reads move a dead letter between visible and in flight, never out of the sum."""
    n = dead_letter_expiry_periods(5 * 86400)
    assert n == 118
    topic = topic_ref(template)
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": f"{PREFIX}-dead-letter-expiry",
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "Threshold": 1,
            "EvaluationPeriods": n,
            "DatapointsToAlarm": n,
            "TreatMissingData": "notBreaching",
            "AlarmActions": [topic],
            "OKActions": [topic],
            "Metrics": assertions.Match.array_with(
                [
                    assertions.Match.object_like({"Expression": "visible + held", "ReturnData": True}),
                    *dlq_depth_queries(template, period=3600),
                ]
            ),
        },
    )


def test_dead_letter_expiry_reads_nothing_that_reading_the_dlq_can_silence(template):
    """No metric of dead-letter-expiry is ApproximateAgeOfOldestMessage, which SQS computes without
    the messages received three or more times (every `ops dlq` listing is a receive), nor a
    receive count; each one is the DLQ's visible or in-flight depth."""
    (alarm,) = (
        a["Properties"]
        for a in template.find_resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"]["AlarmName"] == f"{PREFIX}-dead-letter-expiry"
    )
    metrics = [q["MetricStat"]["Metric"]["MetricName"] for q in alarm.get("Metrics", []) if "MetricStat" in q]
    assert "MetricName" not in alarm
    assert sorted(metrics) == ["ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesVisible"]


@pytest.mark.parametrize(
    ("job_days", "dead_days", "periods"),
    [(7, 14, 118), (1, 14, 168), (8, 14, 94), (12, 14, 1), (13, 14, 1), (3, 6, 22)],
)
def test_dead_letter_expiry_periods_fit_the_guarantee_and_cloudwatchs_limit(job_days, dead_days, periods):
    """N hourly periods plus two hours of slack end at least DEAD_LETTER_EXPIRY_WARNING_DAYS before
    the earliest expiry where the retentions leave room, never under 1 period, and never past
    PutMetricAlarm's 7 days of Period x EvaluationPeriods."""
    config = StackConfig.from_context(
        {"job_retention_days": job_days, "dead_letter_retention_days": dead_days}
    )
    n = dead_letter_expiry_periods(config.dead_letter_expiry_alarm_days * 86400)
    assert n == periods
    assert 1 <= n and n * 3600 <= MAX_ALARM_EVALUATION_SECONDS
    if config.dead_letter_expiry_alarm_days * 24 >= 3:
        assert (n + 2) * 3600 <= config.dead_letter_expiry_alarm_days * 86400


def test_there_are_exactly_these_alarms(template):
    """The stack makes exactly the alarms of the table lib/src/idempotent_consumer/alarms.py, whose names ops and tests read."""
    names = sorted(
        alarm["Properties"]["AlarmName"]
        for alarm in template.find_resources("AWS::CloudWatch::Alarm").values()
    )
    assert names == sorted(f"{PREFIX}-{what}" for what in ALARMS)
    assert set(ALARMS) == {*ALARM_NAMES, "dead-letters", "new-dead-letters", "dead-letter-expiry"}


def alarm_arn(what: str) -> dict:
    return {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":cloudwatch:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
                f":alarm:{PREFIX}-{what}",
            ],
        ]
    }


def test_alarm_topic_enforces_tls_and_lets_only_this_stacks_alarms_publish(template):
    """The topic policy keeps the TLS deny and allows CloudWatch to publish for this stack's
    alarms in this account only, each by its exact ARN: no pattern that another deployment's
    alarm (prefix `labex-q05-staging`) could match (a policy without the Allow makes every alarm
    action fail)."""
    topic = topic_ref(template)
    template.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "Topics": [topic],
            "PolicyDocument": {
                "Statement": assertions.Match.array_with(
                    [
                        assertions.Match.object_like(
                            {
                                "Effect": "Deny",
                                "Action": "sns:Publish",
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        ),
                        {
                            "Sid": "AllowThisStacksAlarms",
                            "Effect": "Allow",
                            "Action": "sns:Publish",
                            "Principal": {"Service": "cloudwatch.amazonaws.com"},
                            "Resource": topic,
                            "Condition": {
                                "ArnEquals": {"aws:SourceArn": [alarm_arn(what) for what in ALARMS]},
                                "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
                            },
                        },
                    ]
                )
            },
        },
    )
    template.resource_count_is("AWS::SNS::Subscription", 0)


def test_alarm_email_adds_an_email_subscription():
    _, stack = synth_stack({"alarm_email": "oncall@example.com"})
    assertions.Template.from_stack(stack).has_resource_properties(
        "AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": "oncall@example.com"}
    )


def test_oldest_job_age_threshold_comes_from_context():
    _, stack = synth_stack({"oldest_job_age_alarm_seconds": "900"})
    assertions.Template.from_stack(stack).has_resource_properties(
        "AWS::CloudWatch::Alarm", {"AlarmName": f"{PREFIX}-oldest-job-age", "Threshold": 900}
    )


def test_dashboard_shows_decisions_queues_worker_and_table(template):
    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    assert dashboard["Properties"]["DashboardName"] == PREFIX
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for title in (
        "Alarms",
        "Write decisions per minute",
        "Jobs queue",
        "Dead-letter queue",
        "Worker",
        "Worker duration (ms)",
        "Orders table writes",
    ):
        assert f'\\"title\\":\\"{title}\\"' in body, title
    for metric in (
        "Accepted",
        "Duplicate",
        "Conflict",
        "Malformed",
        "Error",
        "ApproximateAgeOfOldestMessage",
        "ConcurrentExecutions",
        "ConsumedWriteCapacityUnits",
        "WriteThrottleEvents",
        "Invocations",
    ):
        assert f'\\"{metric}\\"' in body, metric


def test_saved_queries_read_the_worker_log_group(template):
    log_group = ref_of(template, "AWS::Logs::LogGroup", {"LogGroupName": f"/aws/lambda/{PREFIX}-worker"})
    queries = {
        q["Properties"]["Name"]: q["Properties"]
        for q in template.find_resources("AWS::Logs::QueryDefinition").values()
    }
    assert sorted(queries) == [
        f"{PREFIX}/conflicts",
        f"{PREFIX}/decisions-for-one-order",
        f"{PREFIX}/errors-by-class",
    ]
    assert all(query["LogGroupNames"] == [log_group] for query in queries.values())
    assert '"decision": "conflict"' in queries[f"{PREFIX}/conflicts"]["QueryString"]
    assert "stats count(*) as errors by error_class" in queries[f"{PREFIX}/errors-by-class"]["QueryString"]


def test_mapping_concurrency_and_metrics(template):
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {"ScalingConfig": {"MaximumConcurrency": 10}, "MetricsConfig": {"Metrics": ["EventCount"]}},
    )
    _, stack = synth_stack({"max_concurrency": "250"})
    assertions.Template.from_stack(stack).has_resource_properties(
        "AWS::Lambda::EventSourceMapping", {"ScalingConfig": {"MaximumConcurrency": 250}}
    )


def test_worker_knows_its_metrics_namespace(template):
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "FunctionName": f"{PREFIX}-worker",
            "Environment": {
                "Variables": assertions.Match.object_like({"METRICS_NAMESPACE": "IdempotentOrderConsumer"})
            },
        },
    )


def test_retained_orders_table_is_deletion_protected():
    """The orders are the duplicate guard: retained means also protected; removal=destroy (labs,
    local runs) leaves them deletable."""
    for removal, protected in (("retain", True), ("destroy", False)):
        _, stack = synth_stack({"removal": removal})
        assertions.Template.from_stack(stack).has_resource_properties(
            "AWS::DynamoDB::Table", {"TableName": f"{PREFIX}-orders", "DeletionProtectionEnabled": protected}
        )


def test_each_alarm_is_made_from_its_declaration(template):
    """Every synthesized alarm carries its declaration's description, threshold, comparison,
    periods, datapoints, missing-data rule, period and statistic (for metric math, the statistic of
    the DLQ's depth), for the default context; there is no alarm the table does not declare."""
    made = {
        alarm["Properties"]["AlarmName"]: alarm["Properties"]
        for alarm in template.find_resources("AWS::CloudWatch::Alarm").values()
    }
    for alarm in resolved(StackConfig.from_context({}).alarm_settings):
        spec = alarm.declaration
        props = made[f"{PREFIX}-{spec.what}"]
        assert {
            key: props[key]
            for key in (
                "AlarmDescription",
                "Threshold",
                "ComparisonOperator",
                "EvaluationPeriods",
                "DatapointsToAlarm",
                "TreatMissingData",
            )
        } == {
            "AlarmDescription": alarm.description,
            "Threshold": alarm.threshold,
            "ComparisonOperator": spec.comparison,
            "EvaluationPeriods": alarm.periods,
            "DatapointsToAlarm": alarm.datapoints,
            "TreatMissingData": spec.missing_data,
        }, spec.what
        if "Metrics" in props:
            stats = [q["MetricStat"] for q in props["Metrics"] if "MetricStat" in q]
            assert {stat["Period"] for stat in stats} == {spec.period}, spec.what
            depth = [s for s in stats if s["Metric"]["MetricName"].startswith("ApproximateNumberOfMessages")]
            assert depth and {s["Stat"] for s in depth} == {spec.statistic}, spec.what
        else:
            assert (props["Period"], props["Statistic"]) == (spec.period, spec.statistic), spec.what
    assert sorted(made) == sorted(f"{PREFIX}-{what}" for what in ALARMS)
