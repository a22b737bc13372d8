"""Is a process still running? (For the emulator's state file and the test run's leases.)"""

from __future__ import annotations

import os
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
