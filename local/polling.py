"""Waiting for something the emulator does in the background, with a deadline, never a sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from local.reporting import LocalError

T = TypeVar("T")


def wait_for(
    check: Callable[[], T], *, timeout: float, interval: float = 0.1, what: str | Callable[[], str]
) -> T:
    """Poll `check` until it returns something truthy, or fail naming `what` after `timeout`
    (a callable `what` is asked then, so the message can say what was last seen)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            described = what() if callable(what) else what
            raise LocalError(f"timed out after {timeout:.0f} s waiting for {described}")
        time.sleep(interval)
