"""The embedded AWS does what CloudWatch does for this stack: alarms on EMF, AWS/SQS and
AWS/Lambda metrics are evaluated (LOCAL_CLOUDWATCH_SPEEDUP times faster than real), change state
with history, and notify SNS topics whose SQS subscribers receive CloudWatch's alarm message;
CloudFormation creates and deletes the alarm-related resource types moto skips."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.exceptions import ClientError

from local.session import LocalSession, wait_for
from test_cloudwatch.metric_sums import recent_sum
from tests.e2e.conftest import ACCOUNT, REGION, pipeline, sns_may_send, subscribe_queue, table

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(40)]

STATE_TIMEOUT = 40  # a 60 s period is 5 s locally; an alarm needs a few periods at most


def alarm_state(session: LocalSession, name: str) -> str:
    state: str = session.client("cloudwatch").describe_alarms(AlarmNames=[name])["MetricAlarms"][0][
        "StateValue"
    ]
    return state


def wait_for_state(session: LocalSession, name: str, state: str) -> None:
    wait_for(
        lambda: alarm_state(session, name) == state,
        timeout=STATE_TIMEOUT,
        interval=0.2,
        what=f"alarm {name} in {state}",
    )


def topic_with_inbox(session: LocalSession, name: str) -> tuple[str, str]:
    """An SNS topic and an SQS queue subscribed to it, whose policy lets the topic deliver:
    (topic ARN, queue URL)."""
    topic = session.client("sns").create_topic(Name=name)["TopicArn"]
    inbox = session.client("sqs").create_queue(QueueName=f"{name}-inbox")["QueueUrl"]
    subscribe_queue(session, topic, inbox, f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}-inbox")
    return topic, inbox


def notifications(session: LocalSession, inbox: str, count: int) -> list[dict]:
    """The first `count` alarm messages delivered to `inbox`, in order of delivery."""
    sqs, received = session.client("sqs"), []

    def more() -> bool:
        for message in sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10, WaitTimeSeconds=1).get(
            "Messages", []
        ):
            received.append(json.loads(json.loads(message["Body"])["Message"]))
            sqs.delete_message(QueueUrl=inbox, ReceiptHandle=message["ReceiptHandle"])
        return len(received) >= count

    wait_for(more, timeout=STATE_TIMEOUT, what=f"{count} notification(s) in {inbox}")
    return sorted(received, key=lambda m: m["StateChangeTime"])


def emf_line(timestamp_ms: int, **values: object) -> str:
    return json.dumps(
        {
            "_aws": {
                "Timestamp": timestamp_ms,
                "CloudWatchMetrics": [
                    {
                        "Namespace": "CwE2E/Checkout",
                        "Dimensions": [["Service"]],
                        "Metrics": [{"Name": "Failures", "Unit": "Count"}],
                    }
                ],
            },
            "Service": "checkout",
            **values,
        }
    )


@pytest.fixture(scope="module")
def emf_alarm(emulator):
    """An alarm on a metric fed by one EMF log line, followed until the data has stopped
    breaching long enough for notBreaching to bring it back to OK."""
    logs, cloudwatch = emulator.client("logs"), emulator.client("cloudwatch")
    topic, inbox = topic_with_inbox(emulator, "cw-e2e-alerts")
    logs.create_log_group(logGroupName="/cw-e2e/checkout")
    logs.create_log_stream(logGroupName="/cw-e2e/checkout", logStreamName="app")
    # Stamped 7 s ago, as a late-arriving line: its (5 s) period has closed when the alarm is
    # created, so the alarm's first evaluation already sees it.
    stamped = int(time.time() * 1000) - 7000
    logs.put_log_events(
        logGroupName="/cw-e2e/checkout",
        logStreamName="app",
        logEvents=[
            {"timestamp": stamped, "message": emf_line(stamped, Failures=3)},
            {"timestamp": stamped, "message": '{"_aws": {"CloudWatchMetrics": "not EMF"}, "Failures": 99}'},
        ],
    )
    cloudwatch.put_metric_alarm(
        AlarmName="cw-e2e-checkout-failures",
        AlarmDescription="checkout failures",
        Namespace="CwE2E/Checkout",
        MetricName="Failures",
        Dimensions=[{"Name": "Service", "Value": "checkout"}],
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=1,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
        TreatMissingData="notBreaching",
        AlarmActions=[topic],
        OKActions=[topic],
    )
    # The ALARM lasts one (5 s) period: a process held up longer than that would never see it in
    # DescribeAlarms, so the two notifications are what is waited for (they wait in the inbox).
    found = notifications(emulator, inbox, 2)
    assert alarm_state(emulator, "cw-e2e-checkout-failures") == "OK"

    def actions_recorded() -> bool:
        # Each action's history item is written once its publish has returned: after the message
        # could already be read from the inbox.
        items = cloudwatch.describe_alarm_history(
            AlarmName="cw-e2e-checkout-failures", HistoryItemType="Action"
        )
        return len(items["AlarmHistoryItems"]) == 2

    wait_for(actions_recorded, timeout=STATE_TIMEOUT, what="both actions in the alarm's history")
    return {"topic": topic, "notifications": found}


def test_emf_alarm_fires_notifies_the_topic_and_recovers(emulator, emf_alarm):
    """INSUFFICIENT_DATA -> ALARM on the EMF datapoint, ALARM -> OK once no data arrives
    (notBreaching); each change reaches the topic's SQS subscriber as CloudWatch's message."""
    alarmed, recovered = emf_alarm["notifications"]
    assert (alarmed["OldStateValue"], alarmed["NewStateValue"]) == ("INSUFFICIENT_DATA", "ALARM")
    assert (recovered["OldStateValue"], recovered["NewStateValue"]) == ("ALARM", "OK")
    assert alarmed["NewStateReason"].startswith("Threshold Crossed: 1 out of the last 1 datapoints [3.0 (")
    assert "treated as [NonBreaching]" in recovered["NewStateReason"]
    assert (
        alarmed["AlarmName"] == "cw-e2e-checkout-failures"
        and alarmed["AlarmDescription"] == "checkout failures"
    )
    assert (alarmed["AWSAccountId"], alarmed["Region"]) == (ACCOUNT, "US East (N. Virginia)")
    assert alarmed["AlarmActions"] == [emf_alarm["topic"]]
    assert alarmed["Trigger"] == {
        "MetricName": "Failures",
        "Namespace": "CwE2E/Checkout",
        "StatisticType": "Statistic",
        "Statistic": "SUM",
        "Unit": None,
        "Dimensions": [{"value": "checkout", "name": "Service"}],
        "Period": 60,
        "EvaluationPeriods": 1,
        "DatapointsToAlarm": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "Threshold": 1.0,
        "TreatMissingData": "notBreaching",
        "EvaluateLowSampleCountPercentile": "",
    }
    alarm = emulator.client("cloudwatch").describe_alarms(AlarmNames=["cw-e2e-checkout-failures"])[
        "MetricAlarms"
    ][0]
    assert json.loads(alarm["StateReasonData"])["version"] == "1.0"


def test_emf_line_is_a_metric_and_invalid_emf_is_not(emulator, emf_alarm):
    """Only the valid EMF line became a datapoint (3 failures), with its declared unit."""
    now = datetime.now(UTC)
    points = emulator.client("cloudwatch").get_metric_statistics(
        Namespace="CwE2E/Checkout",
        MetricName="Failures",
        Dimensions=[{"Name": "Service", "Value": "checkout"}],
        StartTime=now - timedelta(minutes=10),
        EndTime=now,
        Period=3600,
        Statistics=["Sum", "SampleCount"],
    )["Datapoints"]
    assert [(p["Sum"], p["SampleCount"], p["Unit"]) for p in points] == [(3.0, 1.0, "Count")]


def test_alarm_history_records_state_updates_and_actions(emulator, emf_alarm):
    """DescribeAlarmHistory: the creation, both state updates (with old and new state in
    HistoryData) and one successful SNS action per change, newest first; filters work."""
    cloudwatch = emulator.client("cloudwatch")
    items = cloudwatch.describe_alarm_history(AlarmName="cw-e2e-checkout-failures")["AlarmHistoryItems"]
    assert [(i["HistoryItemType"], i["HistorySummary"]) for i in items] == [
        ("Action", f"Successfully executed action {emf_alarm['topic']}"),
        ("StateUpdate", "Alarm updated from ALARM to OK"),
        ("Action", f"Successfully executed action {emf_alarm['topic']}"),
        ("StateUpdate", "Alarm updated from INSUFFICIENT_DATA to ALARM"),
        ("ConfigurationUpdate", 'Alarm "cw-e2e-checkout-failures" created'),
    ]
    update = json.loads(items[3]["HistoryData"])
    assert (update["oldState"]["stateValue"], update["newState"]["stateValue"]) == (
        "INSUFFICIENT_DATA",
        "ALARM",
    )
    assert update["newState"]["stateReasonData"]["recentDatapoints"] == [3.0]
    action = json.loads(items[0]["HistoryData"])
    assert (action["actionState"], action["notificationResource"]) == ("Succeeded", emf_alarm["topic"])
    oldest_first = cloudwatch.describe_alarm_history(
        AlarmName="cw-e2e-checkout-failures",
        HistoryItemType="StateUpdate",
        ScanBy="TimestampAscending",
        MaxRecords=1,
    )
    assert [i["HistorySummary"] for i in oldest_first["AlarmHistoryItems"]] == [
        "Alarm updated from INSUFFICIENT_DATA to ALARM"
    ]
    assert oldest_first["NextToken"]
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert (
        cloudwatch.describe_alarm_history(
            AlarmName="cw-e2e-checkout-failures", StartDate=later, EndDate=later + timedelta(minutes=1)
        )["AlarmHistoryItems"]
        == []
    )


def test_queue_depth_alarm_follows_a_message_in_and_out(emulator):
    """An alarm on AWS/SQS ApproximateNumberOfMessagesVisible: OK while the queue is empty
    (SetAlarmState's ALARM lasts until the next evaluation), ALARM once a message waits (and
    stays so when the alarm is put again), OK after it is deleted; the other metrics exist."""
    sqs, cloudwatch = emulator.client("sqs"), emulator.client("cloudwatch")
    queue = sqs.create_queue(QueueName="cw-e2e-depth")["QueueUrl"]
    alarm = {
        "AlarmName": "cw-e2e-depth",
        "Namespace": "AWS/SQS",
        "MetricName": "ApproximateNumberOfMessagesVisible",
        "Dimensions": [{"Name": "QueueName", "Value": "cw-e2e-depth"}],
        "Statistic": "Maximum",
        "Period": 60,
        "EvaluationPeriods": 1,
        "Threshold": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
    }
    cloudwatch.put_metric_alarm(**alarm)
    assert alarm_state(emulator, "cw-e2e-depth") in ("INSUFFICIENT_DATA", "OK")
    wait_for_state(emulator, "cw-e2e-depth", "OK")
    cloudwatch.set_alarm_state(AlarmName="cw-e2e-depth", StateValue="ALARM", StateReason="drill")
    wait_for_state(emulator, "cw-e2e-depth", "OK")
    summaries = [
        i["HistorySummary"]
        for i in cloudwatch.describe_alarm_history(AlarmName="cw-e2e-depth", HistoryItemType="StateUpdate")[
            "AlarmHistoryItems"
        ]
    ]
    assert summaries[:2] == ["Alarm updated from ALARM to OK", "Alarm updated from OK to ALARM"]
    sqs.send_message(QueueUrl=queue, MessageBody="waiting")
    wait_for_state(emulator, "cw-e2e-depth", "ALARM")
    cloudwatch.put_metric_alarm(**alarm, AlarmDescription="updated")
    assert alarm_state(emulator, "cw-e2e-depth") == "ALARM"
    message = sqs.receive_message(QueueUrl=queue)["Messages"][0]
    sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    wait_for_state(emulator, "cw-e2e-depth", "OK")
    listed = cloudwatch.list_metrics(
        Namespace="AWS/SQS", Dimensions=[{"Name": "QueueName", "Value": "cw-e2e-depth"}]
    )
    assert {m["MetricName"] for m in listed["Metrics"]} == {
        "ApproximateNumberOfMessagesVisible",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
        "ApproximateAgeOfOldestMessage",
        "NumberOfMessagesSent",
        "NumberOfMessagesReceived",
        "NumberOfMessagesDeleted",
        "NumberOfEmptyReceives",
    }


EMITTER = """
import json, time

