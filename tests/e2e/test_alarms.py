"""The stack's alarms fire on a laptop: the deployed worker's decision metrics count exactly the
lab scenario, a conflicting copy of a stored order turns `<prefix>-conflicting-orders` to ALARM
and notifies an SQS queue subscribed to `<prefix>-alarms`, a malformed order in the DLQ turns
`<prefix>-dead-letters` to ALARM and emptying the DLQ turns it back to OK. (The embedded AWS
evaluates a 60 s period in 5 s: docs/local-fidelity.md.)"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest

from local.session import ROOT, wait_for
from ops import cost, observe
from ops.aws import Clients, Endpoint
from ops.cost_model import Prices
from ops.prove_alarms import REASON
from ops.snapshot import resolve_target
from stacks.config import METRICS_NAMESPACE, Names
from tests.e2e.alarms import (
    DEADLINE,
    alarm_fixtures,
    changed_at,
    decision_sums,
    notification,
    out_of_alarm,
    send,
    state,
    wait_state,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(80)]

PREFIX = "alarms"

stack, inbox = alarm_fixtures(PREFIX)


def prove_alarms(session, *args: str) -> subprocess.CompletedProcess:
    """`python -m ops prove-alarms --prefix <PREFIX> ...` with the stack's endpoint and keys."""
    env = session.process_env()
    return subprocess.run(
        [sys.executable, "-m", "ops", "prove-alarms", "--prefix", PREFIX, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_every_alarm_exists_with_its_name_and_starts_without_alarming(stack):
    session, _, _ = stack
    names = [
        alarm["name"] for alarm in observe.alarms(session.client("cloudwatch"), list(Names(PREFIX).alarms))
    ]
    assert names == sorted(
        f"{PREFIX}-{what}"
        for what in (
            "conflicting-orders",
            "failed-records",
            "malformed-jobs",
            "dead-letters",
            "new-dead-letters",
            "dead-letter-expiry",
            "oldest-job-age",
            "worker-errors",
            "worker-throttles",
            "orders-throttled",
        )
    )
    assert all(state(session, name) in ("OK", "INSUFFICIENT_DATA") for name in names)


def test_decision_metrics_count_exactly_the_lab_scenario(stack):
    """dedup-order x3 and other-order x1: 2 accepted, 2 duplicates, nothing else."""
    session, env, _ = stack
    since = datetime.now(UTC) - timedelta(minutes=1)
    send(session, env, {"id": "dedup-order", "quantity": 4})
    wait_for(
        lambda: decision_sums(session, env["FUNCTION_NAME"], since)["Accepted"] == 1,
        timeout=DEADLINE,
        what="the first order's Accepted metric",
    )
    for order in ({"id": "dedup-order", "quantity": 4},) * 2 + ({"id": "other-order", "quantity": 1},):
        send(session, env, order)
    expected = {"Accepted": 2, "Duplicate": 2, "Conflict": 0, "Malformed": 0, "Error": 0}
    seen: dict[str, float] = {}
    wait_for(
        lambda: seen.update(decision_sums(session, env["FUNCTION_NAME"], since)) or seen == expected,
        timeout=DEADLINE,
        what=lambda: f"decision metrics {expected}, last seen {seen}",
    )


def test_ops_cost_prices_the_lab_scenario_from_the_local_metrics(stack):
    """Right after the lab scenario, `ops cost` on the local stack counts its 2 orders, its 4
    messages sent, at least 4 invocations and the write units of its 4 conditional PutItems (the
    rejected duplicates too), the pollers' empty receives and the bytes its log group took in,
    reads the function's memory and architecture, and names as missing only the read units nothing
    consumed; the services add up to the total."""
    session, _, _ = stack
    clients = Clients(Endpoint.from_env(session.aws_env()))
    target = resolve_target(clients, PREFIX)
    report: dict = {}

    def counted() -> bool:
        report.update(cost.measure(clients, target, 10, Prices.load()))
        enough: bool = (
            report["metrics"]["sqs_sent"] >= 4
            and report["metrics"]["lambda_invocations"] >= 4
            and report["metrics"]["dynamodb_write_units"] >= 4
            and report["metrics"]["sqs_empty_receives"] > 0
            and report["metrics"]["logs_incoming_bytes"] > 0
        )
        return enough

    wait_for(
        counted, timeout=DEADLINE, what=lambda: f"the lab scenario in ops cost, last {report.get('metrics')}"
    )
    assert report["orders"] == 2
    assert report["metrics"]["sqs_sent"] == 4
    # The deployed function's own settings: the stack's arm64 at 256 MB.
    assert report["function"] == {"memory_mb": 256, "architecture": "arm64", "from": "the function"}
    assert report["metrics"]["dynamodb_write_units"] >= 4  # more if a write was retried
    assert report["by_service"]["sqs"] > 0 and report["by_service"]["lambda"] > 0
    assert report["by_service"]["dynamodb"] > 0 and report["by_service"]["logs"] > 0
    assert sum(report["by_service"].values()) == pytest.approx(report["usd"])
    # The fixed costs from the deployed template: its dashboard, and as many alarm metrics as the
    # alarms CloudWatch holds for the stack read (one each, or each metric of a math alarm).
    fixed = report["fixed_monthly"]
    assert fixed is not None, report["missing"]
    held = session.client("cloudwatch").describe_alarms(AlarmNames=list(Names(PREFIX).alarms))["MetricAlarms"]
    assert len(held) == len(Names(PREFIX).alarms)
    read = sum(len([q for q in a["Metrics"] if "MetricStat" in q]) if a.get("Metrics") else 1 for a in held)
    assert fixed["units"]["alarm_metrics"] == read and fixed["units"]["dashboards"] == 1
    assert sum(fixed["by_item"].values()) == pytest.approx(fixed["usd_per_month"])
    # Nothing in the scenario reads the orders table with GetItem: no read units.
    assert "AWS/DynamoDB ConsumedReadCapacityUnits" in report["missing"]
    assert not {
        "AWS/SQS NumberOfEmptyReceives",
        "AWS/Logs IncomingBytes",
        "AWS/SQS NumberOfMessagesSent",
        "AWS/Lambda Invocations",
        "AWS/Lambda Duration",
        "AWS/DynamoDB ConsumedWriteCapacityUnits",
    } & set(report["missing"])


def test_a_conflicting_copy_raises_the_conflict_alarm_and_notifies_the_topic(stack, inbox):
    session, env, _ = stack
    name = f"{PREFIX}-conflicting-orders"
    since = out_of_alarm(session, name)
    send(session, env, {"id": "dedup-order", "quantity": 5})  # stored with quantity 4 by the lab scenario
    wait_state(session, name, "ALARM")
    message = notification(session, inbox, name, "ALARM", since)
    assert (
        message["Trigger"]["MetricName"] == "Conflict"
        and message["Trigger"]["Namespace"] == METRICS_NAMESPACE
    )
    assert message["NewStateReason"].startswith("Threshold Crossed")
    history = session.client("cloudwatch").describe_alarm_history(
        AlarmName=name, HistoryItemType="StateUpdate"
    )
    assert any("to ALARM" in item["HistorySummary"] for item in history["AlarmHistoryItems"])


def test_a_dead_letter_raises_the_dlq_alarm_and_an_empty_dlq_clears_it(stack, inbox):
    """A malformed order in the DLQ (sent there directly: the way there through five failed
    deliveries is tests/e2e/test_reliability_bad_input.py) turns the alarm to ALARM; emptying
    the DLQ turns it back to OK, and both changes are notified."""
    session, env, _ = stack
    name = f"{PREFIX}-dead-letters"
    sqs = session.client("sqs")
    since = out_of_alarm(session, name)
    sqs.send_message(QueueUrl=env["DLQ_URL"], MessageBody='{"id": "broken", "quantity": "lots"}')
    wait_state(session, name, "ALARM")
    alarmed = notification(session, inbox, name, "ALARM", since)
    metrics = alarmed["Trigger"]["Metrics"]
    assert [m["Expression"] for m in metrics if "Expression" in m] == [
        "visible + held"
    ]  # in flight counts too
    # Each wait has its deadline (a few periods); how long the two took together is the machine's.
    sqs.purge_queue(QueueUrl=env["DLQ_URL"])
    wait_state(session, name, "OK")
    notification(session, inbox, name, "OK", changed_at(alarmed))


def test_a_second_dead_letter_notifies_while_the_first_still_waits(stack, inbox):
    """One dead letter waits (dead-letters stays in ALARM, so it notifies nothing more); a
    second one still notifies: new-dead-letters (the rise of the DLQ depth, visible + in flight,
    plus the DLQ's deletes) goes to ALARM for each arrival and back to OK in between."""
    session, env, _ = stack
    sqs, name = session.client("sqs"), f"{PREFIX}-new-dead-letters"
    # The previous test's dead letter raised this alarm too: its changes are not this test's.
    since = out_of_alarm(session, name)
    sqs.send_message(QueueUrl=env["DLQ_URL"], MessageBody='{"id": "first-dead", "quantity": "x"}')
    wait_state(session, f"{PREFIX}-dead-letters", "ALARM")
    alarmed = notification(session, inbox, name, "ALARM", since)
    calmed = notification(session, inbox, name, "OK", changed_at(alarmed))  # the depth stopped rising
    sqs.send_message(QueueUrl=env["DLQ_URL"], MessageBody='{"id": "second-dead", "quantity": "y"}')
    message = notification(session, inbox, name, "ALARM", changed_at(calmed))
    assert [m["Expression"] for m in message["Trigger"]["Metrics"] if "Expression" in m] == [
        "DIFF(depth) + deleted",
        "visible + held",
    ]
    assert state(session, f"{PREFIX}-dead-letters") == "ALARM"
    drained = 0
    while drained < 2:  # PurgeQueue runs once a minute per queue, and the previous test used it
        for message in sqs.receive_message(
            QueueUrl=env["DLQ_URL"], MaxNumberOfMessages=10, WaitTimeSeconds=1
        ).get("Messages", []):
            sqs.delete_message(QueueUrl=env["DLQ_URL"], ReceiptHandle=message["ReceiptHandle"])
            drained += 1
    wait_state(session, f"{PREFIX}-dead-letters", "OK")


def test_a_denied_write_alarms_failed_records_at_its_first_attempt(stack, inbox):
    """An explicit Deny of dynamodb:PutItem added to the worker's role: the record fails with
    AccessDenied inside a successful invocation (batchItemFailures, Lambda's Errors stays 0), and
    the worker's Error decision turns `<prefix>-failed-records` to ALARM and notifies the topic
    within a minute, long before the message could reach the DLQ."""
    session, env, _ = stack
    role = (
        session.client("lambda")
        .get_function_configuration(FunctionName=env["FUNCTION_NAME"])["Role"]
        .split("/")[-1]
    )
    iam = session.client("iam")
    deny = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Deny", "Action": "dynamodb:PutItem", "Resource": "*"}],
    }
    name = f"{PREFIX}-failed-records"
    since = out_of_alarm(session, name)
    iam.put_role_policy(RoleName=role, PolicyName="deny-writes", PolicyDocument=json.dumps(deny))
    try:
        send(session, env, {"id": "denied-order", "quantity": 2})
        wait_state(session, name, "ALARM")
        message = notification(session, inbox, name, "ALARM", since)
        assert message["Trigger"]["MetricName"] == "Error"
    finally:
        iam.delete_role_policy(RoleName=role, PolicyName="deny-writes")


def alarm_states(session) -> dict[str, tuple[str, str]]:
    """Every alarm of the stack: (state, reason)."""
    found = session.client("cloudwatch").describe_alarms(AlarmNames=list(Names(PREFIX).alarms))[
        "MetricAlarms"
    ]
    return {a["AlarmName"]: (a["StateValue"], a["StateReason"]) for a in found}


def not_back(session, before: dict[str, tuple[str, str]], since: datetime) -> dict[str, tuple[str, str]]:
    """The alarms prove-alarms left in its test state, with what they show: one still carrying the
    test reason, or one that entered the test state after `since` and left it for neither its
    prior (state, reason) nor a state CloudWatch's own evaluation set (which may run at any time:
    every 5 s here, also on alarms prove-alarms leaves alone)."""
    cloudwatch, wrong = session.client("cloudwatch"), {}
    for name, now in alarm_states(session).items():
        if now[1] == REASON:
            wrong[name] = now
            continue
        items = cloudwatch.describe_alarm_history(
            AlarmName=name, HistoryItemType="StateUpdate", StartDate=since, ScanBy="TimestampAscending"
        )["AlarmHistoryItems"]
        changes = [json.loads(item["HistoryData"]) for item in items]
        for change in changes:
            if change["oldState"].get("stateReason") != REASON:
                continue
            left_for = (change["newState"]["stateValue"], change["newState"].get("stateReason"))
            if left_for != before[name] and not str(left_for[1]).startswith("Threshold Crossed"):
                wrong[name] = left_for
    return wrong


@contextmanager
def without_confirmed_subscribers(session, topic: str) -> Iterator[None]:
    """The topic as the default stack has it, with no confirmed subscriber (whatever an earlier
    test subscribed is unsubscribed for the while, and subscribed again after)."""
    sns = session.client("sns")
    confirmed = [
        s
        for s in sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
        if s["SubscriptionArn"].startswith("arn:")
    ]
    for s in confirmed:
        sns.unsubscribe(SubscriptionArn=s["SubscriptionArn"])
    try:
        yield
    finally:
        for s in confirmed:
            sns.subscribe(TopicArn=topic, Protocol=s["Protocol"], Endpoint=s["Endpoint"])


def test_prove_alarms_fails_with_no_confirmed_subscriber_on_the_default_stack(stack):
    """The default stack's topic has no subscriber: every alarm's action reaches the topic, and
    prove-alarms still exits 3 with `no confirmed subscriber` on it, in its one-line verdict, its
    topic line and its JSON; every alarm is back in its prior state with its prior reason."""
    session, _, outputs = stack
    topic = outputs["AlarmTopicArn"]
    before, since = alarm_states(session), datetime.now(UTC) - timedelta(seconds=1)
    with without_confirmed_subscribers(session, topic):
        done = prove_alarms(session, "--yes", "--json")
        text = prove_alarms(session, "--yes")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: no confirmed subscriber on {topic}: the alarms' notifications reach the topic and "
        "nobody receives them; subscribe someone"
    )
    report = json.loads(done.stdout)
    assert report["alarms_from"] == f"the alarms of stack {PREFIX}-consumer"
    assert sorted(p["alarm"] for p in report["alarms"]) == sorted(Names(PREFIX).alarms)
    assert {p["outcome"] for p in report["alarms"]} == {"delivered"}
    assert [(t["topic"], t["verdict"], t["confirmed"]) for t in report["topics"]] == [
        (topic, "no confirmed subscriber", 0)
    ]
    assert text.returncode == 3 and f"no confirmed subscriber  {topic}  " in text.stdout, text.stdout
    assert not_back(session, before, since) == {}


