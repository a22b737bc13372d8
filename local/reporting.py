"""How the local driver speaks: progress lines on stderr, and `LocalError`, the one line that
stops a run."""

from __future__ import annotations

import sys


class LocalError(RuntimeError):
    """A local run cannot go on; the message says why in one line."""


def progress(message: str) -> None:
    """Progress goes to stderr so stdout of `make up` stays paste-ready exports."""
    print(message, file=sys.stderr, flush=True)
