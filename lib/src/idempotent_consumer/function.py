"""A Python Lambda function with a role and a log group of its own, nothing shared."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from .nag import acknowledge
from .rules import FUNCTION_MEMORY_MB, ConsumerNames


class IsolatedFunction(Construct):
    """Function from `<code>/app.py` (handler `app.handler`) with its own role that
    starts with no permissions (no managed policy) and an explicit log group removed with the
    stack. Callers grant exactly what the function needs on `role`."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        function_name: str | None,
        code: Path,
        description: str,
        timeout: Duration,
        environment: Mapping[str, str] | None = None,
        tracing: bool = False,
        memory_size_mb: int = FUNCTION_MEMORY_MB,
    ) -> None:
        super().__init__(scope, construct_id)

        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Execution role of {function_name or self.node.path}; grants are added explicitly",
        )
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            log_group_name=None if function_name is None else ConsumerNames.log_group_of(function_name),
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.log_group.grant_write(self.role)
        self.function = lambda_.Function(
            self,
            "Function",
            function_name=function_name,
            description=description,
            runtime=lambda_.Runtime.PYTHON_3_14,
            architecture=lambda_.Architecture.ARM_64,
            handler="app.handler",
            code=lambda_.Code.from_asset(str(code), exclude=["__pycache__", "*.pyc"]),
            role=self.role,
            timeout=timeout,
            memory_size=memory_size_mb,
            environment=dict(environment or {}),
            log_group=self.log_group,
            # ACTIVE makes the CDK grant the role xray:PutTraceSegments and
            # xray:PutTelemetryRecords, the two actions the Lambda service sends traces with.
            tracing=lambda_.Tracing.ACTIVE if tracing else None,
        )
        if tracing:
            acknowledge(
                self.role.node.find_child("DefaultPolicy"),
                rule="AwsSolutions-IAM5[Resource::*]",
                reason="xray:PutTraceSegments and xray:PutTelemetryRecords have no resource type "
                "('Actions, resources, and condition keys for AWS X-Ray'): '*' is the only Resource "
                "they take.",
            )
        else:
            acknowledge(
                self.function,
                rule="Serverless-LambdaTracing",
                reason="Active tracing needs xray:PutTraceSegments on Resource '*', which the "
                "least-privilege roles here may not have; WRITE/RESULT/ERROR log lines trace each order.",
            )
