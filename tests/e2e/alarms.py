"""What the alarm tests share (test_alarms.py, test_alarms_failures.py): a stack with short local
timeouts and an on-call inbox subscribed to its alarm topic, and the reads of alarm states and of
the notifications that reach the inbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest

from local.session import LocalError, wait_for
from stacks.config import METRICS_NAMESPACE
from tests.e2e.conftest import subscribe_queue
from tests.shared_aws import FAST_TIMEOUTS

DEADLINE = 60  # a few scaled periods, on a loaded machine


@contextmanager
def alarm_stack(shared_aws, tmp_path_factory, prefix: str) -> Iterator[tuple]:
    """(session, the user's environment, the stack's outputs) of a stack under `prefix`."""
    with shared_aws.stack({**FAST_TIMEOUTS, "prefix": prefix}, tmp_path_factory.mktemp(prefix)) as session:
        yield session, session.user_env(), session.outputs()


def alarm_fixtures(prefix: str) -> tuple:
    """A module's `stack` (alarm_stack under `prefix`) and `inbox` (subscribed to its topic)
    fixtures: `stack, inbox = alarm_fixtures(PREFIX)`."""

    @pytest.fixture(scope="module", name="stack")
    def stack_fixture(shared_aws, tmp_path_factory):
        with alarm_stack(shared_aws, tmp_path_factory, prefix) as deployed:
            yield deployed

    @pytest.fixture(scope="module", name="inbox")
    def inbox_fixture(stack):
        return subscribed_inbox(stack, prefix)

    return stack_fixture, inbox_fixture


def subscribed_inbox(stack: tuple, prefix: str) -> str:
    """An SQS queue subscribed to the stack's alarm topic, as an on-call tool would be, with the
    queue policy that lets the topic deliver (without it AWS, and the embedded AWS, deliver nothing)."""
    session, _, outputs = stack
    sqs = session.client("sqs")
    url: str = sqs.create_queue(QueueName=f"{prefix}-oncall-inbox")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    subscribe_queue(session, outputs["AlarmTopicArn"], url, arn)
    return url


def state(session, name: str) -> str:
    alarms = session.client("cloudwatch").describe_alarms(AlarmNames=[name])["MetricAlarms"]
    value: str = alarms[0]["StateValue"]
    return value


def wait_state(session, name: str, wanted: str) -> None:
    wait_for(
        lambda: state(session, name) == wanted, timeout=DEADLINE, interval=0.25, what=f"{name} in {wanted}"
    )


def out_of_alarm(session, name: str) -> datetime:
    """Wait until `name` has left an ALARM an earlier test (or a failed write on a loaded machine)
    set: the decision alarms hold it for ten minutes, 50 s here. Returns the time from which a
    notification is this test's own."""
    wait_for(
        lambda: state(session, name) != "ALARM",
        timeout=DEADLINE,
        interval=0.25,
        what=f"{name} out of ALARM (an earlier failure set it)",
    )
    return datetime.now(UTC) - timedelta(seconds=1)


# Alarm messages read from each inbox and not yet claimed by a test: one read can bring several
# (an ALARM and the OK that followed it, when the test process was held up between two reads),
# and a message read while waiting for another stays here for the next wait instead of being lost.
_unclaimed: dict[str, list[dict]] = {}


def take_notifications(sqs, inbox: str) -> list[dict]:
    """The alarm messages waiting in the inbox (at most ten), parsed, and deleted from it."""
    found = []
    for message in sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10, WaitTimeSeconds=1).get(
        "Messages", []
    ):
        found.append(json.loads(json.loads(message["Body"])["Message"]))
        sqs.delete_message(QueueUrl=inbox, ReceiptHandle=message["ReceiptHandle"])
    return found


def changed_at(message: dict) -> datetime:
    """When the alarm message's state change happened."""
    return datetime.strptime(message["StateChangeTime"], "%Y-%m-%dT%H:%M:%S.%f%z")


def entered(message: dict, new_state: str, since: datetime) -> bool:
    """`message` reports a change into `new_state` at `since` or later."""
    return message["NewStateValue"] == new_state and changed_at(message) >= since


def notification(session, inbox: str, alarm: str, new_state: str, since: datetime) -> dict:
    """The CloudWatch alarm message for `alarm` entering `new_state` at `since` or later (an
    earlier test's change of the same alarm may still be in the inbox), as delivered to it."""
    sqs, unclaimed = session.client("sqs"), _unclaimed.setdefault(inbox, [])

    def arrived() -> dict | None:
        unclaimed.extend(take_notifications(sqs, inbox))
        found = next((m for m in unclaimed if m["AlarmName"] == alarm and entered(m, new_state, since)), None)
        if found is not None:
            unclaimed.remove(found)
        return found

    message = wait_for(arrived, timeout=DEADLINE, what=f"a {new_state} notification for {alarm}")
    assert message is not None  # wait_for returns only a truthy answer
    return message


def notifications(session, inbox: str, alarms: set[str], new_state: str, since: datetime) -> set[str]:
    """Wait until each of `alarms` was notified entering `new_state` at `since` or later (one
    reader for all: a message read while waiting for one alarm is not lost for another)."""
    sqs, unclaimed = session.client("sqs"), _unclaimed.setdefault(inbox, [])
    found: set[str] = set()

    def all_arrived() -> bool:
        unclaimed.extend(take_notifications(sqs, inbox))
        for m in list(unclaimed):
            if m["AlarmName"] in alarms and entered(m, new_state, since):
                found.add(m["AlarmName"])
                unclaimed.remove(m)
        return found == alarms

    try:
        wait_for(all_arrived, timeout=DEADLINE, what=f"{new_state} notifications for {sorted(alarms)}")
    except LocalError as error:
        raise AssertionError(f"{error}; arrived: {sorted(found)}") from None
    return found


def send(session, env, order: dict) -> str:
    """Send `order` to the stack's jobs queue; its message id."""
    sent = session.client("sqs").send_message(QueueUrl=env["QUEUE_URL"], MessageBody=json.dumps(order))
    message_id: str = sent["MessageId"]
    return message_id


def decision_sums(session, function_name: str, since: datetime) -> dict[str, float]:
    cloudwatch = session.client("cloudwatch")
    sums = {}
    for name in ("Accepted", "Duplicate", "Conflict", "Malformed", "Error"):
        points = cloudwatch.get_metric_statistics(
            Namespace=METRICS_NAMESPACE,
            MetricName=name,
            Dimensions=[{"Name": "FunctionName", "Value": function_name}],
            StartTime=since,
            EndTime=datetime.now(UTC) + timedelta(minutes=1),
            Period=60,
            Statistics=["Sum"],
        )
        sums[name] = sum(point["Sum"] for point in points["Datapoints"])
    return sums
