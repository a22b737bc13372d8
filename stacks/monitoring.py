"""What tells an operator the consumer needs a human: alarms with fixed names that notify one SNS
topic, a dashboard, and saved Logs Insights queries. What each alarm means and what to do about
it: docs/operations.md.

Hand-written with `aws_cloudwatch` rather than cdk-monitoring-constructs: every alarm here has a
fixed name, an exact metric, statistic, threshold and missing-data rule (the library's defaults
of three 5-minute datapoints would each be overridden), two of the metrics are this worker's own
decisions, and the library would load a second jsii module at every synth for one dashboard.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from stacks.config import (
    ALARMS,
    DEAD_LETTER_EXPIRY_PERIOD_SECONDS,
    DEAD_LETTER_EXPIRY_WARNING_DAYS,
    DECISION_ALARM_MINUTES,
    DECISION_METRICS,
    Names,
    dead_letter_expiry_periods,
)
from stacks.lambda_code import contract
from stacks.nag import acknowledge

_CONTRACT = contract()
Metric, Tag, Decision = _CONTRACT.Metric, _CONTRACT.Tag, _CONTRACT.Decision
insights_regex, insights_glob = _CONTRACT.insights_regex, _CONTRACT.insights_glob

PERIOD = Duration.minutes(1)


@dataclass(frozen=True)
class AlarmSpec:
    what: str  # the name after the prefix
    metric: cloudwatch.IMetric
    threshold: float
    comparison: cloudwatch.ComparisonOperator
    description: str
    periods: int = 1  # EvaluationPeriods (N)
    datapoints: int = 1  # DatapointsToAlarm (M of N)


class Monitoring(Construct):
    """Alarms on the decisions, the queues, the function and the table; a dashboard named after
    the prefix; queries for one order's decisions, the last hour's conflicts and errors by class."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        names: Names,
        metrics_namespace: str,
        function: lambda_.IFunction,
        log_group: logs.ILogGroup,
        queue: sqs.IQueue,
        dead_letter_queue: sqs.IQueue,
        orders_table: dynamodb.ITable,
        oldest_job_age_alarm: Duration,
        dead_letter_expiry_alarm: Duration,
        dead_letter_days_guaranteed: int,
        alarm_email: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.topic = sns.Topic(self, "Alarms", topic_name=names.alarm_topic, enforce_ssl=True)
        # A topic policy replaces SNS's default one, and enforce_ssl writes one holding only its
        # TLS deny: without this Allow, CloudWatch's alarm actions fail ("... is not authorized to
        # perform: SNS:Publish", re:Post knowledge center cloudwatch-receive-sns-for-alarm-trigger).
        # Scoped to this stack's alarms by their exact ARNs in this account: a pattern such as
        # `alarm:<prefix>-*` would also admit another deployment whose prefix extends this one.
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowThisStacksAlarms",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "ArnEquals": {
                        "aws:SourceArn": [
                            stack.format_arn(
                                service="cloudwatch",
                                resource="alarm",
                                resource_name=name,
                                arn_format=ArnFormat.COLON_RESOURCE_NAME,
                            )
                            for name in names.alarms
                        ]
                    },
                    "StringEquals": {"aws:SourceAccount": stack.account},
                },
            )
        )
        if alarm_email:
            subscription = self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
            acknowledge(
                subscription,
                rule="Serverless-SNSRedrivePolicy",
                reason="An alarm email SNS cannot deliver would wait in a queue nobody watches; the "
                "alarm's own history records every action, and the dashboard shows the state.",
            )
        acknowledge(
            self.topic,
            rule="AwsSolutions-SNS2",
            reason="Alarm notifications carry alarm names and states, never order data; CloudWatch cannot "
            "publish to a topic encrypted with the AWS-managed SNS key, and a customer key per "
            "stack would cost more than it protects.",
        )

        self.decisions = {
            name: cloudwatch.Metric(
                namespace=metrics_namespace,
                metric_name=name,
                statistic="Sum",
                period=PERIOD,
                dimensions_map={"FunctionName": function.function_name},
            )
            for name in DECISION_METRICS
        }
        jobs_depth = queue.metric_approximate_number_of_messages_visible(statistic="Maximum", period=PERIOD)
        jobs_in_flight = queue.metric_approximate_number_of_messages_not_visible(
            statistic="Maximum", period=PERIOD
        )
        oldest_age = queue.metric_approximate_age_of_oldest_message(statistic="Maximum", period=PERIOD)

        # Not NumberOfMessagesSent: SQS's own moves to a dead-letter queue do not count there. Visible
        # plus in flight: an operator listing the DLQ holds its messages invisible, which is not the
        # DLQ emptying (nor, when released, new dead letters).
        def depth(period: Duration, label: str) -> cloudwatch.MathExpression:
            """The DLQ's messages, visible plus in flight, the Maximum of each over `period`."""
            return cloudwatch.MathExpression(
                expression="visible + held",
                period=period,
                label=label,
                using_metrics={
                    "visible": dead_letter_queue.metric_approximate_number_of_messages_visible(
                        statistic="Maximum", period=period
                    ),
                    "held": dead_letter_queue.metric_approximate_number_of_messages_not_visible(
                        statistic="Maximum", period=period
                    ),
                },
            )

        dead_letters = depth(PERIOD, "Dead letters (visible + in flight)")
        dead_letter_age = dead_letter_queue.metric_approximate_age_of_oldest_message(
            statistic="Maximum", period=PERIOD, label="Oldest (s), leaving out any read 3+ times"
        )
        # Arrivals in a minute: the depth's rise plus what was deleted from the DLQ meanwhile (an
        # operator's discard, a redrive's moves), so a redrive moving as many as arrive does not
        # cancel them. A new dead letter notifies also while older ones still wait (dead-letters
        # stays in ALARM then, and CloudWatch notifies on state changes only).
        new_dead_letters = cloudwatch.MathExpression(
            expression="DIFF(depth) + deleted",
            using_metrics={
                "depth": dead_letters,
                "deleted": dead_letter_queue.metric_number_of_messages_deleted(
                    statistic="Sum", period=PERIOD
                ),
            },
            period=PERIOD,
            label="New dead letters",
        )
        # Not ApproximateAgeOfOldestMessage: in a standard queue SQS leaves out of it a message
        # received three or more times and not deleted, and every `ops dlq` listing is a receive.
        # A dead letter is in the depth (visible + in flight) every hour it is in the DLQ however
        # often it is read; Maximum per statistic, so a message moving between the two within
        # the hour is never missed (the sum of two Minimums could be 0).
        hour = Duration.seconds(DEAD_LETTER_EXPIRY_PERIOD_SECONDS)
        dead_letters_hourly = depth(hour, "Dead letters in the hour (visible + in flight)")
        expiry_periods = dead_letter_expiry_periods(dead_letter_expiry_alarm.to_seconds())
        errors = function.metric_errors(statistic="Sum", period=PERIOD)
        throttles = function.metric_throttles(statistic="Sum", period=PERIOD)
        write_throttles = cloudwatch.Metric(
            namespace="AWS/DynamoDB",
            metric_name="WriteThrottleEvents",
            statistic="Sum",
            period=PERIOD,
            dimensions_map={"TableName": orders_table.table_name},
        )

        ge = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        gt = cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD
        specs = [
            AlarmSpec(
                "conflicting-orders",
                self.decisions[Metric.CONFLICT],
                1,
                ge,
                "An order id arrived with other details than the stored order. It is never "
                "acknowledged and will reach the dead-letter queue: compare both (ops dlq list), "
                "then discard or fix the producer. See docs/operations.md.",
                periods=DECISION_ALARM_MINUTES,
            ),
            AlarmSpec(
                "failed-records",
                self.decisions[Metric.ERROR],
                1,
                ge,
                "The worker could not write a record (access denied, a missing table, throttling "
                "past its retries, a timeout): it is retried and reaches the dead-letter queue if the "
                "cause stays. Read the ERROR line (errors-by-class query), fix the cause, then redrive.",
                periods=DECISION_ALARM_MINUTES,
            ),
            AlarmSpec(
                "malformed-jobs",
                self.decisions[Metric.MALFORMED],
                1,
                ge,
                "A job body is not a valid order (the ERROR line names the field). It can never be "
                "written and will reach the dead-letter queue: fix the producer, then discard it.",
                periods=DECISION_ALARM_MINUTES,
            ),
            AlarmSpec(
                "dead-letters",
                dead_letters,
                1,
                ge,
                f"Messages wait in the dead-letter queue for a human. Each one is kept there at least "
                f"{dead_letter_days_guaranteed} days (expiry counts from its first enqueue): "
                f"ops dlq list, then redrive or discard.",
            ),
            AlarmSpec(
                "new-dead-letters",
                new_dead_letters,
                1,
                ge,
                "A message arrived in the dead-letter queue within the last minute, also while older "
                "ones wait there or a redrive is moving others out: ops dlq list shows it.",
            ),
            AlarmSpec(
                "dead-letter-expiry",
                dead_letters_hourly,
                1,
                ge,
                f"The dead-letter queue has not been empty for {expiry_periods} hours in a row: a dead "
                f"letter in it may expire within {DEAD_LETTER_EXPIRY_WARNING_DAYS} days and be lost "
                f"(reading it does not stop this). ops dlq list, then redrive or discard now.",
                periods=expiry_periods,
                datapoints=expiry_periods,
            ),
            AlarmSpec(
                "oldest-job-age",
                oldest_age,
                oldest_job_age_alarm.to_seconds(),
                gt,
                "The oldest job has waited longer than the threshold: the worker is not keeping up "
                "(see worker-throttles and failed-records) or the mapping is disabled.",
            ),
            AlarmSpec(
                "worker-errors",
                errors,
                1,
                ge,
                "The worker function itself failed (an unhandled exception, a timeout, a crash, a "
                "runtime error): its whole batch is retried. Read the function's log.",
            ),
            AlarmSpec(
                "worker-throttles",
                throttles,
                1,
                ge,
                "Lambda refused to run the worker: the account's unreserved concurrency is used up, "
                "or a reserved concurrency below the mapping's maximum. Jobs wait and their receive "
                "count grows. Find what took the concurrency, or reserve at least max_concurrency for "
                "the worker; raising max_concurrency does not help (the mapping holds back at it, "
                "without throttles).",
            ),
            AlarmSpec(
                "orders-throttled",
                write_throttles,
                1,
                ge,
                "DynamoDB throttled writes to the orders table; the worker retries and, past its "
                "budget, fails the record (failed-records). Raise the table's capacity if it lasts.",
            ),
        ]
        if tuple(spec.what for spec in specs) != ALARMS:
            raise ValueError("the alarms made here must be exactly stacks.config.ALARMS, in its order")
        action = actions.SnsAction(self.topic)
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        for spec in specs:
            alarm = cloudwatch.Alarm(
                self,
                spec.what.title().replace("-", ""),
                alarm_name=names.alarm(spec.what),
                alarm_description=spec.description,
                metric=spec.metric,
                threshold=spec.threshold,
                comparison_operator=spec.comparison,
                evaluation_periods=spec.periods,
                datapoints_to_alarm=spec.datapoints,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
            alarm.add_alarm_action(action)
            alarm.add_ok_action(action)
            self.alarms[spec.what] = alarm

        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=names.dashboard)
        self.dashboard.add_widgets(
            cloudwatch.AlarmStatusWidget(
                title="Alarms", alarms=list(self.alarms.values()), width=24, height=3
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Write decisions per minute", left=list(self.decisions.values()), stacked=True, width=12
            ),
            cloudwatch.GraphWidget(
                title="Jobs queue", left=[jobs_depth, jobs_in_flight], right=[oldest_age], width=12
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Dead-letter queue", left=[dead_letters], right=[dead_letter_age], width=8
            ),
            cloudwatch.GraphWidget(
                title="Worker",
                width=8,
                left=[function.metric_invocations(statistic="Sum", period=PERIOD), errors, throttles],
                right=[function.metric("ConcurrentExecutions", statistic="Maximum", period=PERIOD)],
            ),
            cloudwatch.GraphWidget(
                title="Worker duration (ms)",
                width=8,
                left=[
                    function.metric_duration(statistic=statistic, period=PERIOD)
                    for statistic in ("p50", "p99", "Maximum")
                ],
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Orders table writes",
                width=24,
                left=[orders_table.metric_consumed_write_capacity_units(statistic="Sum", period=PERIOD)],
                right=[write_throttles],
            ),
        )

        # Each worker line is a tag and sorted-key JSON (order_contract.line), so queries match
        # text; the patterns come from the contract.
        self.queries = {
            "decisions-for-one-order": logs.QueryString(
                fields=["@timestamp", "@message"],
                filter_statements=[
                    f"@message like {insights_regex(fields={_CONTRACT.ID_FIELD: 'ORDER-ID'})}"
                ],
                sort="@timestamp asc",
                limit=200,
            ),
            "conflicts": logs.QueryString(
                fields=["@timestamp", "@message"],
                filter_statements=[
                    f"@message like {insights_regex(Tag.WRITE, {_CONTRACT.DECISION_FIELD: Decision.CONFLICT})}"
                ],
                sort="@timestamp desc",
                limit=200,
            ),
            "errors-by-class": logs.QueryString(
                filter_statements=[f"@message like {insights_regex(Tag.ERROR)}"],
                parse_statements=[f"@message {insights_glob(_CONTRACT.ERROR_FIELD)} as error_class"],
                stats_statements=["count(*) as errors by error_class"],
                sort="errors desc",
            ),
        }
        for what, query in self.queries.items():
            logs.QueryDefinition(
                self,
                what.title().replace("-", ""),
                query_definition_name=names.query(what),
                query_string=query,
                log_groups=[log_group],
            )