def handler(event, context):
    print(json.dumps({"_aws": {"Timestamp": int(time.time() * 1000), "CloudWatchMetrics": [{
        "Namespace": "CwE2E/Emitter", "Dimensions": [["Function"]], "Metrics": [{"Name": "Handled"}]}]},
        "Function": context.function_name, "Handled": 1}))
    if event.get("fail"):
        raise RuntimeError("asked to fail")
    return {"ok": True}
"""


def test_lambda_metrics_and_emf_through_the_host(emulator):
    """Three invocations through the local host (one failing): AWS/Lambda Invocations 3,
    Errors 1, a Duration each and ConcurrentExecutions; the function's EMF output (written by
    the host with PutLogEvents) becomes its own metric."""
    pipeline(emulator, "cw-e2e-emitter", source=EMITTER, create_mapping=False)
    lambda_api, cloudwatch = emulator.client("lambda"), emulator.client("cloudwatch")
    for event in ({}, {"fail": True}, {}):
        lambda_api.invoke(FunctionName="cw-e2e-emitter", Payload=json.dumps(event))

    def stat(namespace: str, metric: str, statistic: str, dimension: str) -> float | None:
        now = datetime.now(UTC)
        points = cloudwatch.get_metric_statistics(
            Namespace=namespace,
            MetricName=metric,
            Dimensions=[{"Name": dimension, "Value": "cw-e2e-emitter"}],
            StartTime=now - timedelta(minutes=10),
            EndTime=now + timedelta(minutes=1),
            Period=3600,
            Statistics=[statistic],
        )["Datapoints"]
        return points[0][statistic] if points else None

    def lambda_stat(metric: str, statistic: str = "Sum") -> float | None:
        return stat("AWS/Lambda", metric, statistic, "FunctionName")

    wait_for(lambda: lambda_stat("Invocations") == 3, timeout=20, what="3 Invocations")
    assert lambda_stat("Errors") == 1
    assert lambda_stat("Duration", "SampleCount") == 3
    wait_for(
        lambda: stat("CwE2E/Emitter", "Handled", "Sum", "Function") == 3, timeout=20, what="3 Handled via EMF"
    )
    assert (
        wait_for(
            lambda: lambda_stat("ConcurrentExecutions", "Maximum"), timeout=20, what="ConcurrentExecutions"
        )
        == 1
    )


def test_injected_dynamodb_throttling_shows_in_its_metrics(emulator):
    """Two throttled PutItem attempts (faults injected by embedded_aws/faults.py; the SDK retries past
    them) count in AWS/DynamoDB ThrottledRequests (TableName, Operation) and WriteThrottleEvents."""
    table(emulator, "cw-e2e-throttled")
    emulator.inject_fault(
        action="PutItem",
        table="cw-e2e-throttled",
        code="ProvisionedThroughputExceededException",
        status=400,
        count=2,
    )
    emulator.client("dynamodb").put_item(TableName="cw-e2e-throttled", Item={"id": {"S": "x"}})
    cloudwatch = emulator.client("cloudwatch")

    def total(metric: str, dimensions: dict[str, str]) -> float:
        return recent_sum(cloudwatch, "AWS/DynamoDB", metric, dimensions)

    assert total("ThrottledRequests", {"TableName": "cw-e2e-throttled", "Operation": "PutItem"}) == 2
    assert total("WriteThrottleEvents", {"TableName": "cw-e2e-throttled"}) == 2


TEMPLATE = {
    "Resources": {
        "Alerts": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "cw-e2e-stack-alerts"}},
        "Inbox": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cw-e2e-stack-inbox"}},
        "InboxPolicy": {
            "Type": "AWS::SQS::QueuePolicy",
            "Properties": {
                "Queues": [{"Ref": "Inbox"}],
                "PolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [sns_may_send({"Ref": "Alerts"}, {"Fn::GetAtt": ["Inbox", "Arn"]})],
                },
            },
        },
        "InboxSubscription": {
            "Type": "AWS::SNS::Subscription",
            "Properties": {
                "TopicArn": {"Ref": "Alerts"},
                "Protocol": "sqs",
                "Endpoint": {"Fn::GetAtt": ["Inbox", "Arn"]},
                "RawMessageDelivery": "true",
            },
        },
        "AlertsPolicy": {
            "Type": "AWS::SNS::TopicPolicy",
            "Properties": {
                "Topics": [{"Ref": "Alerts"}],
                "PolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "CloudWatchPublishes",
                            "Effect": "Allow",
                            "Principal": {"Service": "cloudwatch.amazonaws.com"},
                            "Action": "sns:Publish",
                            "Resource": {"Ref": "Alerts"},
                        }
                    ],
                },
            },
        },
        "Depth": {
            "Type": "AWS::CloudWatch::Alarm",
            "Properties": {
                "AlarmName": "cw-e2e-stack-depth",
                "Namespace": "AWS/SQS",
                "MetricName": "ApproximateNumberOfMessagesVisible",
                "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["Inbox", "QueueName"]}}],
                "Statistic": "Maximum",
                "Period": 60,
                "EvaluationPeriods": 1,
                "Threshold": 1,
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "AlarmActions": [{"Ref": "Alerts"}],
            },
        },
        "Logs": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "/cw-e2e-stack/app"}},
        "Errors": {
            "Type": "AWS::Logs::QueryDefinition",
            "Properties": {
                "Name": "cw-e2e-stack/errors",
                "QueryString": "fields @message | filter @message like /ERROR/",
                "LogGroupNames": [{"Ref": "Logs"}],
            },
        },
        "ErrorCount": {
            "Type": "AWS::Logs::MetricFilter",
            "Properties": {
                "LogGroupName": {"Ref": "Logs"},
                "FilterPattern": "ERROR",
                "MetricTransformations": [
                    {"MetricName": "Errors", "MetricNamespace": "CwE2E/Stack", "MetricValue": "1"}
                ],
            },
        },
        "Board": {
            "Type": "AWS::CloudWatch::Dashboard",
            "Properties": {"DashboardName": "cw-e2e-stack", "DashboardBody": json.dumps({"widgets": []})},
        },
        "ReadAlarms": {
            "Type": "AWS::IAM::ManagedPolicy",
            "Properties": {
                "ManagedPolicyName": "cw-e2e-stack-read-alarms",
                "PolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {"Effect": "Allow", "Action": "cloudwatch:DescribeAlarms", "Resource": "*"}
                    ],
                },
            },
        },
    },
    "Outputs": {
        "AlarmArn": {"Value": {"Fn::GetAtt": ["Depth", "Arn"]}},
        "QueryDefinitionId": {"Value": {"Ref": "Errors"}},
    },
}
TOPIC = f"arn:aws:sns:{REGION}:{ACCOUNT}:cw-e2e-stack-alerts"


def stack_resources(session: LocalSession) -> dict[str, object]:
    """What the template's resources look like through the APIs (empty when they are gone)."""
    cloudwatch, logs, sns, iam = (session.client(s) for s in ("cloudwatch", "logs", "sns", "iam"))
    try:
        subscriptions = [
            (s["Protocol"], s["Endpoint"])
            for s in sns.list_subscriptions_by_topic(TopicArn=TOPIC)["Subscriptions"]
        ]
        policy = json.loads(sns.get_topic_attributes(TopicArn=TOPIC)["Attributes"]["Policy"])
    except ClientError:
        subscriptions, policy = [], None
    return {
        "alarms": [
            a["AlarmName"] for a in cloudwatch.describe_alarms(AlarmNamePrefix="cw-e2e-stack")["MetricAlarms"]
        ],
        "queries": [
            (q["name"], q["logGroupNames"])
            for q in logs.describe_query_definitions(queryDefinitionNamePrefix="cw-e2e-stack")[
                "queryDefinitions"
            ]
        ],
        "filters": [
            f["metricTransformations"][0]["metricName"]
            for f in logs.describe_metric_filters(filterNamePrefix="cw-e2e-stack")["metricFilters"]
        ],
        "subscriptions": subscriptions,
        "policy": policy and [s.get("Sid") for s in policy["Statement"]],
        "dashboards": [
            d["DashboardName"]
            for d in cloudwatch.list_dashboards(DashboardNamePrefix="cw-e2e-stack")["DashboardEntries"]
        ],
        "policies": [
            p["PolicyName"]
            for p in iam.list_policies(Scope="Local")["Policies"]
            if p["PolicyName"].startswith("cw-e2e-stack")
        ],
    }


