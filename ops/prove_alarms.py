"""`python -m ops prove-alarms --yes`: prove the notification path of a deployed consumer's alarms,
from each alarm to its topics and from each topic to whoever is subscribed to it.

The alarms are the stack's `AWS::CloudWatch::Alarm` resources (ListStackResources) or, when the
stack cannot be read, the exact names `idempotent_consumer.alarms.ALARMS` derives from the prefix; never a
name prefix, which would also take in a deployment whose prefix extends this one.

Each topic the alarms notify is listed with its subscriptions (ListSubscriptionsByTopic); SNS
names a subscription still pending confirmation `PendingConfirmation` instead of its ARN, and
delivers nothing to it. Each alarm not in ALARM is set to ALARM (SetAlarmState runs the ALARM
actions, as a breach would); CloudWatch's own record of each action in the alarm history
(`Successfully executed action ...`: SNS accepted the publish; or `Failed to execute action
...`) is the proof, and then the alarm is put back to the state, reason and reason data it had,
unless CloudWatch's evaluation changed it meanwhile. An alarm already in ALARM is not touched
(setting it OK would page a false all-clear during an incident): the action record of its own
last transition is judged instead. Interrupted (Ctrl-C, SIGTERM, SIGHUP), it still puts every
alarm back before it exits.

Exit status: 0 every alarm's actions ran and every topic has a confirmed subscriber; 3 nobody
would be reached for some alarm (`no confirmed subscriber` on a topic, no ALARM action, actions
disabled); 1 otherwise not proven (an action failed or was not recorded, an alarm is missing,
subscribers could not be listed, an alarm could not be put back); 2 without --yes; 128+N when
interrupted by signal N.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from types import FrameType
from typing import Any, Self
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError

from ops.aws import error_line, stack_missing

REASON = "ops prove-alarms: testing the notification path; nothing is wrong"
ALARM_RESOURCE = "AWS::CloudWatch::Alarm"
NOBODY_REACHED = 3
NOT_PROVEN = 1


class Outcome(StrEnum):
    """What a proof found for one alarm."""

    DELIVERED = "delivered"  # every action of its ALARM recorded as delivered
    FAILED = "failed"  # an action recorded as failed
    NOT_RECORDED = "not recorded"  # no action record yet
    NO_ACTION = "no action"  # it notifies nothing in ALARM
    ACTIONS_DISABLED = "actions disabled"
    MISSING = "missing"  # no alarm of this name


# Outcomes of one alarm that mean its ALARM notifies nobody at all.
REACHES_NOBODY = (Outcome.NO_ACTION, Outcome.ACTIONS_DISABLED)
CONFIRMED, PENDING = "confirmed", "pending confirmation"


class Interrupted(BaseException):
    """A signal asked the run to stop (BaseException, like KeyboardInterrupt: no `except
    Exception` on the way may swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass(frozen=True)
class Proof:
    alarm: str
    outcome: Outcome
    detail: str  # the topics, or CloudWatch's summary of the failure, or why not tested
    actions: tuple[str, ...]
    was: str = ""  # the state it was in when the run began
    tested: bool = False  # set to ALARM by this run (False: judged from its own transition)
    restore: str = ""  # what became of it afterwards

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.DELIVERED


@dataclass(frozen=True)
class Subscriber:
    protocol: str
    endpoint: str  # masked: see `mask`
    status: str  # confirmed, pending confirmation, deleted


@dataclass(frozen=True)
class Topic:
    """One topic the alarms notify and who is subscribed to it."""

    arn: str
    subscribers: tuple[Subscriber, ...]
    error: str = ""  # why the subscriptions could not be listed

    @property
    def confirmed(self) -> int:
        return sum(1 for s in self.subscribers if s.status == CONFIRMED)

    @property
    def verdict(self) -> str:
        if self.error:
            return "not listed"
        return "reached" if self.confirmed else "no confirmed subscriber"


def status_of(subscription_arn: str) -> str:
    """SNS answers `PendingConfirmation` (or `Deleted`) where a confirmed subscription has its ARN."""
    if subscription_arn.startswith("arn:"):
        return CONFIRMED
    return PENDING if subscription_arn == "PendingConfirmation" else subscription_arn.lower()


def mask(protocol: str, endpoint: str) -> str:
    """An endpoint as a report may show it: an email address or phone number partly hidden, an
    HTTP(S) URL cut to its host (its path or query often carries an integration key)."""
    if protocol in ("email", "email-json") and "@" in endpoint:
        local, domain = endpoint.rsplit("@", 1)
        return f"{local[:1]}***@{domain}"
    if protocol == "sms":
        return "*" * max(0, len(endpoint) - 4) + endpoint[-4:] if len(endpoint) > 4 else "****"
    if protocol in ("http", "https"):
        parts = urlsplit(endpoint)
        return f"{parts.scheme}://{parts.hostname or '?'}/..."
    return endpoint


def judge(alarm: str, actions: list[str], items: list[dict[str, Any]]) -> Proof:
    """The outcome of one alarm's actions from its Action history items of one transition."""
    if not actions:
        return Proof(alarm, Outcome.NO_ACTION, "the alarm notifies nothing in ALARM", ())
    outcomes: dict[str, tuple[Outcome, str]] = {}
    for item in items:
        data = json.loads(item.get("HistoryData") or "{}")
        resource = data.get("notificationResource") or next(
            (a for a in actions if a in item["HistorySummary"]), None
        )
        if resource in actions and outcomes.get(resource, (Outcome.DELIVERED, ""))[0] != Outcome.FAILED:
            failed = data.get("actionState") == "Failed" or item["HistorySummary"].startswith("Failed")
            outcomes[resource] = (
                (Outcome.FAILED, item["HistorySummary"]) if failed else (Outcome.DELIVERED, resource)
            )
    missing = [a for a in actions if a not in outcomes]
    failed = [detail for outcome, detail in outcomes.values() if outcome == Outcome.FAILED]
    if failed:
        return Proof(alarm, Outcome.FAILED, "; ".join(failed), tuple(actions))
    if missing:
        return Proof(
            alarm, Outcome.NOT_RECORDED, f"no action record for {', '.join(missing)} yet", tuple(actions)
        )
    return Proof(alarm, Outcome.DELIVERED, ", ".join(actions), tuple(actions))


class SignalGuard:
    """SIGINT, SIGTERM and SIGHUP raise `Interrupted` in the main thread, except while `holding()`
    (putting alarms back): a signal then waits until that is done."""

    SIGNALS = tuple(
        getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
    )  # no SIGHUP on Windows

    def __init__(self) -> None:
        self._held = False
        self._pending: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Self:
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._held:
            self._pending = signum
            return
        raise Interrupted(signum)

    @contextmanager
    def holding(self) -> Iterator[None]:
        was, self._held = self._held, True
        try:
            yield
        finally:
            self._held = was
        if not was and self._pending is not None:
            signum, self._pending = self._pending, None
            raise Interrupted(signum)


class Prover:
    """One run over a fixed set of alarm names; `proofs` holds what is known so far, also after
    an interruption."""

    def __init__(
        self,
        cloudwatch: Any,
        names: list[str],
        *,
        timeout: float = 60,
        progress: Callable[[str], None] = lambda _: None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        guard: SignalGuard | None = None,
    ) -> None:
        self.cloudwatch, self.names, self.timeout = cloudwatch, names, timeout
        self.progress, self.clock, self.sleep = progress, clock, sleep
        self.hold = guard.holding if guard else _no_hold
        self.alarms: dict[str, dict[str, Any]] = {}
        self.proofs: dict[str, Proof] = {}
        self.flipped: dict[str, dict[str, Any]] = {}  # set to ALARM by this run, not yet put back

    def describe(self) -> None:
        found = _describe(self.cloudwatch, self.names)
        self.alarms = {name: found[name] for name in self.names if name in found}
        for name in self.names:
            if name not in found:
                self.proofs[name] = Proof(name, Outcome.MISSING, "no alarm of this name", ())

    def topics(self) -> list[str]:
        """Every SNS topic among the alarms' ALARM and OK actions."""
        return sorted(
            {
                arn
                for alarm in self.alarms.values()
                for arn in (alarm.get("AlarmActions") or []) + (alarm.get("OKActions") or [])
                if arn.split(":")[2:3] == ["sns"]
            }
        )

    def run(self) -> list[Proof]:
        started = datetime.now(UTC) - timedelta(seconds=5)  # room for clock skew
        to_flip = []
        for name, alarm in self.alarms.items():
            actions = alarm.get("AlarmActions") or []
            if not actions:
                self.proofs[name] = replace(judge(name, [], []), was=alarm["StateValue"])
            elif not alarm.get("ActionsEnabled", True):
                self.proofs[name] = Proof(
                    name,
                    Outcome.ACTIONS_DISABLED,
                    "ActionsEnabled is false: it notifies nobody",
                    tuple(actions),
                )
            elif alarm["StateValue"] == "ALARM":
                self.proofs[name] = self._judge_standing(name, alarm, actions)
            else:
                to_flip.append(alarm)
        try:
            for alarm in to_flip:
                self.flipped[alarm["AlarmName"]] = alarm  # before the call: a signal may land in it
                self.cloudwatch.set_alarm_state(
                    AlarmName=alarm["AlarmName"], StateValue="ALARM", StateReason=REASON
                )
            if to_flip:
                self.progress(
                    f"set {len(to_flip)} alarm(s) to ALARM; each goes back as soon as CloudWatch records "
                    f"its actions (at most {self.timeout:.0f} s)"
                )
            deadline = self.clock() + self.timeout
            waiting = {alarm["AlarmName"]: alarm for alarm in to_flip}
            while waiting:
                late = self.clock() >= deadline
                for name, alarm in list(waiting.items()):
                    actions = alarm["AlarmActions"]
                    proof = judge(name, actions, _action_items(self.cloudwatch, name, started))
                    if proof.outcome != Outcome.NOT_RECORDED or late:
                        self.proofs[name] = replace(proof, was=alarm["StateValue"], tested=True)
                        del waiting[name]
                        self.put_back([name])
                if waiting:
                    self.sleep(1)
        finally:
            self.put_back(list(self.flipped))
        return self.result()

    def result(self) -> list[Proof]:
        return [self.proofs[name] for name in sorted(self.proofs)]

    def stuck(self) -> list[str]:
        """The alarms this run set to ALARM and did not put back."""
        failed = [p.alarm for p in self.proofs.values() if p.restore.startswith("not put back")]
        return sorted({*self.flipped, *failed})

    def put_back(self, names: list[str]) -> None:
        """Return each alarm this run set to ALARM to the state, reason and reason data it had,
        unless CloudWatch's evaluation has set a state of its own since (then that is the real one)."""
        if not names:
            return
        with self.hold():
            try:
                now = _describe(self.cloudwatch, names)
            except (ClientError, BotoCoreError) as error:
                for name in names:
                    self._restored(name, f"not put back: {error_line(error)}")
                return
            for name in names:
                prior, current = self.flipped[name], now.get(name)
                if current is None:
                    self._restored(name, "deleted meanwhile")
                elif current["StateValue"] != "ALARM" or current.get("StateReason") != REASON:
                    self._restored(name, f"left as CloudWatch's evaluation set it ({current['StateValue']})")
                else:
                    extra = (
                        {"StateReasonData": prior["StateReasonData"]} if prior.get("StateReasonData") else {}
                    )
                    try:
                        self.cloudwatch.set_alarm_state(
                            AlarmName=name,
                            StateValue=prior["StateValue"],
                            StateReason=prior.get("StateReason")
                            or f"ops prove-alarms: back to {prior['StateValue']}",
                            **extra,
                        )
                    except (ClientError, BotoCoreError) as error:
                        self._restored(name, f"not put back: {error_line(error)}")
                        continue
                    self._restored(name, f"back to {prior['StateValue']}")

    def _restored(self, name: str, what: str) -> None:
        prior = self.flipped.pop(name)
        proof = self.proofs.get(name) or Proof(
            name,
            Outcome.NOT_RECORDED,
            "interrupted before its record",
            tuple(prior["AlarmActions"]),
            tested=True,
        )
        self.proofs[name] = replace(proof, was=prior["StateValue"], tested=True, restore=what)

    def _judge_standing(self, name: str, alarm: dict[str, Any], actions: list[str]) -> Proof:
        """An alarm in ALARM, judged from the action records of its own transition to ALARM."""
        since = alarm.get("StateTransitionedTimestamp") or alarm["StateUpdatedTimestamp"]
        proof = judge(name, actions, _action_items(self.cloudwatch, name, since - timedelta(seconds=1)))
        stamp = since.astimezone(UTC).isoformat(timespec="seconds")
        return replace(
            proof,
            detail=f"in ALARM since {stamp}, not set by this run; its own transition: {proof.detail}",
            was="ALARM",
            restore="not touched",
        )


@contextmanager
def _no_hold() -> Iterator[None]:
    yield


def _describe(cloudwatch: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(names), 100):  # DescribeAlarms takes at most 100 names
        pages = cloudwatch.get_paginator("describe_alarms").paginate(
            AlarmNames=names[start : start + 100], AlarmTypes=["MetricAlarm"]
        )
        found.update((a["AlarmName"], a) for page in pages for a in page["MetricAlarms"])
    return found


def _action_items(cloudwatch: Any, name: str, since: datetime) -> list[dict[str, Any]]:
    pages = cloudwatch.get_paginator("describe_alarm_history").paginate(
        AlarmName=name, HistoryItemType="Action", StartDate=since, ScanBy="TimestampAscending"
    )
    return [item for page in pages for item in page["AlarmHistoryItems"]]


def stack_alarms(cloudformation: Any, stack: str) -> list[str]:
    """The physical names (alarm names) of the stack's metric alarms."""
    pages = cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack)
    return sorted(
        r["PhysicalResourceId"]
        for page in pages
        for r in page["StackResourceSummaries"]
        if r["ResourceType"] == ALARM_RESOURCE and r.get("PhysicalResourceId")
    )


