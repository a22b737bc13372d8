"""SNS to SQS and CloudWatch alarms against AWS's recorded answers (recordings.py): a queue
subscription's attributes, what raw and enveloped deliveries look like, SNS's refusals, a new
alarm, SetAlarmState's refusals, a deleted alarm."""

from __future__ import annotations

import json
import uuid

import pytest
from botocore.exceptions import ClientError
from test_iam.callers import user

from local.session import wait_for
from test_conformance.recorded import answer
from test_conformance.recordings import check
from tests.e2e.conftest import ACCOUNT, REGION, subscribe_queue

pytestmark = [pytest.mark.e2e]


def refused(call) -> dict:
    with pytest.raises(ClientError) as error:
        call()
    return answer(error.value.response)


def delivered(sqs, url: str) -> dict:
    messages = wait_for(
        lambda: sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"]).get("Messages"),
        timeout=10,
        what="the delivery",
    )
    sqs.delete_message(QueueUrl=url, ReceiptHandle=messages[0]["ReceiptHandle"])
    message: dict = messages[0]
    return message


def test_sns_to_sqs_raw_and_enveloped(emulator):
    """The recorded run subscribed as an IAM user of the account (SubscriptionPrincipal), so ours
    does too."""
    name = f"rec-sns-{uuid.uuid4().hex[:6]}"
    sqs = emulator.client("sqs")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"
    _, sns = user(emulator, [{"Effect": "Allow", "Action": "sns:*", "Resource": "*"}])
    topic = sns.create_topic(Name=name)["TopicArn"]
    subscribe_queue(emulator, topic, url, arn)
    subscription = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"][0]["SubscriptionArn"]
    sns.set_subscription_attributes(
        SubscriptionArn=subscription, AttributeName="RawMessageDelivery", AttributeValue="true"
    )
    check(
        "sns.subscription-attributes", answer(sns.get_subscription_attributes(SubscriptionArn=subscription))
    )
    sns.publish(
        TopicArn=topic,
        Message="Test msg",
        MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "99.12"}},
    )
    check("sns.raw-delivery", delivered(sqs, url))
    sns.set_subscription_attributes(
        SubscriptionArn=subscription, AttributeName="RawMessageDelivery", AttributeValue="false"
    )
    sns.publish(
        TopicArn=topic,
        Message="Test msg",
        MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "100.12"}},
    )
    check("sns.envelope", json.loads(delivered(sqs, url)["Body"]))
    check("sns.empty-message", refused(lambda: sns.publish(TopicArn=topic, Message="")))
    sns.delete_topic(TopicArn=topic)
    check("sns.unknown-topic", refused(lambda: sns.publish(TopicArn=topic, Message="hello")))


def test_alarm_lifecycle_and_refusals(emulator):
    """A new alarm's description, SetAlarmState refusals, the description after delete."""
    cloudwatch, name = emulator.client("cloudwatch"), f"rec-alarm-{uuid.uuid4().hex[:6]}"
    cloudwatch.put_metric_alarm(
        AlarmName=name,
        MetricName="rec-metric",
        Namespace="RecNamespace",
        EvaluationPeriods=1,
        Period=10,
        Statistic="Sum",
        Threshold=30,
        ComparisonOperator="GreaterThanThreshold",
    )
    check("cloudwatch.new-alarm", answer(cloudwatch.describe_alarms(AlarmNames=[name])))
    check(
        "cloudwatch.invalid-state",
        refused(lambda: cloudwatch.set_alarm_state(AlarmName=name, StateValue="INVALID", StateReason="test")),
    )
    check(
        "cloudwatch.unknown-alarm-state",
        refused(
            lambda: cloudwatch.set_alarm_state(AlarmName=f"{name}-none", StateValue="OK", StateReason="test")
        ),
    )
    cloudwatch.delete_alarms(AlarmNames=[name])
    check("cloudwatch.deleted-alarm", answer(cloudwatch.describe_alarms(AlarmNames=[name])))
