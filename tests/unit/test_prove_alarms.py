"""How `ops prove-alarms` judges one alarm from CloudWatch's Action history items."""

from __future__ import annotations

import json

from ops.prove_alarms import Proof, format_lines, judge

TOPIC = "arn:aws:sns:us-east-1:123456789012:p-alarms"


def item(summary: str, state: str | None = None, resource: str | None = TOPIC) -> dict:
    data = {"actionState": state} if state else {}
    if resource:
        data["notificationResource"] = resource
    return {"HistoryItemType": "Action", "HistorySummary": summary, "HistoryData": json.dumps(data)}


def test_a_succeeded_action_is_delivered():
    proof = judge("p-dead-letters", [TOPIC], [item(f"Successfully executed action {TOPIC}", "Succeeded")])
    assert (proof.outcome, proof.detail, proof.ok) == ("delivered", TOPIC, True)


def test_a_failed_action_wins_over_a_later_success_and_keeps_aws_summary():
    failure = (
        f'Failed to execute action {TOPIC}. Received error: "CloudWatch Alarms is not authorized to '
        f'perform: SNS:Publish on resource:{TOPIC}"'
    )
    proof = judge(
        "p-x", [TOPIC], [item(failure, "Failed"), item(f"Successfully executed action {TOPIC}", "Succeeded")]
    )
    assert (proof.outcome, proof.detail, proof.ok) == ("failed", failure, False)


def test_no_record_yet_and_no_action_are_told_apart():
    assert judge("p-x", [TOPIC], []).outcome == "not recorded"
    assert judge("p-x", [], []).outcome == "no action"


def test_the_resource_is_read_from_the_summary_when_history_data_lacks_it():
    proof = judge("p-x", [TOPIC], [item(f"Successfully executed action {TOPIC}", resource=None)])
    assert proof.outcome == "delivered"


def test_one_line_per_alarm_with_aligned_names():
    lines = format_lines(
        [Proof("p-a", "delivered", TOPIC, (TOPIC,)), Proof("p-longer", "failed", "why", (TOPIC,))]
    )
    assert lines == [f"delivered     p-a       {TOPIC}", "failed        p-longer  why"]
