"""`python -m ops prove-alarms --yes`: prove that every alarm of a deployed consumer reaches its
topic, on the local stack or on an account. It really notifies the topic's subscribers.

For each alarm it sets the state that the alarm is not in (SetAlarmState runs the new state's
actions, as a real breach would), waits for CloudWatch's own record of each action in the alarm
history (`Successfully executed action ...` or `Failed to execute action ...`), then sets the
state back (the next evaluation corrects it anyway). One line per alarm, `--json`, exit 1 if any
action failed or was not recorded in time. A refused publish (a topic policy that does not let
CloudWatch publish) shows here as the failure AWS records, which nothing else reports.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

REASON = "ops prove-alarms: testing the notification path; nothing is wrong"


@dataclass(frozen=True)
class Proof:
    alarm: str
    outcome: str  # delivered, failed, not recorded, no action
    detail: str  # the topic, or CloudWatch's summary of the failure
    actions: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.outcome == "delivered"


def judge(alarm: str, actions: list[str], items: list[dict[str, Any]]) -> Proof:
    """The outcome of one alarm's test from its Action history items after the test began."""
    if not actions:
        return Proof(alarm, "no action", "the alarm notifies nothing in this state", ())
    outcomes: dict[str, tuple[str, str]] = {}
    for item in items:
        data = json.loads(item.get("HistoryData") or "{}")
        resource = data.get("notificationResource") or next(
            (a for a in actions if a in item["HistorySummary"]), None
        )
        if resource in actions and outcomes.get(resource, ("", ""))[0] != "failed":
            failed = data.get("actionState") == "Failed" or item["HistorySummary"].startswith("Failed")
            outcomes[resource] = ("failed", item["HistorySummary"]) if failed else ("delivered", resource)
    missing = [a for a in actions if a not in outcomes]
    failed = [detail for outcome, detail in outcomes.values() if outcome == "failed"]
    if failed:
        return Proof(alarm, "failed", "; ".join(failed), tuple(actions))
    if missing:
        return Proof(alarm, "not recorded", f"no action record for {', '.join(missing)} yet", tuple(actions))
    return Proof(alarm, "delivered", ", ".join(actions), tuple(actions))


def prove(
    cloudwatch: Any,
    prefix: str,
    *,
    timeout: float = 60,
    progress: Callable[[str], None] = lambda _: None,
    clock: Callable[[], float] = time.monotonic,
) -> list[Proof]:
    """Test every metric alarm named `<prefix>-*`; see the module docstring."""
    alarms = [
        alarm
        for page in cloudwatch.get_paginator("describe_alarms").paginate(
            AlarmNamePrefix=f"{prefix}-", AlarmTypes=["MetricAlarm"]
        )
        for alarm in page["MetricAlarms"]
    ]
    started = datetime.now(UTC) - timedelta(seconds=5)  # room for clock skew
    tested: dict[str, tuple[str, list[str]]] = {}
    for alarm in alarms:
        name, was = alarm["AlarmName"], alarm["StateValue"]
        to = "OK" if was == "ALARM" else "ALARM"
        actions = alarm.get("OKActions" if to == "OK" else "AlarmActions") or []
        tested[name] = (was, actions)
        if actions:
            cloudwatch.set_alarm_state(AlarmName=name, StateValue=to, StateReason=REASON)
    progress(
        f"set {sum(1 for _, actions in tested.values() if actions)} alarm(s) to test their actions; "
        f"waiting up to {timeout:.0f} s for CloudWatch's records"
    )
    deadline = clock() + timeout
    while True:
        proofs = [
            judge(name, actions, _action_items(cloudwatch, name, started) if actions else [])
            for name, (_, actions) in tested.items()
        ]
        if all(p.outcome != "not recorded" for p in proofs) or clock() >= deadline:
            break
        time.sleep(1)
    for name, (was, actions) in tested.items():
        if actions:
            cloudwatch.set_alarm_state(
                AlarmName=name, StateValue="OK" if was != "ALARM" else "ALARM", StateReason=REASON
            )
    return sorted(proofs, key=lambda p: p.alarm)


def _action_items(cloudwatch: Any, name: str, since: datetime) -> list[dict[str, Any]]:
    pages = cloudwatch.get_paginator("describe_alarm_history").paginate(
        AlarmName=name, HistoryItemType="Action", StartDate=since, ScanBy="TimestampAscending"
    )
    return [item for page in pages for item in page["AlarmHistoryItems"]]


def format_lines(proofs: list[Proof]) -> list[str]:
    width = max((len(p.alarm) for p in proofs), default=0)
    return [f"{p.outcome:<12}  {p.alarm:<{width}}  {p.detail}" for p in proofs]


def run(args: Any, clients: Any) -> int:
    from ops.terminal import safe_lines

    if not args.yes:
        print(
            f"error: this notifies every subscriber of the {args.prefix} alarms' topics (two notifications per "
            f"alarm); pass --yes to go ahead",
            file=sys.stderr,
        )
        return 2
    print(
        f"testing the notification path of every {args.prefix}-* alarm: subscribers get a test ALARM "
        f"and its OK for each",
        file=sys.stderr,
        flush=True,
    )
    proofs = prove(
        clients.client("cloudwatch"),
        args.prefix,
        timeout=args.timeout,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    if args.json:
        print(json.dumps([{**asdict(p), "ok": p.ok} for p in proofs], indent=2))
    else:
        print(safe_lines(format_lines(proofs)) if proofs else f"no alarms named {args.prefix}-*")
    return 0 if proofs and all(p.ok or p.outcome == "no action" for p in proofs) else 1
