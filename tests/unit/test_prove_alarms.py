"""`ops prove-alarms` with stub clients: how it judges an alarm from CloudWatch's Action history,
who a topic reaches, which alarms it touches, and that every alarm it set goes back to its own
state, reason and reason data, also when a signal interrupts it."""

from __future__ import annotations

import json
import os
import signal
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.exceptions import ClientError

from idempotent_consumer.alarms import ALARMS
from ops.prove_alarms import (
    NOBODY_REACHED,
    NOT_PROVEN,
    REASON,
    Interrupted,
    Outcome,
    Proof,
    Prover,
    SignalGuard,
    Subscriber,
    Topic,
    exit_status,
    find_alarms,
    format_lines,
    judge,
    mask,
    status_of,
    subscribers,
    verdict,
)
from stacks.config import Names

TOPIC = "arn:aws:sns:us-east-1:123456789012:p-alarms"
QUEUE = "arn:aws:sqs:us-east-1:123456789012:oncall"


def item(summary: str, state: str | None = None, resource: str | None = TOPIC) -> dict:
    data = {"actionState": state} if state else {}
    if resource:
        data["notificationResource"] = resource
    return {"HistoryItemType": "Action", "HistorySummary": summary, "HistoryData": json.dumps(data)}


def test_a_succeeded_action_is_delivered():
    """CloudWatch's `Successfully executed action` for every action is `delivered`."""
    proof = judge("p-dead-letters", [TOPIC], [item(f"Successfully executed action {TOPIC}", "Succeeded")])
    assert (proof.outcome, proof.detail, proof.ok) == ("delivered", TOPIC, True)


def test_a_failed_action_wins_over_a_later_success_and_keeps_aws_summary():
    """A failure is reported in AWS's own words even if a later record succeeded."""
    failure = (
        f'Failed to execute action {TOPIC}. Received error: "CloudWatch Alarms is not authorized to '
        f'perform: SNS:Publish on resource:{TOPIC}"'
    )
    proof = judge(
        "p-x", [TOPIC], [item(failure, "Failed"), item(f"Successfully executed action {TOPIC}", "Succeeded")]
    )
    assert (proof.outcome, proof.detail, proof.ok) == ("failed", failure, False)


def test_no_record_yet_and_no_action_are_told_apart():
    """An action without a record is `not recorded`; an alarm without actions is `no action`."""
    assert judge("p-x", [TOPIC], []).outcome == "not recorded"
    assert judge("p-x", [], []).outcome == "no action"


def test_the_resource_is_read_from_the_summary_when_history_data_lacks_it():
    """A record without notificationResource is matched by the topic named in its summary."""
    proof = judge("p-x", [TOPIC], [item(f"Successfully executed action {TOPIC}", resource=None)])
    assert proof.outcome == "delivered"


def test_one_line_per_alarm_then_one_per_topic_with_its_subscribers():
    """Alarm lines aligned by name, then a topic line naming each subscriber and its status."""
    topic = Topic(
        TOPIC,
        (
            Subscriber("sqs", QUEUE, "confirmed"),
            Subscriber("email", "o***@example.com", "pending confirmation"),
        ),
    )
    lines = format_lines(
        [
            Proof("p-a", Outcome.DELIVERED, TOPIC, (TOPIC,)),
            Proof("p-longer", Outcome.FAILED, "why", (TOPIC,)),
        ],
        [topic],
    )
    assert lines == [
        f"delivered     p-a       {TOPIC}",
        "failed        p-longer  why",
        f"reached       {TOPIC}  confirmed: sqs {QUEUE}; pending confirmation: email o***@example.com",
    ]
    assert format_lines([], [Topic(TOPIC, ())]) == [f"no confirmed subscriber  {TOPIC}  no subscriptions"]


def test_sns_names_a_pending_subscription_instead_of_giving_its_arn():
    """ListSubscriptionsByTopic's SubscriptionArn: an ARN once confirmed, `PendingConfirmation` before."""
    assert status_of(f"{TOPIC}:8a21d249-4329-4871-acc6-7be709c6ea7f") == "confirmed"
    assert status_of("PendingConfirmation") == "pending confirmation"
    assert status_of("Deleted") == "deleted"


