"""An email subscription stays pending confirmation, as on AWS (services/sns/confirmation.py):
Subscribe answers `pending confirmation` (its ARN only when asked with ReturnSubscriptionArn, as
LocalStack recorded AWS answering for an HTTP endpoint in test_sns.py's
test_http_subscription_response), GetSubscriptionAttributes `PendingConfirmation` "true", and both
list calls `PendingConfirmation` where the ARN would be; an SQS subscription is confirmed at once."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def topic(emulator):
    sns = emulator.client("sns")
    arn = sns.create_topic(Name=f"pending-{uuid.uuid4().hex[:8]}")["TopicArn"]
    yield arn
    sns.delete_topic(TopicArn=arn)


def test_an_email_subscription_is_pending_in_every_answer_until_confirmed(emulator, topic):
    """Subscribe, the subscription's attributes and both listings all say pending; a queue
    subscribed beside it is listed with its ARN."""
    sns, sqs = emulator.client("sns"), emulator.client("sqs")
    answer = sns.subscribe(TopicArn=topic, Protocol="email", Endpoint="oncall@example.com")
    assert answer["SubscriptionArn"] == "pending confirmation"
    arn = sns.subscribe(
        TopicArn=topic, Protocol="email", Endpoint="oncall@example.com", ReturnSubscriptionArn=True
    )["SubscriptionArn"]
    assert arn.startswith(f"{topic}:")
    attributes = sns.get_subscription_attributes(SubscriptionArn=arn)["Attributes"]
    assert (attributes["PendingConfirmation"], attributes["ConfirmationWasAuthenticated"]) == (
        "true",
        "false",
    )

    name = f"pending-{uuid.uuid4().hex[:8]}"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    queue = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    try:
        queue_subscription = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue)["SubscriptionArn"]
        by_topic = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
        assert sorted((s["Protocol"], s["Endpoint"], s["SubscriptionArn"]) for s in by_topic) == [
            ("email", "oncall@example.com", "PendingConfirmation"),
            ("sqs", queue, queue_subscription),
        ]
        assert {s["TopicArn"] for s in by_topic} == {topic}
        everywhere = [
            s
            for page in sns.get_paginator("list_subscriptions").paginate()
            for s in page["Subscriptions"]
            if s["TopicArn"] == topic
        ]
        assert sorted(s["SubscriptionArn"] for s in everywhere) == sorted(
            ["PendingConfirmation", queue_subscription]
        )
    finally:
        sqs.delete_queue(QueueUrl=url)
