"""The orders table (the durable duplicate guard), the lab's reference table and its seeded item."""

from __future__ import annotations

import json
from collections.abc import Mapping

from aws_cdk import CustomResource, Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from stacks.function import PythonFunction
from stacks.nag import acknowledge


def _table(
    scope: Construct,
    construct_id: str,
    name: str,
    removal: RemovalPolicy,
    deletion_protection: bool = False,
    time_to_live_attribute: str | None = None,
) -> dynamodb.Table:
    return dynamodb.Table(
        scope,
        construct_id,
        table_name=name,
        partition_key=dynamodb.Attribute(name="id", type=dynamodb.AttributeType.STRING),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        removal_policy=removal,
        deletion_protection=deletion_protection,
        time_to_live_attribute=time_to_live_attribute,
    )


class Storage(Construct):
    """The orders table, keyed on the business `id`.

    An order's item is what makes a repeated delivery a duplicate: deleting the table (or an
    item) lets the same id be written again. That is why it is retained by default.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        orders_table_name: str,
        removal_policy: RemovalPolicy,
        order_expiry_attribute: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        # The orders are the duplicate guard: a retained table is also protected from a delete
        # by hand (DeleteTable fails until deletion protection is switched off).
        self.orders_table = _table(
            self,
            "Orders",
            orders_table_name,
            removal_policy,
            deletion_protection=removal_policy == RemovalPolicy.RETAIN,
            # With a retention, DynamoDB deletes an order at some time after the epoch second the
            # worker writes here ("Using time to live (TTL) in DynamoDB"): the guard lapses then.
            time_to_live_attribute=order_expiry_attribute,
        )


class ReferenceStorage(Construct):
    """The lab's reference table, which the worker never touches; retained with the orders."""

    def __init__(
        self, scope: Construct, construct_id: str, *, table_name: str, removal_policy: RemovalPolicy
    ) -> None:
        super().__init__(scope, construct_id)
        self.reference_table = _table(self, "Reference", table_name, removal_policy)


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
        self.seeder = PythonFunction(
            self,
            "Seeder",
            function_name=function_name,
            source="reference_seeder",
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