def find_alarms(clients: Any, prefix: str, stack: str | None) -> tuple[list[str], str]:
    """The alarm names and where they came from: the stack's resources, or, when the stack cannot
    be read, the exact names stacks.config derives from the prefix."""
    from stacks.config import Names

    names = Names(prefix)
    stack = stack or names.stack
    try:
        return stack_alarms(clients.client("cloudformation"), stack), f"the alarms of stack {stack}"
    except ClientError as error:
        why = "not found" if stack_missing(error) else error_line(error)
        return list(names.alarms), f"the alarm names of prefix {prefix} (stack {stack} {why})"


def subscribers(sns: Any, topic: str) -> Topic:
    try:
        pages = sns.get_paginator("list_subscriptions_by_topic").paginate(TopicArn=topic)
        found = [s for page in pages for s in page["Subscriptions"]]
    except ClientError as error:
        return Topic(topic, (), error_line(error))
    return Topic(
        topic,
        tuple(
            Subscriber(
                s["Protocol"], mask(s["Protocol"], s.get("Endpoint", "")), status_of(s["SubscriptionArn"])
            )
            for s in found
        ),
    )


def exit_status(proofs: list[Proof], topics: list[Topic]) -> int:
    if any(p.outcome in REACHES_NOBODY for p in proofs) or any(
        t.verdict == "no confirmed subscriber" for t in topics
    ):
        return NOBODY_REACHED
    if (
        not proofs
        or any(not p.ok or p.restore.startswith("not put back") for p in proofs)
        or any(t.error for t in topics)
    ):
        return NOT_PROVEN
    return 0


