"""The idempotent consumer as one construct: SQS jobs queue -> Lambda worker -> DynamoDB table,
guarded by one conditional write on the business key, with its dead-letter queue, alarms,
dashboard and operator policy. The lab's stack (consumer_stack.py) is its first user."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from stacks.config import METRICS_NAMESPACE, ORDER_EXPIRY_ATTRIBUTE, StackConfig
from stacks.messaging import Messaging
from stacks.monitoring import Monitoring
from stacks.operator import OperatorAccess
from stacks.storage import Storage
from stacks.worker import Worker

# The worker's whole permission set; the infra tests pin the synthesized policy to exactly this.
WORKER_QUEUE_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
WORKER_TABLE_ACTIONS = ("dynamodb:PutItem",)


class IdempotentConsumer(Construct):
    """Composes messaging, the guarded table, the worker, its monitoring and the operator's
    access; grants the worker its few permissions and exposes what a stack needs of them.

    Created with the id `Default`, it adds nothing to its resources' logical ids (CDK leaves that
    id out): the lab's stack builds it so, and its deployed tables, queues and log groups keep the
    ids they had before the construct existed (a changed id would replace the table, the guard).
    `also_scanned`: other tables of the stack the operator policy may scan (the lab's reference)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        also_scanned: Sequence[dynamodb.ITable] = (),
    ) -> None:
        super().__init__(scope, construct_id)
        names = config.names
        retained = RemovalPolicy.DESTROY if config.destroy_on_removal else RemovalPolicy.RETAIN

        messaging = Messaging(
            self,
            "Messaging",
            queue_name=names.jobs_queue,
            dead_letter_queue_name=names.dead_letter_queue,
            visibility_timeout=Duration.seconds(config.visibility_timeout_seconds),
            max_receive_count=config.max_receive_count,
            removal=retained,
            job_retention=Duration.days(config.job_retention_days),
            dead_letter_retention=Duration.days(config.dead_letter_retention_days),
            fifo=config.fifo,
            content_based_deduplication=config.content_based_deduplication,
        )
        storage = Storage(
            self,
            "Storage",
            orders_table_name=names.orders_table,
            removal_policy=retained,
            order_expiry_attribute=None if config.order_retention_days is None else ORDER_EXPIRY_ATTRIBUTE,
        )
        worker = Worker(
            self,
            "Worker",
            function_name=names.worker_function,
            table_name=storage.orders_table.table_name,
            metrics_namespace=METRICS_NAMESPACE,
            queue=messaging.queue,
            batch_size=config.batch_size,
            max_concurrency=config.max_concurrency,
            timeout=Duration.seconds(config.function_timeout_seconds),
            order_retention_seconds=config.order_retention_seconds,
            tracing=config.tracing,
        )
        messaging.queue.grant(worker.role, *WORKER_QUEUE_ACTIONS)
        storage.orders_table.grant(worker.role, *WORKER_TABLE_ACTIONS)
        monitoring = Monitoring(
            self,
            "Monitoring",
            names=names,
            metrics_namespace=METRICS_NAMESPACE,
            function=worker.function,
            log_group=worker.log_group,
            queue=messaging.queue,
            dead_letter_queue=messaging.dead_letter_queue,
            orders_table=storage.orders_table,
            alarm_settings=config.alarm_settings,
            alarm_email=config.alarm_email,
        )
        operator = OperatorAccess(
            self,
            "Operator",
            names=names,
            queue=messaging.queue,
            dead_letter_queue=messaging.dead_letter_queue,
            orders_table=storage.orders_table,
            also_scanned=also_scanned,
            worker_function=worker.function,
            worker_log_group=worker.log_group,
            audit_removal=retained,
        )

        self.queue = messaging.queue
        self.dead_letter_queue = messaging.dead_letter_queue
        self.table = storage.orders_table
        self.function = worker.function
        self.role = worker.role
        self.log_group = worker.log_group
        self.mapping = worker.mapping
        self.topic = monitoring.topic
        self.alarms = monitoring.alarms  # by what each watches (stacks/alarms.py)
        self.dashboard = monitoring.dashboard
        self.operator_policy = operator.policy
        self.audit_log_group = operator.audit_log_group