def test_endpoints_are_masked_where_they_identify_a_person_or_carry_a_key():
    """Email and SMS partly hidden, HTTP(S) cut to the host, queue and function ARNs whole."""
    assert mask("email", "oncall@example.com") == "o***@example.com"
    assert mask("email-json", "x@example.org") == "x***@example.org"
    assert mask("sms", "+12125551234") == "********1234"
    assert mask("https", "https://events.example.com/integration/SECRET/enqueue?k=1") == (
        "https://events.example.com/..."
    )
    assert mask("sqs", QUEUE) == QUEUE


class StubSns:
    def __init__(self, subscriptions: list[dict] | None = None, error: str | None = None) -> None:
        self.subscriptions, self.error = subscriptions or [], error

    def get_paginator(self, name: str) -> Any:
        assert name == "list_subscriptions_by_topic"
        stub = self

        class Pages:
            def paginate(self, TopicArn: str) -> list[dict]:
                if stub.error:
                    raise ClientError(
                        {"Error": {"Code": stub.error, "Message": "no"}}, "ListSubscriptionsByTopic"
                    )
                return [{"Subscriptions": [{**s, "TopicArn": TopicArn} for s in stub.subscriptions]}]

        return Pages()


def subscription(protocol: str, endpoint: str, arn: str) -> dict:
    return {"Protocol": protocol, "Endpoint": endpoint, "SubscriptionArn": arn, "Owner": "123456789012"}


def test_a_topic_without_a_confirmed_subscriber_reaches_nobody_and_exits_3():
    """No subscription, or only one pending confirmation: `no confirmed subscriber`, exit 3, even
    though every alarm's action was delivered to the topic."""
    delivered = [Proof("p-a", Outcome.DELIVERED, TOPIC, (TOPIC,), tested=True, restore="back to OK")]
    for subs in ([], [subscription("email", "oncall@example.com", "PendingConfirmation")]):
        topic = subscribers(StubSns(subs), TOPIC)
        assert topic.verdict == "no confirmed subscriber"
        assert exit_status(delivered, [topic]) == NOBODY_REACHED == 3
        assert verdict(delivered, [topic]).startswith(f"no confirmed subscriber on {TOPIC}: ")
        assert verdict(delivered, [topic]).endswith(
            "confirm the 1 pending subscription(s) (the link SNS sent) or subscribe someone"
            if subs
            else "nobody receives them; subscribe someone"
        )
    pending = subscribers(
        StubSns([subscription("email", "oncall@example.com", "PendingConfirmation")]), TOPIC
    )
    assert pending.subscribers == (Subscriber("email", "o***@example.com", "pending confirmation"),)


def test_a_confirmed_subscriber_and_delivered_actions_exit_0():
    """One confirmed subscription beside a pending one is enough to reach someone: exit 0."""
    topic = subscribers(
        StubSns(
            [
                subscription("sqs", QUEUE, f"{TOPIC}:1"),
                subscription("email", "oncall@example.com", "PendingConfirmation"),
            ]
        ),
        TOPIC,
    )
    delivered = [Proof("p-a", Outcome.DELIVERED, TOPIC, (TOPIC,), tested=True, restore="back to OK")]
    assert (topic.verdict, topic.confirmed, exit_status(delivered, [topic])) == ("reached", 1, 0)


def test_unlisted_subscribers_and_unproven_alarms_exit_1():
    """Subscriptions that could not be listed, a failed action, an alarm left in the test ALARM,
    a missing alarm: not proven (1), not nobody reached (3)."""
    reached = Topic(TOPIC, (Subscriber("sqs", QUEUE, "confirmed"),))
    good = Proof("p-a", Outcome.DELIVERED, TOPIC, (TOPIC,), tested=True, restore="back to OK")
    unlisted = subscribers(StubSns(error="AuthorizationError"), TOPIC)
    assert (unlisted.verdict, exit_status([good], [unlisted])) == ("not listed", NOT_PROVEN)
    assert exit_status([replace_outcome(good, Outcome.FAILED)], [reached]) == NOT_PROVEN
    assert exit_status([Proof("p-a", Outcome.MISSING, "", ())], [reached]) == NOT_PROVEN
    stuck = Proof("p-a", Outcome.DELIVERED, TOPIC, (TOPIC,), tested=True, restore="not put back: timeout")
    assert exit_status([stuck], [reached]) == NOT_PROVEN
    assert "still in the test ALARM: p-a" in verdict([stuck], [reached])
    assert verdict([stuck], [Topic(TOPIC, ())]).endswith("subscribe someone; still in the test ALARM: p-a")


