"""The conservation check's reading of a run's log (tests/e2e/reliability.py RunLog): an
invocation that did not return acknowledged none of its records, so its lines are kept apart."""

from __future__ import annotations

from typing import Any

from tests.e2e.reliability import RunLog


class _Logs:
    """FilterLogEvents over fixed events, one page."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events

    def get_paginator(self, name: str) -> _Logs:
        assert name == "filter_log_events"
        return self

    def paginate(self, **kwargs: Any) -> list[dict[str, Any]]:
        return [{"events": self.events}]


def _invocation(stream: str, at: int, request: str, order: str, status: str = "") -> list[dict[str, Any]]:
    lines = [
        f"START RequestId: {request} Version: $LATEST",
        f'JOB {{"id": "{order}", "message_id": "m-{order}", "quantity": 1, "total_cents": 350}}',
        f'RESULT {{"duplicate": false, "id": "{order}", "processed": true, "quantity": 1}}',
        f"END RequestId: {request}",
        f"REPORT RequestId: {request}\tDuration: 3000.00 ms\tBilled Duration: 3000 ms"
        + (f"\tStatus: {status}" if status else ""),
    ]
    return [{"logStreamName": stream, "timestamp": at, "message": text} for text in lines]


def test_lines_of_an_invocation_that_timed_out_are_kept_apart() -> None:
    """Interleaved streams: the timed-out invocation's JOB and RESULT are `cut`, the others'
    lines are `returned`, and the ending is counted by its status."""
    events = [
        *_invocation("a", 1, "r1", "o1"),
        *_invocation("b", 2, "r2", "o2", status="timeout"),
        *_invocation("a", 3, "r3", "o3"),
    ]
    events.sort(key=lambda event: event["timestamp"])
    run = RunLog.read(_Logs(events), "group", 0)
    assert [r.data["id"] for r in run.of("RESULT")] == ["o1", "o3"]
    assert [(r.tag, r.data["id"]) for r in run.cut] == [("JOB", "o2"), ("RESULT", "o2")]
    assert dict(run.ends) == {"timeout": 1}
