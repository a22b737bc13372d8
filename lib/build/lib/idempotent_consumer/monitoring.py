"""What tells an operator the consumer needs a human: the alarms of the table in lib/src/idempotent_consumer/alarms.py,
each notifying one SNS topic, a dashboard, and saved Logs Insights queries. What each alarm means
and what to do about it: docs/operations.md, whose alarm table is rendered from the same table.

Hand-written with `aws_cloudwatch` rather than cdk-monitoring-constructs: every alarm here has a
fixed name, an exact metric, statistic, threshold and missing-data rule (the library's defaults
of three 5-minute datapoints would each be overridden), two of the metrics are this worker's own
decisions, and the library would load a second jsii module at every synth for one dashboard.
"""

from __future__ import annotations

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

from guarded_consumer import contract as _CONTRACT

from .alarms import DLQ_DEPTH, TABLE, AlarmSettings, ResolvedAlarm
from .nag import acknowledge
from .rules import ConsumerNames

Tag, Decision = _CONTRACT.Tag, _CONTRACT.Decision
insights_regex, insights_glob = _CONTRACT.insights_regex, _CONTRACT.insights_glob

PERIOD_SECONDS = 60
PERIOD = Duration.seconds(PERIOD_SECONDS)
# The table's CloudFormation words (lib/src/idempotent_consumer/alarms.py) as CDK's enums.
COMPARISON_OPERATORS = {
    "GreaterThanOrEqualToThreshold": cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    "GreaterThanThreshold": cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
}
MISSING_DATA = {"notBreaching": cloudwatch.TreatMissingData.NOT_BREACHING}
# The jobs queue's depth on the dashboard: waiting, and being worked on.
JOBS_DEPTH = ("ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible")


class WatchedResources:
    """The metrics of the consumer's queue, DLQ, worker and orders table that the alarm table
    (lib/src/idempotent_consumer/alarms.py) and the dashboard watch."""

    def __init__(
        self,
        *,
        metrics_namespace: str,
        function: lambda_.IFunction,
        queue: sqs.IQueue,
        dead_letter_queue: sqs.IQueue,
        orders_table: dynamodb.ITable,
    ) -> None:
        self.metrics_namespace = metrics_namespace
        self.function = function
        self.queue = queue
        self.dead_letter_queue = dead_letter_queue
        self.table = orders_table

    def decision(self, name: str, statistic: str, period: int) -> cloudwatch.IMetric:
        """One of the worker's decision metrics (embedded metric format, by function)."""
        return cloudwatch.Metric(
            namespace=self.metrics_namespace,
            metric_name=name,
            statistic=statistic,
            period=Duration.seconds(period),
            dimensions_map={"FunctionName": self.function.function_name},
        )

    def jobs(self, name: str, statistic: str, period: int) -> cloudwatch.IMetric:
        return self.queue.metric(name, statistic=statistic, period=Duration.seconds(period))

    def dead_letter_depth(self, statistic: str, period: int, label: str) -> cloudwatch.MathExpression:
        """The DLQ's messages, visible plus in flight, `statistic` of each over `period`."""
        return cloudwatch.MathExpression(
            expression="visible + held",
            period=Duration.seconds(period),
            label=label,
            using_metrics={
                "visible": self.dead_letter_queue.metric_approximate_number_of_messages_visible(
                    statistic=statistic, period=Duration.seconds(period)
                ),
                "held": self.dead_letter_queue.metric_approximate_number_of_messages_not_visible(
                    statistic=statistic, period=Duration.seconds(period)
                ),
            },
        )

    def dead_letters(self, name: str, statistic: str, period: int) -> cloudwatch.IMetric:
        return self.dead_letter_queue.metric(name, statistic=statistic, period=Duration.seconds(period))

    def new_dead_letters(self, statistic: str, period: int) -> cloudwatch.IMetric:
        """Arrivals in the DLQ: the rise of its depth plus what was deleted from it meanwhile."""
        return cloudwatch.MathExpression(
            expression="DIFF(depth) + deleted",
            using_metrics={
                "depth": self.dead_letter_depth(statistic, period, DLQ_DEPTH),
                "deleted": self.dead_letter_queue.metric_number_of_messages_deleted(
                    statistic="Sum", period=Duration.seconds(period)
                ),
            },
            period=Duration.seconds(period),
            label="New dead letters",
        )

    def worker(self, name: str, statistic: str, period: int) -> cloudwatch.IMetric:
        return self.function.metric(name, statistic=statistic, period=Duration.seconds(period))

    def orders_table(self, name: str, statistic: str, period: int) -> cloudwatch.IMetric:
        return cloudwatch.Metric(
            namespace="AWS/DynamoDB",
            metric_name=name,
            statistic=statistic,
            period=Duration.seconds(period),
            dimensions_map={"TableName": self.table.table_name},
        )