def replace_outcome(proof: Proof, outcome: Outcome) -> Proof:
    return Proof(proof.alarm, outcome, proof.detail, proof.actions)


NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def alarm(name: str, state: str, **extra: Any) -> dict:
    return {
        "AlarmName": name,
        "StateValue": state,
        "StateReason": f"{name}: its own reason",
        "StateReasonData": json.dumps({"version": "1.0", "name": name}),
        "AlarmActions": [TOPIC],
        "OKActions": [TOPIC],
        "ActionsEnabled": True,
        "StateUpdatedTimestamp": NOW - timedelta(hours=1),
        "StateTransitionedTimestamp": NOW - timedelta(hours=1),
        **extra,
    }


class StubCloudWatch:
    """Alarms and their Action history; SetAlarmState records its actions as CloudWatch does,
    except for alarms named in `silent` (no record ever, as a slow or broken action)."""

    def __init__(self, alarms: list[dict], silent: tuple[str, ...] = ()) -> None:
        self.alarms = {a["AlarmName"]: dict(a) for a in alarms}
        self.silent = silent
        self.history: dict[str, list[dict]] = {name: [] for name in self.alarms}
        self.calls: list[tuple[str, str, str, str | None]] = []

    def set_alarm_state(
        self, AlarmName: str, StateValue: str, StateReason: str, StateReasonData: str | None = None
    ) -> None:
        self.calls.append((AlarmName, StateValue, StateReason, StateReasonData))
        current = self.alarms[AlarmName]
        changed = current["StateValue"] != StateValue
        current.update(StateValue=StateValue, StateReason=StateReason, StateReasonData=StateReasonData)
        if changed and StateValue == "ALARM" and AlarmName not in self.silent:
            self.history[AlarmName] += [
                item(f"Successfully executed action {a}", "Succeeded", a) for a in current["AlarmActions"]
            ]

    def get_paginator(self, name: str) -> Any:
        stub = self

        class Pages:
            def paginate(self, **kwargs: Any) -> list[dict]:
                if name == "describe_alarms":
                    return [
                        {
                            "MetricAlarms": [
                                dict(stub.alarms[n]) for n in kwargs["AlarmNames"] if n in stub.alarms
                            ]
                        }
                    ]
                assert name == "describe_alarm_history"
                return [{"AlarmHistoryItems": list(stub.history[kwargs["AlarmName"]])}]

        return Pages()


def prover(cloudwatch: StubCloudWatch, sleep: Any = None, **kwargs: Any) -> Prover:
    ticks = iter(range(0, 10_000, 10))
    found = Prover(
        cloudwatch,
        list(cloudwatch.alarms),
        timeout=25,
        clock=lambda: next(ticks),
        sleep=sleep or (lambda _: None),
        **kwargs,
    )
    found.describe()
    return found


def test_each_alarm_goes_back_to_its_own_state_reason_and_data():
    """An OK alarm and one in INSUFFICIENT_DATA are set to ALARM, proven, and put back to the
    state, reason and reason data each had (not OK for both, and no test reason left behind)."""
    ok, unknown = alarm("p-ok", "OK"), alarm("p-unknown", "INSUFFICIENT_DATA")
    cloudwatch = StubCloudWatch([ok, unknown])
    proofs = prover(cloudwatch).run()
    assert [(p.alarm, p.outcome, p.tested, p.restore) for p in proofs] == [
        ("p-ok", "delivered", True, "back to OK"),
        ("p-unknown", "delivered", True, "back to INSUFFICIENT_DATA"),
    ]
    for original in (ok, unknown):
        now = cloudwatch.alarms[original["AlarmName"]]
        assert (now["StateValue"], now["StateReason"], now["StateReasonData"]) == (
            original["StateValue"],
            original["StateReason"],
            original["StateReasonData"],
        )


