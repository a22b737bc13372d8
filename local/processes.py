"""Is a process still running, does any process still hold a lease, a file lock between processes,
and an exit that skips the interpreter's teardown. (For the emulator's state file, the test run's
leases, its shared embedded AWS and synth service.)"""

from __future__ import annotations

import fcntl
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def alive(pid: int) -> bool:
    """True while `pid` runs. A process that has exited but was not yet reaped by its parent (a
    zombie, e.g. an emulator another test worker started) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        # The state follows the command name, which is in parentheses and may contain spaces.
        return stat.read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def leaseholders_alive(leases: Path) -> bool:
    """Some process that holds a lease in `leases` (a file named after its pid) still runs."""
    return leases.exists() and any(path.name.isdigit() and alive(int(path.name)) for path in leases.iterdir())


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the block, across processes."""
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def exit_without_teardown() -> None:
    """End the process now, once everything is stopped and written: logs flushed, then no
    interpreter teardown (freeing a heap of moto's and botocore's objects takes 0.6-1 CPU-s)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)
