"""The order worker: its function, role, log group and the queue's event source mapping."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from stacks.config import WORKER_METRICS_NAMESPACE_ENV, WORKER_RETENTION_ENV, WORKER_TABLE_ENV
from stacks.function import PythonFunction
from stacks.nag import acknowledge


class Worker(Construct):
    """Runs `lambda/worker/app.py` for each batch polled from `queue`.

    Partial batch responses are on, so one failed order in a batch is retried alone while the
    rest are acknowledged. The stack grants the role what it may do.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        function_name: str,
        table_name: str,
        metrics_namespace: str,
        queue: sqs.IQueue,
        batch_size: int,
        max_concurrency: int,
        timeout: Duration,
        order_retention_seconds: int | None = None,
        tracing: bool = False,
    ) -> None:
        super().__init__(scope, construct_id)
        environment = {WORKER_TABLE_ENV: table_name, WORKER_METRICS_NAMESPACE_ENV: metrics_namespace}
        if order_retention_seconds is not None:
            environment[WORKER_RETENTION_ENV] = str(order_retention_seconds)
        handler = PythonFunction(
            self,
            "Handler",
            function_name=function_name,
            source="worker",
            description="Idempotent order worker: one conditional PutItem per order id",
            timeout=timeout,
            environment=environment,
            tracing=tracing,
        )
        self.role = handler.role
        self.log_group = handler.log_group
        self.function = handler.function
        # A plain mapping rather than SqsEventSource: that one also grants sqs:GetQueueUrl and
        # sqs:ChangeMessageVisibility, which the poller does not need. The stack grants the rest.
        self.mapping = self.function.add_event_source_mapping(
            "Jobs",
            event_source_arn=queue.queue_arn,
            batch_size=batch_size,
            enabled=True,
            report_batch_item_failures=True,
            max_concurrency=max_concurrency,
            # The mapping's own counts (polled, filtered, invoked, failed, deleted events).
            metrics_config=lambda_.MetricsConfig(metrics=[lambda_.MetricType.EVENT_COUNT]),
        )
        acknowledge(
            self.function,
            rule="Serverless-LambdaDLQ",
            reason="Invoked synchronously by the SQS event source mapping; a failed order stays on the "
            "jobs queue and its redrive policy moves it to the queue's dead-letter queue.",
        )
        acknowledge(
            self.mapping,
            rule="Serverless-LambdaEventSourceMappingDestination",
            reason="An SQS event source mapping cannot take an on-failure destination; the jobs "
            "queue's redrive policy is the failure path.",
        )
