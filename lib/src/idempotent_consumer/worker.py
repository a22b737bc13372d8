"""The worker: its function, role, log group and the queue's event source mapping."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from guarded_consumer import contract

from .bundle import stage
from .function import IsolatedFunction
from .nag import acknowledge
from .rules import FUNCTION_MEMORY_MB


class Worker(Construct):
    """Runs the handler in `handler/app.py`, with the handler library bundled beside it, for each
    batch polled from `queue`.

    Partial batch responses are on, so one failed order in a batch is retried alone while the
    rest are acknowledged. The stack grants the role what it may do.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        function_name: str | None,
        handler: Path,
        description: str,
        table_name: str,
        key_attribute: str,
        metrics_namespace: str,
        queue: sqs.IQueue,
        batch_size: int,
        max_concurrency: int,
        timeout: Duration,
        order_retention_seconds: int | None = None,
        tracing: bool = False,
        memory_size_mb: int = FUNCTION_MEMORY_MB,
    ) -> None:
        super().__init__(scope, construct_id)
        environment = {contract.TABLE_NAME_ENV: table_name, contract.METRICS_NAMESPACE_ENV: metrics_namespace}
        # The lab's worker predates the variable and guards `id`, the default (its template is pinned).
        if key_attribute != contract.ID_FIELD:
            environment[contract.KEY_ATTRIBUTE_ENV] = key_attribute
        if order_retention_seconds is not None:
            environment[contract.ORDER_RETENTION_SECONDS_ENV] = str(order_retention_seconds)
        made = IsolatedFunction(
            self,
            "Handler",
            function_name=function_name,
            code=stage(handler),
            description=description,
            timeout=timeout,
            environment=environment,
            tracing=tracing,
            memory_size_mb=memory_size_mb,
        )
        self.role = made.role
        self.log_group = made.log_group
        self.function = made.function
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