def verdict(proofs: list[Proof], topics: list[Topic]) -> str:
    """One line: who would be reached, or why it is not proven; any alarm left in the test ALARM
    is named whatever else is said."""
    line = _verdict(proofs, topics)
    stuck = [p.alarm for p in proofs if p.restore.startswith("not put back")]
    return (
        line
        if not stuck or "still in the test ALARM" in line
        else f"{line}; still in the test ALARM: {', '.join(stuck)}"
    )


def _verdict(proofs: list[Proof], topics: list[Topic]) -> str:
    unreached = [t for t in topics if t.verdict == "no confirmed subscriber"]
    if unreached:
        pending = sum(1 for t in unreached for s in t.subscribers if s.status == PENDING)
        what = (
            f"confirm the {pending} pending subscription(s) (the link SNS sent) or subscribe someone"
            if pending
            else "subscribe someone"
        )
        return (
            f"no confirmed subscriber on {', '.join(t.arn for t in unreached)}: the alarms' notifications "
            f"reach the topic and nobody receives them; {what}"
        )
    silent = [p.alarm for p in proofs if p.outcome in REACHES_NOBODY]
    if silent:
        return f"nobody would be reached by {', '.join(silent)}: it has no ALARM action or its actions are disabled"
    if not proofs:
        return "no alarms found"
    unproven = [p.alarm for p in proofs if not p.ok]
    stuck = [p.alarm for p in proofs if p.restore.startswith("not put back")]
    unlisted = [t.arn for t in topics if t.error]
    if unproven or stuck or unlisted:
        parts = [f"not proven for {', '.join(unproven)}"] if unproven else []
        parts += [f"subscribers of {', '.join(unlisted)} not listed"] if unlisted else []
        parts += [f"still in the test ALARM: {', '.join(stuck)}"] if stuck else []
        return "; ".join(parts)
    reached = sum(t.confirmed for t in topics)
    return f"every alarm's actions ran; {reached} confirmed subscription(s) on {len(topics)} topic(s) receive them"