def test_prove_alarms_reports_every_alarm_delivered_and_the_subscriber_reached(stack, inbox):
    """With the inbox (an SQS queue, confirmed at once) subscribed: every alarm's action is
    recorded as executed, the topic is `reached` by the inbox, exit 0, the test notification
    arrives, and every alarm is back in its prior state with its prior reason. An alarm an earlier
    test left in ALARM is not set: it is judged from its own transition's record."""
    session, _, outputs = stack
    before, since = alarm_states(session), datetime.now(UTC) - timedelta(seconds=1)
    done = prove_alarms(session, "--yes", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    alarms, topic_arn = report["alarms"], outputs["AlarmTopicArn"]
    assert len(alarms) == 10 and {p["outcome"] for p in alarms} == {"delivered"}
    tested = [p for p in alarms if p["tested"]]
    assert tested, "every alarm was in ALARM already: nothing was tested"
    for p in tested:
        assert p["detail"] == topic_arn and p["restore"] in (
            f"back to {p['was']}",
            "left as CloudWatch's evaluation set it (OK)",
        ), p
    for p in alarms:
        if not p["tested"]:
            assert (p["was"], p["restore"]) == ("ALARM", "not touched"), p
            assert p["detail"].startswith("in ALARM since ") and p["detail"].endswith(topic_arn), p
    inbox_arn = f"arn:aws:sqs:{session.state['region']}:123456789012:{PREFIX}-oncall-inbox"
    (topic,) = report["topics"]
    assert (topic["verdict"], topic["subscriptions"]) == (
        "reached",
        [{"protocol": "sqs", "endpoint": inbox_arn, "status": "confirmed"}],
    )
    assert "subscribers get a test ALARM" in done.stderr
    notification(session, inbox, tested[0]["alarm"], "ALARM", since)
    assert not_back(session, before, since) == {}


def test_prove_alarms_names_a_pending_email_subscription_as_pending(stack, inbox):
    """An email subscription not yet confirmed (as AWS keeps one until its owner clicks the
    link) is listed as pending, its address partly masked, beside the confirmed inbox."""
    session, _, outputs = stack
    sns, topic = session.client("sns"), outputs["AlarmTopicArn"]
    email = sns.subscribe(
        TopicArn=topic, Protocol="email", Endpoint="oncall@example.com", ReturnSubscriptionArn=True
    )["SubscriptionArn"]
    try:
        done = prove_alarms(session, "--yes")
    finally:
        sns.unsubscribe(SubscriptionArn=email)
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if topic in line and line.startswith("reached")]
    assert "pending confirmation: email o***@example.com" in line and "confirmed: sqs arn:aws:sqs:" in line, (
        line
    )
    assert "oncall@" not in done.stdout