def test_an_alarm_in_alarm_is_not_touched_and_is_judged_from_its_own_transition():
    """During an incident no false OK: an alarm already in ALARM gets no SetAlarmState at all;
    the action record of its own transition decides, and says so."""
    firing = alarm("p-firing", "ALARM")
    cloudwatch = StubCloudWatch([firing])
    cloudwatch.history["p-firing"].append(item(f"Successfully executed action {TOPIC}", "Succeeded"))
    (proof,) = prover(cloudwatch).run()
    assert cloudwatch.calls == []
    assert (proof.outcome, proof.tested, proof.restore) == ("delivered", False, "not touched")
    assert proof.detail.startswith("in ALARM since 2026-12-01T11:00:00+00:00, not set by this run")


def test_an_alarm_in_alarm_without_a_record_of_its_transition_is_not_proven():
    """No action record of the standing ALARM's transition: `not recorded`, still untouched."""
    cloudwatch = StubCloudWatch([alarm("p-firing", "ALARM")])
    (proof,) = prover(cloudwatch).run()
    assert (proof.outcome, cloudwatch.calls) == ("not recorded", [])


def test_an_alarm_the_evaluation_changed_meanwhile_is_left_as_it_is():
    """If CloudWatch's evaluation set a state of its own after the test ALARM, that is the real
    state: the run does not overwrite it."""
    cloudwatch = StubCloudWatch([alarm("p-a", "OK")], silent=("p-a",))

    def evaluation(_: float) -> None:
        cloudwatch.alarms["p-a"].update(StateValue="ALARM", StateReason="Threshold Crossed: 1 datapoint")

    (proof,) = prover(cloudwatch, sleep=evaluation).run()
    assert proof.restore == "left as CloudWatch's evaluation set it (ALARM)"
    assert cloudwatch.alarms["p-a"]["StateReason"] == "Threshold Crossed: 1 datapoint"
    assert [c[1] for c in cloudwatch.calls] == ["ALARM"]


def test_each_alarm_goes_back_as_soon_as_its_record_is_there():
    """A recorded alarm is put back before the run waits for a slow one; the slow one goes back
    at the deadline as `not recorded`."""
    cloudwatch = StubCloudWatch([alarm("p-fast", "OK"), alarm("p-slow", "OK")], silent=("p-slow",))
    states_at_first_wait: list[dict[str, str]] = []

    def wait(_: float) -> None:
        if not states_at_first_wait:
            states_at_first_wait.append({n: a["StateValue"] for n, a in cloudwatch.alarms.items()})

    proofs = prover(cloudwatch, sleep=wait).run()
    assert states_at_first_wait == [{"p-fast": "OK", "p-slow": "ALARM"}]
    assert [(p.outcome, p.restore) for p in proofs] == [
        ("delivered", "back to OK"),
        ("not recorded", "back to OK"),
    ]


def test_an_interrupted_run_puts_every_alarm_it_set_back_and_stops():
    """A signal while it waits (Interrupted raised from the wait): every alarm set to ALARM goes
    back to its prior state before the interruption propagates; untouched ones stay untouched."""
    cloudwatch = StubCloudWatch(
        [alarm("p-a", "OK"), alarm("p-b", "INSUFFICIENT_DATA"), alarm("p-firing", "ALARM")],
        silent=("p-a", "p-b"),
    )

    def interrupt(_: float) -> None:
        raise Interrupted(signal.SIGTERM)

    run = prover(cloudwatch, sleep=interrupt)
    with pytest.raises(Interrupted):
        run.run()
    assert {n: a["StateValue"] for n, a in cloudwatch.alarms.items()} == {
        "p-a": "OK",
        "p-b": "INSUFFICIENT_DATA",
        "p-firing": "ALARM",
    }
    assert run.flipped == {}
    assert {p.alarm: p.restore for p in run.result()} == {
        "p-a": "back to OK",
        "p-b": "back to INSUFFICIENT_DATA",
        "p-firing": "not touched",
    }
    assert all(a["StateReason"] != REASON for a in cloudwatch.alarms.values())