def test_stack_creates_and_deletes_alarm_resources(emulator):
    """A CloudFormation stack with an alarm, a query definition, a metric filter, an SQS
    subscription and a topic policy (plus moto's own topic, dashboard and managed policy)
    creates every one of them, and deleting the stack removes every one of them."""
    cloudformation = emulator.client("cloudformation")
    cloudformation.create_stack(StackName="cw-e2e-stack", TemplateBody=json.dumps(TEMPLATE))
    stack = wait_for(
        lambda: [
            s
            for s in cloudformation.describe_stacks(StackName="cw-e2e-stack")["Stacks"]
            if s["StackStatus"] != "CREATE_IN_PROGRESS"
        ],
        timeout=30,
        what="the stack",
    )[0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
    assert outputs["AlarmArn"] == f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:cw-e2e-stack-depth"
    assert stack_resources(emulator) == {
        "alarms": ["cw-e2e-stack-depth"],
        "queries": [("cw-e2e-stack/errors", ["/cw-e2e-stack/app"])],
        "filters": ["Errors"],
        "subscriptions": [("sqs", f"arn:aws:sqs:{REGION}:{ACCOUNT}:cw-e2e-stack-inbox")],
        "policy": ["CloudWatchPublishes"],
        "dashboards": ["cw-e2e-stack"],
        "policies": ["cw-e2e-stack-read-alarms"],
    }
    resources = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cloudformation.list_stack_resources(StackName="cw-e2e-stack")["StackResourceSummaries"]
    }
    assert resources["Errors"] == outputs["QueryDefinitionId"]
    logs = emulator.client("logs")
    assert [
        f["filterName"]
        for f in logs.describe_metric_filters(logGroupName="/cw-e2e-stack/app")["metricFilters"]
    ] == [resources["ErrorCount"]]

    cloudformation.delete_stack(StackName="cw-e2e-stack")

    def deleted() -> bool:
        try:
            stacks = cloudformation.describe_stacks(StackName="cw-e2e-stack")["Stacks"]
        except ClientError:
            return True
        return all(s["StackStatus"] == "DELETE_COMPLETE" for s in stacks)

    wait_for(deleted, timeout=30, what="the stack to be deleted")
    assert stack_resources(emulator) == {
        "alarms": [],
        "queries": [],
        "filters": [],
        "subscriptions": [],
        "policy": None,
        "dashboards": [],
        "policies": [],
    }


