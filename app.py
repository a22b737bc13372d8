#!/usr/bin/env python3
"""CDK entry point: reads context, builds the consumer stack, nothing else."""

import sys

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks, ServerlessChecks

from stacks.config import ConfigError, StackConfig
from stacks.consumer_stack import ConsumerStack


def build(app: cdk.App) -> ConsumerStack:
    add_checks(app)
    return consumer_stack(app, StackConfig.from_context(app.node.try_get_context))


def add_checks(app: cdk.App) -> None:
    """Every synth runs both rule packs as CDK policy-validation plugins: an unacknowledged finding
    fails the synth. Acknowledgements are also written into each resource's `cdk_nag` metadata,
    the audit trail a reader of the template (and the tests) can check."""
    cdk.Validations.of(app).add_plugins(
        AwsSolutionsChecks(app, write_suppressions_to_cloud_formation=True),
        ServerlessChecks(app, write_suppressions_to_cloud_formation=True),
    )


def consumer_stack(app: cdk.App, config: StackConfig) -> ConsumerStack:
    # Every target keeps CDK's bootstrap-version rule: the embedded AWS evaluates it against the
    # SSM parameter as CloudFormation does (docs/local-fidelity.md).
    synthesizer = cdk.DefaultStackSynthesizer()
    return ConsumerStack(
        app,
        config.names.stack,
        config=config,
        synthesizer=synthesizer,
        # What removal=retain keeps is the duplicate guard: a destroy must be a decision (README's
        # deploy block: turn protection off first). The CLI sets it after deploy; not in the template.
        termination_protection=not config.destroy_on_removal,
        description="Idempotent order consumer: SQS -> Lambda -> DynamoDB (conditional write on the order id)",
    )


def main() -> None:
    app = cdk.App()
    try:
        build(app)
    except ConfigError as error:
        sys.exit(f"error: {error}")
    app.synth()


if __name__ == "__main__":
    main()