def format_lines(proofs: list[Proof], topics: Sequence[Topic] = ()) -> list[str]:
    """One line per alarm, then one per topic with its subscribers."""
    width = max((len(p.alarm) for p in proofs), default=0)
    lines = [f"{p.outcome:<12}  {p.alarm:<{width}}  {p.detail}" for p in proofs]
    for topic in topics:
        if topic.error:
            who = f"subscriptions not listed: {topic.error}"
        else:
            who = (
                "; ".join(f"{s.status}: {s.protocol} {s.endpoint}" for s in topic.subscribers)
                or "no subscriptions"
            )
        lines.append(f"{topic.verdict:<12}  {topic.arn}  {who}")
    return lines


def to_json(proofs: list[Proof], topics: list[Topic], alarms_from: str, status: int, line: str) -> str:
    return json.dumps(
        {
            "alarms_from": alarms_from,
            "alarms": [{**asdict(p), "ok": p.ok} for p in proofs],
            "topics": [
                {
                    "topic": t.arn,
                    "verdict": t.verdict,
                    "confirmed": t.confirmed,
                    "subscriptions": [asdict(s) for s in t.subscribers],
                    "error": t.error,
                }
                for t in topics
            ],
            "verdict": line,
            "exit_status": status,
        },
        indent=2,
    )


