"""The write decisions an operator has seen, kept after the worker's log is gone.

Every time `ops status` or the live view reads the worker's log, its WRITE / RESULT / ERROR lines
(and older workers' JOB lines) are kept in a small SQLite database in the operator's own state, one set per deployment
(endpoint, region, stack and log group). When the log group is deleted (the lab's clean-up, or
a retention that ran out), the snapshot rebuilds the decisions from these lines and marks them
as history. Only what was read is kept: a decision nobody looked at before its log went is not
there.

Where: `$OPS_HISTORY` if set (`make up` sets it to `.local/ops-history.sqlite3` in the checkout,
so the local stack's history goes with `make clean`), else `$XDG_STATE_HOME/order-consumer/
history.sqlite3` (`~/.local/state/...` by default), readable by its owner only: it holds order
data. How long: lines older than RETENTION_DAYS are dropped, and at most MAX_LINES lines per
deployment are kept (the oldest go first), about 300 bytes each. `python -m ops history --clear`
empties it for one deployment.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path

from ops.observe import LogRecord

HISTORY_ENV = "OPS_HISTORY"
RETENTION_DAYS = 30
MAX_LINES = 100_000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS lines (
    scope TEXT NOT NULL,
    time_ms INTEGER NOT NULL,
    stream TEXT NOT NULL,
    tag TEXT NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (scope, time_ms, stream, tag, data)
);
CREATE INDEX IF NOT EXISTS lines_by_time ON lines (scope, time_ms);
"""


def default_path(env: Mapping[str, str] = os.environ) -> Path:
    if env.get(HISTORY_ENV):
        return Path(env[HISTORY_ENV])
    state = Path(env.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "order-consumer" / "history.sqlite3"


def scope_of(endpoint: str, region: str | None, stack: str, log_group: str) -> str:
    """One deployment's key: the same stack name on another endpoint or region is another one."""
    return json.dumps([endpoint, region or "", stack, log_group])


class History:
    """The kept lines of every deployment, in one SQLite file."""

    def __init__(
        self,
        path: Path | None = None,
        retention_days: float = RETENTION_DAYS,
        max_lines: int = MAX_LINES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path or default_path()
        self.retention_ms = int(retention_days * 86_400_000)
        self.max_lines, self.clock = max_lines, clock

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        new = not self.path.exists()
        with closing(sqlite3.connect(self.path, timeout=10)) as db:
            if new:
                os.chmod(self.path, 0o600)
            db.executescript(_SCHEMA)
            with db:  # one transaction
                yield db

    def keep(self, scope: str, records: Iterable[LogRecord]) -> int:
        """Add these lines (those already kept are ignored), then drop what is past the limits.
        Returns how many were new."""
        rows = [
            (scope, record.timestamp, record.stream, record.tag, json.dumps(record.data, sort_keys=True))
            for record in records
        ]
        with self._db() as db:
            before = db.total_changes
            db.executemany("INSERT OR IGNORE INTO lines VALUES (?, ?, ?, ?, ?)", rows)
            added = db.total_changes - before
            oldest = int(self.clock() * 1000) - self.retention_ms
            db.execute("DELETE FROM lines WHERE scope = ? AND time_ms < ?", (scope, oldest))
            db.execute(
                "DELETE FROM lines WHERE scope = ? AND rowid IN (SELECT rowid FROM lines WHERE scope = ? "
                "ORDER BY time_ms DESC LIMIT -1 OFFSET ?)",
                (scope, scope, self.max_lines),
            )
        return added

    def records(self, scope: str, since_ms: int | None = None) -> list[LogRecord]:
        """The kept lines of one deployment, oldest first."""
        if not self.path.exists():
            return []
        with self._db() as db:
            rows = db.execute(
                "SELECT time_ms, stream, tag, data FROM lines WHERE scope = ? AND time_ms >= ? "
                "ORDER BY time_ms, rowid",
                (scope, since_ms if since_ms is not None else 0),
            ).fetchall()
        return [LogRecord(time_ms, stream, tag, json.loads(data)) for time_ms, stream, tag, data in rows]

    def clear(self, scope: str) -> int:
        """Forget one deployment's lines; how many there were."""
        if not self.path.exists():
            return 0
        with self._db() as db:
            return db.execute("DELETE FROM lines WHERE scope = ?", (scope,)).rowcount
