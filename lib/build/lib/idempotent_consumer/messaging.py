"""The jobs queue and its dead-letter queue: where orders wait and where poison orders end."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .nag import acknowledge


class Messaging(Construct):
    """Jobs queue with SSE and TLS-only access, redriving to a dead-letter queue that keeps
    messages longer than the jobs queue (SQS counts a dead letter's expiry from its first enqueue)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        queue_name: str | None,
        dead_letter_queue_name: str | None,
        visibility_timeout: Duration,
        max_receive_count: int,
        removal: RemovalPolicy,
        job_retention: Duration,
        dead_letter_retention: Duration,
        fifo: bool = False,
        content_based_deduplication: bool = False,
    ) -> None:
        super().__init__(scope, construct_id)

        # Both queues hold orders not yet stored (the DLQ those a human still has to look at), so
        # they follow the table's removal policy rather than CDK's queue default (destroy): a
        # `cdk destroy` keeps them with their messages, and `ops deploy --adopt` takes them back.
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetters",
            queue_name=dead_letter_queue_name,
            retention_period=dead_letter_retention,
            # A FIFO queue's dead-letter queue must be FIFO too (SQS dead-letter queues).
            fifo=fifo or None,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            removal_policy=removal,
        )
        acknowledge(
            self.dead_letter_queue,
            rule="Serverless-SQSRedrivePolicy",
            reason="This is the terminal dead-letter queue; its messages wait for a human.",
        )
        self.queue = sqs.Queue(
            self,
            "Jobs",
            queue_name=queue_name,
            visibility_timeout=visibility_timeout,
            # Shorter than the DLQ's: whatever a job waited here is taken from its time there.
            retention_period=job_retention,
            fifo=fifo or None,
            content_based_deduplication=content_based_deduplication or None,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=max_receive_count
            ),
            removal_policy=removal,
        )