def run(args: Any, clients: Any) -> int:
    from ops.terminal import safe, safe_lines

    if not args.yes:
        print(
            f"error: this notifies every subscriber of the {args.prefix} alarms' topics (an ALARM and its "
            f"OK for each alarm not already in ALARM); pass --yes to go ahead",
            file=sys.stderr,
        )
        return 2
    cloudwatch = clients.client("cloudwatch")
    with SignalGuard() as guard:
        prover = Prover(
            cloudwatch,
            [],
            timeout=args.timeout,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            guard=guard,
        )
        try:
            names, alarms_from = find_alarms(clients, args.prefix, args.stack)
            prover.names = names
            prover.describe()
            topics = [subscribers(clients.client("sns"), arn) for arn in prover.topics()]
            print(
                f"testing the notification path of {len(prover.alarms)} alarm(s), {alarms_from}: "
                "subscribers get a test ALARM and the alarm's prior state back for each alarm not in ALARM",
                file=sys.stderr,
                flush=True,
            )
            proofs = prover.run()
        except Interrupted as stop:
            left = prover.stuck()
            back = [p.alarm for p in prover.result() if p.restore.startswith(("back to", "left as"))]
            print(
                safe(
                    f"interrupted by {stop}: {len(back)} alarm(s) put back"
                    + (f"; NOT put back, still in the test ALARM: {', '.join(left)}" if left else "")
                ),
                file=sys.stderr,
            )
            return 128 + stop.signum
        except (ClientError, BotoCoreError) as error:
            left = prover.stuck()
            print(
                safe(
                    f"error: {error_line(error)}"
                    + (f"; still in the test ALARM: {', '.join(left)}" if left else "")
                ),
                file=sys.stderr,
            )
            return NOT_PROVEN
    status, line = exit_status(proofs, topics), verdict(proofs, topics)
    if args.json:
        print(to_json(proofs, topics, alarms_from, status, line))
    else:
        print(safe_lines(format_lines(proofs, topics)))
    print(safe(f"{'error: ' if status else ''}{line}"), file=sys.stderr)
    return status