def test_alarms_that_notify_nobody_are_not_set_and_exit_3():
    """An alarm without ALARM actions, or with its actions disabled, reaches nobody: not set to
    ALARM (it would notify no one), and the run exits 3."""
    cloudwatch = StubCloudWatch(
        [alarm("p-none", "OK", AlarmActions=[], OKActions=[]), alarm("p-off", "OK", ActionsEnabled=False)]
    )
    proofs = prover(cloudwatch).run()
    assert [(p.alarm, p.outcome) for p in proofs] == [("p-none", "no action"), ("p-off", "actions disabled")]
    assert cloudwatch.calls == []
    assert exit_status(proofs, [Topic(TOPIC, (Subscriber("sqs", QUEUE, "confirmed"),))]) == NOBODY_REACHED


def test_a_signal_while_alarms_are_put_back_waits_until_they_are():
    """Inside `holding()` a SIGTERM is held and raised as Interrupted only when the hold ends;
    outside, it raises at once. The previous handler is back afterwards."""
    before = signal.getsignal(signal.SIGTERM)
    done = []
    with SignalGuard() as guard:
        with pytest.raises(Interrupted) as raised, guard.holding():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("put back")
        assert (done, raised.value.signum) == (["put back"], signal.SIGTERM)
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before


class StubCloudFormation:
    def __init__(self, resources: list[dict] | None, code: str = "ValidationError") -> None:
        self.resources, self.code = resources, code

    def get_paginator(self, name: str) -> Any:
        assert name == "list_stack_resources"
        stub = self

        class Pages:
            def paginate(self, StackName: str) -> list[dict]:
                if stub.resources is None:
                    message = f"Stack with id {StackName} does not exist"
                    raise ClientError(
                        {"Error": {"Code": stub.code, "Message": message}}, "ListStackResources"
                    )
                return [{"StackResourceSummaries": stub.resources}]

        return Pages()


def clients(cloudformation: StubCloudFormation) -> Any:
    return SimpleNamespace(client=lambda service: cloudformation)


def test_the_alarms_are_the_stacks_alarm_resources():
    """The stack's AWS::CloudWatch::Alarm resources by physical name, nothing else of the stack."""
    resources = [
        {"ResourceType": "AWS::CloudWatch::Alarm", "PhysicalResourceId": "p-dead-letters"},
        {"ResourceType": "AWS::SNS::Topic", "PhysicalResourceId": TOPIC},
        {"ResourceType": "AWS::CloudWatch::Alarm", "PhysicalResourceId": "p-conflicting-orders"},
    ]
    names, source = find_alarms(clients(StubCloudFormation(resources)), "p", None)
    assert (names, source) == (["p-conflicting-orders", "p-dead-letters"], "the alarms of stack p-consumer")


def test_without_the_stack_the_alarms_are_the_exact_names_of_the_prefix():
    """A missing stack falls back to stacks.config's alarm names: exactly ALARMS under the prefix,
    so another deployment whose prefix extends this one (labex-q05-staging) is never included."""
    names, source = find_alarms(clients(StubCloudFormation(None)), "labex-q05", None)
    assert names == [f"labex-q05-{what}" for what in ALARMS] == list(Names("labex-q05").alarms)
    assert not any(name.startswith("labex-q05-staging-") for name in names)
    assert source == "the alarm names of prefix labex-q05 (stack labex-q05-consumer not found)"


def test_an_alarm_that_cannot_be_put_back_is_named_as_stuck():
    """A refused SetAlarmState on the way back: the proof says `not put back` with AWS's reason,
    `stuck()` names the alarm, and the run is not proven (exit 1)."""

    class Refusing(StubCloudWatch):
        def set_alarm_state(
            self, AlarmName: str, StateValue: str, StateReason: str, StateReasonData: str | None = None
        ) -> None:
            if StateValue != "ALARM":
                raise ClientError({"Error": {"Code": "AccessDenied", "Message": "denied"}}, "SetAlarmState")
            super().set_alarm_state(
                AlarmName=AlarmName,
                StateValue=StateValue,
                StateReason=StateReason,
                StateReasonData=StateReasonData,
            )

    run = prover(Refusing([alarm("p-a", "OK")]))
    (proof,) = run.run()
    assert (proof.outcome, proof.restore.startswith("not put back: "), run.stuck()) == (
        "delivered",
        True,
        ["p-a"],
    )
    assert exit_status([proof], [Topic(TOPIC, (Subscriber("sqs", QUEUE, "confirmed"),))]) == NOT_PROVEN
