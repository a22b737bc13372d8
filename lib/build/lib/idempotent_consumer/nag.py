"""cdk-nag acknowledgements, each on the one CloudFormation resource it explains, with its reason."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def acknowledge(construct: IConstruct, *, rule: str, reason: str) -> None:
    """Acknowledge one finding (`AwsSolutions-IAM5[Resource::*]`, `Serverless-LambdaDLQ`) on the
    construct's own resource, its default child: cdk-nag 3 extends an acknowledgement to every
    construct beneath the one given, so on an L2 queue it would also cover the queue's policy."""
    Validations.of(construct.node.default_child or construct).acknowledge(
        Acknowledgment(id=rule, reason=reason)
    )
