"""The idempotent consumer as one construct: SQS jobs queue -> Lambda worker -> DynamoDB table,
guarded by one conditional write on the business key, with its dead-letter queue, alarms,
dashboard and operator policy."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import CfnOutput, Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from guarded_consumer import contract

from .messaging import Messaging
from .monitoring import Monitoring
from .operator import OperatorAccess
from .props import ConsumerProps
from .storage import Storage
from .worker import Worker

# The worker's whole permission set; the infra tests pin the synthesized policy to exactly this.
WORKER_QUEUE_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
WORKER_TABLE_ACTIONS = ("dynamodb:PutItem",)


class IdempotentConsumer(Construct):
    """Composes messaging, the guarded table, the worker, its monitoring and the operator's
    access; grants the worker its few permissions and exposes what a stack needs of them:
    `queue`, `dead_letter_queue`, `table`, `function`, `role`, `log_group`, `mapping`, `alarms`
    (by what each watches), `topic`, `dashboard` and `operator_policy` (None when turned off).

    Created with the id `Default`, it adds nothing to its resources' logical ids (CDK leaves that
    id out): the lab's stack builds it so, and its deployed tables, queues and log groups keep the
    ids they had before the construct existed (a changed id would replace the table, the guard).
    `also_scanned`: other tables of the stack the operator policy may scan."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        props: ConsumerProps,
        also_scanned: Sequence[dynamodb.ITable] = (),
    ) -> None:
        super().__init__(scope, construct_id)
        names = props.names
        retained = props.removal_policy

        queue, dead_letter_queue = self._queues(props)
        table = props.existing_table if props.existing_table is not None else self._table(props)
        worker = Worker(
            self,
            "Worker",
            function_name=names.worker_function,
            handler=props.handler,
            description=props.function_description,
            table_name=table.table_name,
            key_attribute=props.key_attribute,
            metrics_namespace=props.metrics_namespace,
            queue=queue,
            batch_size=props.batch_size,
            max_concurrency=props.max_concurrency,
            timeout=Duration.seconds(props.function_timeout_seconds),
            order_retention_seconds=props.order_retention_seconds,
            tracing=props.tracing,
            memory_size_mb=props.memory_size_mb,
        )
        queue.grant(worker.role, *WORKER_QUEUE_ACTIONS)
        table.grant(worker.role, *WORKER_TABLE_ACTIONS)
        monitoring = Monitoring(
            self,
            "Monitoring",
            names=names,
            metrics_namespace=props.metrics_namespace,
            function=worker.function,
            log_group=worker.log_group,
            queue=queue,
            dead_letter_queue=dead_letter_queue,
            orders_table=table,
            alarm_settings=props.alarm_settings,
            alarm_email=props.alarm_email,
            alarm_topic=props.alarm_topic,
            dashboard=props.dashboard,
        )
        operator = (
            OperatorAccess(
                self,
                "Operator",
                names=names,
                queue=queue,
                dead_letter_queue=dead_letter_queue,
                orders_table=table,
                also_scanned=also_scanned,
                worker_function=worker.function,
                worker_log_group=worker.log_group,
                audit_removal=retained,
            )
            if props.operator_policy
            else None
        )

        self.props = props
        self.queue = queue
        self.dead_letter_queue = dead_letter_queue
        self.table = table
        self.function = worker.function
        self.role = worker.role
        self.log_group = worker.log_group
        self.mapping = worker.mapping
        self.topic = monitoring.topic
        self.alarms = monitoring.alarms  # by what each watches (alarms.py)
        self.dashboard = monitoring.dashboard
        self.operator_policy = operator.policy if operator else None
        self.audit_log_group = operator.audit_log_group if operator else None

    def _queues(self, props: ConsumerProps) -> tuple[sqs.IQueue, sqs.IQueue]:
        """The team's jobs queue and DLQ, or a pair of the construct's own."""
        if props.existing_queue is not None and props.existing_dead_letter_queue is not None:
            return props.existing_queue, props.existing_dead_letter_queue
        messaging = Messaging(
            self,
            "Messaging",
            queue_name=props.names.jobs_queue,
            dead_letter_queue_name=props.names.dead_letter_queue,
            visibility_timeout=Duration.seconds(props.visibility_timeout_seconds),
            max_receive_count=props.max_receive_count,
            removal=props.removal_policy,
            job_retention=Duration.days(props.job_retention_days),
            dead_letter_retention=Duration.days(props.dead_letter_retention_days),
            fifo=props.fifo,
            content_based_deduplication=props.content_based_deduplication,
        )
        return messaging.queue, messaging.dead_letter_queue

    def _table(self, props: ConsumerProps) -> dynamodb.ITable:
        """The construct's own guarded table."""
        return Storage(
            self,
            "Storage",
            orders_table_name=props.names.orders_table,
            removal_policy=props.removal_policy,
            order_expiry_attribute=None if props.order_retention_days is None else contract.EXPIRES_AT_FIELD,
            key_attribute=props.key_attribute,
        ).orders_table

    def add_outputs(self) -> dict[str, CfnOutput]:
        """The stack outputs `python -m ops --stack <name>` finds this consumer by (its queues,
        table, worker and log groups), on the consumer's stack: one consumer per stack."""
        values = {
            "QueueUrl": self.queue.queue_url,
            "QueueArn": self.queue.queue_arn,
            "DeadLetterQueueUrl": self.dead_letter_queue.queue_url,
            "OrdersTableName": self.table.table_name,
            "FunctionName": self.function.function_name,
            "LogGroupName": self.log_group.log_group_name,
            "EventSourceMappingId": self.mapping.event_source_mapping_id,
            "AlarmTopicArn": self.topic.topic_arn,
        }
        if self.dashboard is not None:
            values["DashboardName"] = self.dashboard.dashboard_name
        if self.audit_log_group is not None and self.operator_policy is not None:
            values["DlqAuditLogGroupName"] = self.audit_log_group.log_group_name
            values["OperatorPolicyArn"] = self.operator_policy.managed_policy_arn
        stack = Stack.of(self)
        return {key: CfnOutput(stack, key, value=value) for key, value in values.items()}
