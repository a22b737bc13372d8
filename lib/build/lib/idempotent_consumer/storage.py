"""The guarded table: the durable duplicate guard, one item per business key."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct


def table(
    scope: Construct,
    construct_id: str,
    name: str | None,
    removal: RemovalPolicy,
    key_attribute: str = "id",
    deletion_protection: bool = False,
    time_to_live_attribute: str | None = None,
) -> dynamodb.Table:
    return dynamodb.Table(
        scope,
        construct_id,
        table_name=name,
        partition_key=dynamodb.Attribute(name=key_attribute, type=dynamodb.AttributeType.STRING),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        removal_policy=removal,
        deletion_protection=deletion_protection,
        time_to_live_attribute=time_to_live_attribute,
    )


class Storage(Construct):
    """The orders table, keyed on the business key (`id` by default).

    An order's item is what makes a repeated delivery a duplicate: deleting the table (or an
    item) lets the same id be written again. That is why it is retained by default.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        orders_table_name: str | None,
        removal_policy: RemovalPolicy,
        order_expiry_attribute: str | None = None,
        key_attribute: str = "id",
    ) -> None:
        super().__init__(scope, construct_id)
        # The orders are the duplicate guard: a retained table is also protected from a delete
        # by hand (DeleteTable fails until deletion protection is switched off).
        self.orders_table = table(
            self,
            "Orders",
            orders_table_name,
            removal_policy,
            deletion_protection=removal_policy == RemovalPolicy.RETAIN,
            # With a retention, DynamoDB deletes an order at some time after the epoch second the
            # worker writes here ("Using time to live (TTL) in DynamoDB"): the guard lapses then.
            time_to_live_attribute=order_expiry_attribute,
            key_attribute=key_attribute,
        )
