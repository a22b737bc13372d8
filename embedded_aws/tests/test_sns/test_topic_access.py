"""SNS requests from IAM callers are authorized against their topic, by the caller's identity
policies and the topic policy together (services/iam/topic_access.py): either may allow, an
explicit Deny in either wins, and a refusal is SNS's AuthorizationError in IAM's words."""

from __future__ import annotations

import uuid

import pytest
from test_iam.callers import policy, refusal, user

from embedded_aws.services.iam.topic_access import topic_arn


@pytest.fixture
def topic(emulator):
    sns = emulator.client("sns")
    arn = sns.create_topic(Name=f"access-{uuid.uuid4().hex[:8]}")["TopicArn"]
    yield arn
    sns.delete_topic(TopicArn=arn)


def test_an_identity_policy_scoped_to_the_topic_allows_that_topic_only(emulator, topic):
    _, sns = user(emulator, [{"Effect": "Allow", "Action": "sns:Publish", "Resource": topic}])
    assert sns.publish(TopicArn=topic, Message="hello")["MessageId"]
    other = emulator.client("sns").create_topic(Name=f"other-{uuid.uuid4().hex[:8]}")["TopicArn"]
    try:
        assert refusal(lambda: sns.publish(TopicArn=other, Message="hello"))["code"] == "AuthorizationError"
    finally:
        emulator.client("sns").delete_topic(TopicArn=other)


def test_a_topic_policy_alone_allows_a_caller_it_names(emulator, topic):
    arn, sns = user(emulator, [])
    denied = refusal(lambda: sns.publish(TopicArn=topic, Message="hello"))
    assert denied == {
        "code": "AuthorizationError",
        "status": 403,
        "message": f"User: {arn} is not authorized to perform: SNS:Publish on resource: {topic} "
        "because no identity-based policy allows the SNS:Publish action",
    }
    emulator.client("sns").set_topic_attributes(
        TopicArn=topic,
        AttributeName="Policy",
        AttributeValue=policy(
            {"Effect": "Allow", "Principal": {"AWS": arn}, "Action": "sns:Publish", "Resource": topic}
        ),
    )
    assert sns.publish(TopicArn=topic, Message="hello")["MessageId"]
    # The topic policy allows Publish, nothing else.
    assert refusal(lambda: sns.get_topic_attributes(TopicArn=topic))["code"] == "AuthorizationError"


def test_an_explicit_deny_in_the_topic_policy_wins_over_the_callers_allow(emulator, topic):
    arn, sns = user(emulator, [{"Effect": "Allow", "Action": "sns:*", "Resource": "*"}])
    assert sns.publish(TopicArn=topic, Message="hello")["MessageId"]
    emulator.client("sns").set_topic_attributes(
        TopicArn=topic,
        AttributeName="Policy",
        AttributeValue=policy(
            {"Effect": "Deny", "Principal": {"AWS": arn}, "Action": "sns:Publish", "Resource": topic}
        ),
    )
    assert refusal(lambda: sns.publish(TopicArn=topic, Message="hello"))["message"].endswith(
        "with an explicit deny in a resource-based policy"
    )
    assert sns.get_topic_attributes(TopicArn=topic)["Attributes"]["TopicArn"] == topic


def test_the_stacks_tls_deny_does_not_refuse_a_loopback_caller(emulator, topic):
    """aws:SecureTransport is "true" for loopback HTTP (docs/local-fidelity.md)."""
    _, sns = user(emulator, [{"Effect": "Allow", "Action": "sns:Publish", "Resource": topic}])
    emulator.client("sns").set_topic_attributes(
        TopicArn=topic,
        AttributeName="Policy",
        AttributeValue=policy(
            {
                "Effect": "Deny",
                "Principal": {"AWS": "*"},
                "Action": "sns:Publish",
                "Resource": topic,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        ),
    )
    assert sns.publish(TopicArn=topic, Message="hello")["MessageId"]


@pytest.mark.parametrize(
    ("action", "params", "expected"),
    [
        ("Publish", {"TopicArn": "arn:aws:sns:us-east-1:1:t"}, "arn:aws:sns:us-east-1:1:t"),
        ("Publish", {"TargetArn": "arn:aws:sns:us-east-1:1:t"}, "arn:aws:sns:us-east-1:1:t"),
        ("CreateTopic", {"Name": "t"}, "arn:aws:sns:us-east-1:1:t"),
        ("Unsubscribe", {"SubscriptionArn": "arn:aws:sns:us-east-1:1:t:1f2e"}, "arn:aws:sns:us-east-1:1:t"),
        ("TagResource", {"ResourceArn": "arn:aws:sns:us-east-1:1:t"}, "arn:aws:sns:us-east-1:1:t"),
        ("ListTopics", {}, None),
        ("Publish", {"PhoneNumber": "+15555550100"}, None),
    ],
)
def test_each_request_names_its_topic(action, params, expected):
    assert topic_arn(action, params, "us-east-1", "1") == expected