# Runs ops' own main() with one change: the first read of an alarm's history after an alarm was
# set to ALARM announces itself on stderr and then waits, so the test can send its signal while
# the run waits for CloudWatch's records.
WAITING_DRIVER = """
import sys, time
from ops import __main__, prove_alarms
set_alarms = []
init, read = prove_alarms.Prover.__init__, prove_alarms._action_items
def recording(self, cloudwatch, *args, **kwargs):
    init(self, cloudwatch, *args, **kwargs)
    set_state = cloudwatch.set_alarm_state
    def set_and_record(**request):
        set_alarms.append(request["AlarmName"])
        return set_state(**request)
    cloudwatch.set_alarm_state = set_and_record
def waiting(*args):
    if not set_alarms:
        return read(*args)
    print("WAITING", file=sys.stderr, flush=True)
    time.sleep(60)
prove_alarms.Prover.__init__ = recording
prove_alarms._action_items = waiting
sys.exit(__main__.main(["prove-alarms", "--prefix", sys.argv[1], "--yes"]))
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_prove_alarms_puts_every_alarm_back(stack, signum):
    """Ctrl-C or SIGTERM while prove-alarms waits for CloudWatch's records, with every alarm set
    to the test ALARM: it puts every alarm back to its prior state and reason before it exits
    (128 + the signal), and says so."""
    session, _, _ = stack
    before, since = alarm_states(session), datetime.now(UTC) - timedelta(seconds=1)
    env = session.process_env()
    run = subprocess.Popen(
        [sys.executable, "-c", WAITING_DRIVER, PREFIX], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        seen = []
        assert run.stderr is not None  # piped above
        for line in run.stderr:
            seen.append(line)
            if line.startswith("WAITING"):
                break
        assert seen and seen[-1].startswith("WAITING"), seen
        in_test = [name for name, (_, reason) in alarm_states(session).items() if reason == REASON]
        assert in_test, "no alarm was in the test ALARM when the signal was sent"
        run.send_signal(signum)
        rest = run.stderr.read()
        assert run.wait(timeout=30) == 128 + signum, rest
    finally:
        if run.poll() is None:
            run.kill()
    assert f"interrupted by {signal.Signals(signum).name}: " in rest and "NOT put back" not in rest, rest
    assert not_back(session, before, since) == {}


def test_a_topic_policy_without_the_cloudwatch_allow_refuses_every_alarm_action(stack, inbox):
    """The topic policy CDK writes for enforce_ssl alone (its TLS deny, nothing allowing
    CloudWatch): every alarm action fails with AWS's message in the alarm history, nothing is
    delivered, and prove-alarms reports the failure of each alarm it sets (those not already in
    ALARM) and exits 1. The stack's own policy (with the Allow) delivers again."""
    session, _, outputs = stack
    sns, topic = session.client("sns"), outputs["AlarmTopicArn"]
    own = sns.get_topic_attributes(TopicArn=topic)["Attributes"]["Policy"]
    tls_only = {
        "Version": "2012-10-17",
        "Statement": [s for s in json.loads(own)["Statement"] if s["Effect"] == "Deny"],
    }
    assert len(tls_only["Statement"]) == 1
    sqs = session.client("sqs")
    while sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10).get("Messages"):
        pass  # what earlier tests left; received messages stay invisible past this test
    sns.set_topic_attributes(TopicArn=topic, AttributeName="Policy", AttributeValue=json.dumps(tls_only))
    try:
        done = prove_alarms(session, "--yes")
    finally:
        sns.set_topic_attributes(TopicArn=topic, AttributeName="Policy", AttributeValue=own)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line for line in done.stdout.strip().splitlines() if line.split()[1].startswith(f"{PREFIX}-")]
    # An alarm an earlier test left in ALARM is not set; its own earlier transition is judged.
    tested = [line for line in lines if "not set by this run" not in line]
    assert len(lines) == 10 and tested and all(line.startswith("failed ") for line in tested), done.stdout
    alarm_arn = f"arn:aws:cloudwatch:{session.state['region']}:123456789012:alarm:{tested[0].split()[1]}"
    assert (
        f'Failed to execute action {topic}. Received error: "Resource: {alarm_arn} is not authorized to '
        f'perform: SNS:Publish on resource: {topic}"'
    ) in done.stdout
    arrived = sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10, WaitTimeSeconds=1).get(
        "Messages", []
    )
    assert [
        json.loads(json.loads(m["Body"])["Message"])["AlarmName"]
        for m in arrived
        if "prove-alarms" in m["Body"]
    ] == []
