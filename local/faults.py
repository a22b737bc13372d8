"""DynamoDB faults injected into a running embedded AWS: the rules file embedded_aws/faults.py
reads on every request (`python -m local faults` is their command line; AWS has no such switch)."""

from __future__ import annotations

from typing import Any

from embedded_aws import FAULTS_FILE, add_fault, add_latency, clear_faults, read_faults
from local.emulator_process import EmulatorProcess


class InjectedFaults:
    """The fault rules of one emulator; changing them needs it running, reading them does not."""

    def __init__(self, emulator: EmulatorProcess) -> None:
        self.emulator = emulator
        self.path = emulator.state_dir / FAULTS_FILE

    def inject(
        self, *, action: str, table: str, code: str, status: int, count: int, message: str | None = None
    ) -> None:
        """The next `count` DynamoDB `action` requests on `table` fail with `code`/`status`."""
        self.emulator.require_state()
        add_fault(
            self.path, action=action, table=table, code=code, status=status, count=count, message=message
        )

    def slow_down(self, *, action: str, table: str, latency_ms: float) -> None:
        """Every DynamoDB `action` request on `table` waits `latency_ms` first (0: no longer)."""
        self.emulator.require_state()
        add_latency(self.path, action=action, table=table, latency_ms=latency_ms)

    def clear(self, table: str | None = None) -> int:
        """Remove every rule (of `table` only, if given); how many went."""
        self.emulator.require_state()
        removed: int = clear_faults(self.path, table)
        return removed

    def rules(self) -> list[dict[str, Any]]:
        """The injected fault rules with their `remaining` and `served` counts."""
        found: list[dict[str, Any]] = read_faults(self.path)
        return found
