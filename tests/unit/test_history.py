"""The operator's kept decisions (ops/history.py): lines kept once, per deployment, within their
limits of age and count, readable by their owner only."""

from __future__ import annotations

import stat

from ops.history import History, default_path, scope_of
from ops.observe import LogRecord

DAY_MS = 86_400_000


def line(time_ms: int, tag: str = "WRITE", order_id: str = "a") -> LogRecord:
    return LogRecord(time_ms, "stream-1", tag, {"id": order_id, "decision": "written"})


def test_a_line_read_twice_is_kept_once_and_deployments_stay_apart(tmp_path):
    """The view reads the same hour of log on every poll: each line is kept once, and two
    deployments (same stack name, another endpoint) do not see each other's lines."""
    history = History(tmp_path / "h.sqlite3", clock=lambda: 10.0)
    here, there = (
        scope_of("http://localhost:5000", "us-east-1", "s", "g"),
        scope_of("aws", "us-east-1", "s", "g"),
    )
    lines = [line(1000, "JOB"), line(1001), line(1002, "RESULT")]
    assert history.keep(here, lines) == 3
    assert history.keep(here, lines) == 0
    assert history.records(here) == lines
    assert history.records(there) == []
    assert history.clear(here) == 3 and history.records(here) == []


def test_lines_past_the_retention_or_the_count_limit_are_dropped_oldest_first(tmp_path):
    """Older than the retention: gone at the next keep; over the count: the oldest go."""
    now_ms = 40 * DAY_MS
    history = History(tmp_path / "h.sqlite3", retention_days=30, max_lines=3, clock=lambda: now_ms / 1000)
    scope = scope_of("e", "r", "s", "g")
    history.keep(
        scope, [line(now_ms - 31 * DAY_MS, order_id="too-old"), line(now_ms - DAY_MS, order_id="kept")]
    )
    assert [r.data["id"] for r in history.records(scope)] == ["kept"]
    history.keep(scope, [line(now_ms - 10 + i, order_id=f"new-{i}") for i in range(3)])
    assert [r.data["id"] for r in history.records(scope)] == ["new-0", "new-1", "new-2"]


def test_the_file_is_its_owners_only_and_its_place_follows_the_environment(tmp_path):
    """It holds order data: mode 600 in a directory of mode 700. $OPS_HISTORY names it; without
    it, $XDG_STATE_HOME (or ~/.local/state) holds it."""
    path = tmp_path / "state" / "h.sqlite3"
    History(path).keep(scope_of("e", "r", "s", "g"), [line(1)])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert default_path({"OPS_HISTORY": "/x/h.db"}).as_posix() == "/x/h.db"
    assert default_path({"XDG_STATE_HOME": "/s"}).as_posix() == "/s/order-consumer/history.sqlite3"


def test_reading_a_history_never_written_creates_nothing(tmp_path):
    path = tmp_path / "none.sqlite3"
    assert History(path).records(scope_of("e", "r", "s", "g")) == [] and not path.exists()


def test_clearing_one_deployment_keeps_the_others_lines(tmp_path):
    """`clear` forgets one deployment's lines only: with both holding lines, the other keeps
    every one of its own (a clear that wiped the whole file passed the test above, whose other
    deployment was empty)."""
    history = History(tmp_path / "h.sqlite3", clock=lambda: 10.0)
    here, there = scope_of("e", "r", "s", "here"), scope_of("e", "r", "s", "there")
    history.keep(here, [line(1000, order_id="h1"), line(1001, order_id="h2")])
    history.keep(there, [line(1002, order_id="t1")])
    assert history.clear(here) == 2
    assert history.records(here) == []
    assert [r.data["id"] for r in history.records(there)] == ["t1"]


def test_the_count_limit_holds_per_deployment(tmp_path):
    """Each deployment keeps its own newest `max_lines`: a busy one's lines never push a quiet
    one's out, and neither holds more than the limit."""
    history = History(tmp_path / "h.sqlite3", max_lines=2, clock=lambda: 10.0)
    busy, quiet = scope_of("e", "r", "s", "busy"), scope_of("e", "r", "s", "quiet")
    history.keep(quiet, [line(1, order_id="q1"), line(2, order_id="q2")])
    history.keep(busy, [line(10 + i, order_id=f"b{i}") for i in range(5)])
    assert [r.data["id"] for r in history.records(quiet)] == ["q1", "q2"]
    assert [r.data["id"] for r in history.records(busy)] == ["b3", "b4"]
