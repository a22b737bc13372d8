"""The lab's reference table and the item seeded into it, which nothing of the worker may touch."""

from __future__ import annotations

import json
from collections.abc import Mapping

from aws_cdk import CustomResource, Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from idempotent_consumer.function import IsolatedFunction
from idempotent_consumer.nag import acknowledge
from idempotent_consumer.storage import table
from stacks.lambda_code import LAMBDA_SOURCE


class ReferenceStorage(Construct):
    """The lab's reference table, which the worker never touches; retained with the orders."""

    def __init__(
        self, scope: Construct, construct_id: str, *, table_name: str, removal_policy: RemovalPolicy
    ) -> None:
        super().__init__(scope, construct_id)
        self.reference_table = table(self, "Reference", table_name, removal_policy)


class SeededItem(Construct):
    """Puts one item into a table at create time through a small Python custom resource.

    Plain Python (no Node provider framework) so that the local Lambda host can run it too.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        table: dynamodb.ITable,
        item: Mapping[str, str],
        function_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self.seeder = IsolatedFunction(
            self,
            "Seeder",
            function_name=function_name,
            code=LAMBDA_SOURCE / "reference_seeder",
            description="Seeds the reference item at stack create (CloudFormation custom resource)",
            timeout=Duration.seconds(30),
        )
        table.grant(self.seeder.role, "dynamodb:PutItem")
        acknowledge(
            self.seeder.function,
            rule="Serverless-LambdaDLQ",
            reason="Invoked by CloudFormation, which receives every outcome through the response URL "
            "and fails the deployment on error; a DLQ would hold nothing anyone reads.",
        )
        self.resource = CustomResource(
            self,
            "Item",
            service_token=self.seeder.function.function_arn,
            resource_type="Custom::SeededItem",
            properties={"TableName": table.table_name, "Item": json.dumps(dict(item), sort_keys=True)},
        )
        # The grant lives in the role's policy; the item cannot be written before it exists.
        self.resource.node.add_dependency(self.seeder.role)
