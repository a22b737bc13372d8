#!/usr/bin/env python3
"""A payments team's CDK app: the idempotent consumer around their own handler, keyed on
payment_id, in a stack of their own.

    npx cdk synth                  # the stack `payments-consumer`
    npx cdk deploy -c local=true   # short timeouts for a local run: a conflict dead-letters in ~30 s
"""

from pathlib import Path

import aws_cdk as cdk

from idempotent_consumer import ConsumerNames, ConsumerProps, IdempotentConsumer

app = cdk.App()
local = app.node.try_get_context("local") in (True, "true")
stack = cdk.Stack(app, "payments-consumer")
consumer = IdempotentConsumer(
    stack,
    "Payments",
    props=ConsumerProps(
        handler=Path(__file__).parent / "payments",
        key_attribute="payment_id",
        names=ConsumerNames("payments"),
        # Payments are kept for ever (the guard never lapses) and the table outlives the stack.
        removal_policy=cdk.RemovalPolicy.DESTROY if local else cdk.RemovalPolicy.RETAIN,
        function_timeout_seconds=2 if local else 5,
        visibility_timeout_seconds=12 if local else 30,
        max_receive_count=2 if local else 5,
        max_concurrency=2,
        alarm_email=None,
    ),
)
consumer.add_outputs()
app.synth()