class Monitoring(Construct):
    """Alarms on the decisions, the queues, the function and the table, from the alarm table; a
    dashboard named after the prefix; queries for one order's decisions, the last hour's conflicts
    and errors by class."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        names: ConsumerNames,
        metrics_namespace: str,
        function: lambda_.IFunction,
        log_group: logs.ILogGroup,
        queue: sqs.IQueue,
        dead_letter_queue: sqs.IQueue,
        orders_table: dynamodb.ITable,
        alarm_settings: AlarmSettings,
        alarm_email: str | None,
        alarm_topic: sns.ITopic | None = None,
        dashboard: bool = True,
    ) -> None:
        super().__init__(scope, construct_id)
        self.watched = WatchedResources(
            metrics_namespace=metrics_namespace,
            function=function,
            queue=queue,
            dead_letter_queue=dead_letter_queue,
            orders_table=orders_table,
        )
        own_topic = self._topic(names, alarm_email) if alarm_topic is None else None
        self.topic: sns.ITopic = own_topic or alarm_topic  # type: ignore[assignment]
        self.metrics: dict[str, cloudwatch.IMetric] = {}
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        for alarm in (declaration.resolved(alarm_settings) for declaration in TABLE):
            self._add_alarm(names, alarm)
        if own_topic is not None:
            self._let_alarms_publish(own_topic, names)
        self.decisions = {
            name: self.watched.decision(name, "Sum", PERIOD_SECONDS) for name in _CONTRACT.DECISIONS
        }
        self.dashboard = self._dashboard(names, fifo=alarm_settings.fifo) if dashboard else None
        self.queries = self._saved_queries(names, log_group)

    def _topic(self, names: ConsumerNames, alarm_email: str | None) -> sns.Topic:
        """The alarms' SNS topic, with the alarm email subscribed."""
        topic = sns.Topic(self, "Alarms", topic_name=names.alarm_topic, enforce_ssl=True)
        if alarm_email:
            subscription = topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
            acknowledge(
                subscription,
                rule="Serverless-SNSRedrivePolicy",
                reason="An alarm email SNS cannot deliver would wait in a queue nobody watches; the "
                "alarm's own history records every action, and the dashboard shows the state.",
            )
        acknowledge(
            topic,
            rule="AwsSolutions-SNS2",
            reason="Alarm notifications carry alarm names and states, never order data; CloudWatch cannot "
            "publish to a topic encrypted with the AWS-managed SNS key, and a customer key per "
            "stack would cost more than it protects.",
        )
        return topic

    def _let_alarms_publish(self, topic: sns.Topic, names: ConsumerNames) -> None:
        """Only this consumer's alarms may publish to its topic."""
        stack = Stack.of(self)
        # A topic policy replaces SNS's default one, and enforce_ssl writes one holding only its
        # TLS deny: without this Allow, CloudWatch's alarm actions fail ("... is not authorized to
        # perform: SNS:Publish", re:Post knowledge center cloudwatch-receive-sns-for-alarm-trigger).
        # Scoped to these alarms by their exact ARNs in this account: a pattern such as
        # `alarm:<prefix>-*` would also admit another deployment whose prefix extends this one.
        # Named alarms' ARNs are written out (no reference from the policy to each alarm).
        alarm_arns = [
            alarm.alarm_arn
            if names.prefix is None
            else stack.format_arn(
                service="cloudwatch",
                resource="alarm",
                resource_name=names.alarm(what),
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            )
            for what, alarm in self.alarms.items()
        ]
        topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowThisStacksAlarms",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[topic.topic_arn],
                conditions={
                    "ArnEquals": {"aws:SourceArn": alarm_arns},
                    "StringEquals": {"aws:SourceAccount": stack.account},
                },
            )
        )

    def _add_alarm(self, names: ConsumerNames, alarm: ResolvedAlarm) -> None:
        """One alarm of the table, notifying the topic on ALARM and on OK."""
        spec = alarm.declaration
        metric = alarm.metric(self.watched)
        made = cloudwatch.Alarm(
            self,
            spec.what.title().replace("-", ""),
            alarm_name=names.alarm(spec.what),
            alarm_description=alarm.description,
            metric=metric,
            threshold=alarm.threshold,
            comparison_operator=COMPARISON_OPERATORS[spec.comparison],
            evaluation_periods=alarm.periods,
            datapoints_to_alarm=alarm.datapoints,
            treat_missing_data=MISSING_DATA[spec.missing_data],
        )
        action = actions.SnsAction(self.topic)
        made.add_alarm_action(action)
        made.add_ok_action(action)
        self.metrics[spec.what] = metric
        self.alarms[spec.what] = made

    def _dashboard(self, names: ConsumerNames, *, fifo: bool) -> cloudwatch.Dashboard:
        """The alarms' states and the metrics an operator reads beside them, one minute apart."""
        watched, function, metric = self.watched, self.watched.function, self.metrics
        dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=names.dashboard)
        dashboard.add_widgets(
            cloudwatch.AlarmStatusWidget(
                title="Alarms", alarms=list(self.alarms.values()), width=24, height=3
            ),
        )
        jobs = [watched.jobs(name, "Maximum", PERIOD_SECONDS) for name in JOBS_DEPTH]
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Write decisions per minute", left=list(self.decisions.values()), stacked=True, width=12
            ),
            cloudwatch.GraphWidget(title="Jobs queue", left=jobs, right=[metric["oldest-job-age"]], width=12),
        )
        dead_letter_age = watched.dead_letter_queue.metric_approximate_age_of_oldest_message(
            statistic="Maximum",
            period=PERIOD,
            # SQS leaves messages received three or more times out of a standard queue's age only.
            label="Oldest (s), from its move" if fifo else "Oldest (s), leaving out any read 3+ times",
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Dead-letter queue", left=[metric["dead-letters"]], right=[dead_letter_age], width=8
            ),
            cloudwatch.GraphWidget(
                title="Worker",
                width=8,
                left=[
                    function.metric_invocations(statistic="Sum", period=PERIOD),
                    metric["worker-errors"],
                    metric["worker-throttles"],
                ],
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
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Orders table writes",
                width=24,
                left=[watched.table.metric_consumed_write_capacity_units(statistic="Sum", period=PERIOD)],
                right=[metric["orders-throttled"]],
            ),
        )
        return dashboard

    def _saved_queries(self, names: ConsumerNames, log_group: logs.ILogGroup) -> dict[str, logs.QueryString]:
        """Logs Insights queries saved under `<prefix>/<what>`, on the worker's log group."""
        # Each worker line is a tag and sorted-key JSON (contract.line), so queries match
        # text; the patterns come from the contract.
        queries = {
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
        for what, query in queries.items():
            logs.QueryDefinition(
                self,
                what.title().replace("-", ""),
                # A query definition needs a name: without a prefix, the stack's and the construct's.
                query_definition_name=names.query(what)
                or f"{Stack.of(self).stack_name}/{self.node.path.split('/')[-2]}/{what}",
                query_string=query,
                log_groups=[log_group],
            )
        return queries