def test_query_definition_apis_are_authorized_by_iam(emulator):
    """logs:PutQueryDefinition, DescribeQueryDefinitions and DeleteQueryDefinition are IAM
    actions like any other: a caller allowed only to describe can describe, not put or delete."""
    iam = emulator.client("iam")
    iam.create_user(UserName="cw-e2e-reader")
    iam.put_user_policy(
        UserName="cw-e2e-reader",
        PolicyName="describe-only",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Action": "logs:DescribeQueryDefinitions", "Resource": "*"}
                ],
            }
        ),
    )
    key = iam.create_access_key(UserName="cw-e2e-reader")["AccessKey"]
    reader = boto3.client(
        "logs",
        region_name=REGION,
        endpoint_url=emulator.require_state()["endpoint"],
        aws_access_key_id=key["AccessKeyId"],
        aws_secret_access_key=key["SecretAccessKey"],
    )
    admin = emulator.client("logs")
    definition = admin.put_query_definition(name="cw-e2e-iam/errors", queryString="fields @message")[
        "queryDefinitionId"
    ]
    assert [
        d["queryDefinitionId"]
        for d in reader.describe_query_definitions(queryDefinitionNamePrefix="cw-e2e-iam")["queryDefinitions"]
    ] == [definition]
    for call in (
        lambda: reader.put_query_definition(name="cw-e2e-iam/mine", queryString="fields @message"),
        lambda: reader.delete_query_definition(queryDefinitionId=definition),
    ):
        with pytest.raises(ClientError) as denied:
            call()
        assert denied.value.response["Error"]["Code"] == "AccessDeniedException"
    assert admin.delete_query_definition(queryDefinitionId=definition)["success"] is True
    with pytest.raises(ClientError) as missing:
        admin.delete_query_definition(queryDefinitionId=definition)
    assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"
