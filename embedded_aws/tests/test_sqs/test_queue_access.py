"""SQS queue policies are enforced as AWS evaluates them (services/iam/queue_access.py): for an
API caller of the account, its identity policy or the queue policy may allow and an explicit Deny
in either wins; SNS, a service principal, delivers only where the queue policy allows it for the
topic (aws:SourceArn); a queue policy from CloudFormation (AWS::SQS::QueuePolicy) is one too."""

from __future__ import annotations

import json
import uuid

import pytest
from test_iam.callers import policy, refusal, user

from local.session import wait_for
from tests.e2e.conftest import ACCOUNT, REGION


@pytest.fixture
def queue(emulator):
    sqs, name = emulator.client("sqs"), f"access-{uuid.uuid4().hex[:8]}"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    yield url, f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"
    sqs.delete_queue(QueueUrl=url)


def set_policy(emulator, url: str, *statements: dict) -> None:
    emulator.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy(*statements)})


def test_an_identity_policy_scoped_to_the_queue_allows_that_queue(emulator, queue):
    """An identity policy naming the queue allows what it names, not more."""
    url, arn = queue
    _, sqs = user(emulator, [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": arn}], "sqs")
    assert sqs.send_message(QueueUrl=url, MessageBody="hello")["MessageId"]
    denied = refusal(lambda: sqs.receive_message(QueueUrl=url))
    assert (denied["code"], denied["status"]) == ("AccessDenied", 403)
    assert denied["message"].endswith("because no identity-based policy allows the sqs:ReceiveMessage action")


def test_the_queue_policy_alone_allows_a_caller_it_names(emulator, queue):
    """A caller without any identity policy is allowed what the queue policy allows it."""
    url, arn = queue
    caller, sqs = user(emulator, [], "sqs")
    assert refusal(lambda: sqs.send_message(QueueUrl=url, MessageBody="hello"))["code"] == "AccessDenied"
    set_policy(
        emulator,
        url,
        {"Effect": "Allow", "Principal": {"AWS": caller}, "Action": "sqs:SendMessage", "Resource": arn},
    )
    assert sqs.send_message(QueueUrl=url, MessageBody="hello")["MessageId"]
    assert refusal(lambda: sqs.receive_message(QueueUrl=url))["code"] == "AccessDenied"


def test_an_explicit_deny_in_the_queue_policy_wins_over_the_callers_allow(emulator, queue):
    """A Deny in the queue policy refuses a caller allowed sqs:*, with IAM's reason."""
    url, arn = queue
    caller, sqs = user(emulator, [{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}], "sqs")
    set_policy(
        emulator,
        url,
        {"Effect": "Deny", "Principal": {"AWS": caller}, "Action": "sqs:SendMessage", "Resource": arn},
    )
    denied = refusal(lambda: sqs.send_message(QueueUrl=url, MessageBody="hello"))
    assert denied["message"] == (
        f"User: {caller} is not authorized to perform: sqs:SendMessage on resource: {arn} "
        "with an explicit deny in a resource-based policy"
    )
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_the_stacks_tls_deny_does_not_refuse_a_loopback_caller(emulator, queue):
    """aws:SecureTransport is "true" for loopback HTTP (docs/local-fidelity.md)."""
    url, arn = queue
    _, sqs = user(emulator, [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": arn}], "sqs")
    set_policy(
        emulator,
        url,
        {
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Action": "sqs:*",
            "Resource": arn,
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        },
    )
    assert sqs.send_message(QueueUrl=url, MessageBody="hello")["MessageId"]


def test_sns_delivers_only_where_the_queue_policy_allows_its_topic(emulator, queue):
    """No policy: the publish succeeds and nothing arrives. A policy for another topic: nothing.
    A policy allowing sns.amazonaws.com with this topic as aws:SourceArn: delivered."""
    url, arn = queue
    sns, sqs = emulator.client("sns"), emulator.client("sqs")
    topic = sns.create_topic(Name=f"to-queue-{uuid.uuid4().hex[:8]}")["TopicArn"]
    try:
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})

        def allow_from(source: str) -> dict:
            return {
                "Effect": "Allow",
                "Principal": {"Service": "sns.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": source}},
            }

        sns.publish(TopicArn=topic, Message="no policy")
        set_policy(emulator, url, allow_from(f"{topic}-other"))
        sns.publish(TopicArn=topic, Message="another topic's policy")
        set_policy(emulator, url, allow_from(topic))
        sns.publish(TopicArn=topic, Message="allowed")
        got = wait_for(
            lambda: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"),
            timeout=10,
            what="the allowed delivery",
        )
        assert [m["Body"] for m in got] == ["allowed"]
    finally:
        sns.delete_topic(TopicArn=topic)


def test_a_cloudformation_queue_policy_is_set_and_removed_with_its_stack(emulator, queue):
    """AWS::SQS::QueuePolicy sets the policy (it then allows), and its stack delete removes it."""
    url, arn = queue
    cloudformation, name = emulator.client("cloudformation"), f"queue-policy-{uuid.uuid4().hex[:6]}"
    caller, sqs = user(emulator, [], "sqs")
    document = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": caller}, "Action": "sqs:SendMessage", "Resource": arn}
        ],
    }
    cloudformation.create_stack(
        StackName=name,
        TemplateBody=json.dumps(
            {
                "Resources": {
                    "Policy": {
                        "Type": "AWS::SQS::QueuePolicy",
                        "Properties": {"Queues": [url], "PolicyDocument": document},
                    }
                }
            }
        ),
    )
    wait_for(
        lambda: (
            cloudformation.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
        ),
        timeout=20,
        what="the stack",
    )
    attributes = emulator.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])[
        "Attributes"
    ]
    assert json.loads(attributes["Policy"]) == document
    assert sqs.send_message(QueueUrl=url, MessageBody="hello")["MessageId"]
    cloudformation.delete_stack(StackName=name)
    wait_for(
        lambda: (
            "Policy"
            not in emulator.client("sqs")
            .get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])
            .get("Attributes", {})
        ),
        timeout=20,
        what="the policy to go",
    )
    assert refusal(lambda: sqs.send_message(QueueUrl=url, MessageBody="hello"))["code"] == "AccessDenied"
