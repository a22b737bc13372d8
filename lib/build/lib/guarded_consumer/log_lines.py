"""How the worker prints: one line per event, as the lab printed them (print(); each line lands
in CloudWatch Logs as one event). While a record of a batch is processed on a thread of its own,
its lines are kept and printed together when it is done, so two records' lines never interleave
and none is held back to the end of the batch (a line printed late is lost if the function is
stopped at its timeout)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .contract import Tag, line

_LINES = threading.local()  # while a record of a batch is processed: its lines, printed together
_PRINT_LOCK = threading.Lock()
T = TypeVar("T")


def log(tag: Tag, payload: Mapping[str, Any]) -> None:
    """One tagged line (contract.line)."""
    print_line(line(tag, payload))


def print_line(text: str) -> None:
    kept = getattr(_LINES, "kept", None)
    if kept is None:
        print(text, flush=True)
    else:
        kept.append(text)


def printing_together(work: Callable[[], T]) -> T:
    """`work()`, its lines kept and printed in one go when it is done."""
    _LINES.kept = []
    try:
        return work()
    finally:
        lines, _LINES.kept = _LINES.kept, None
        with _PRINT_LOCK:
            for text in lines:
                print(text, flush=True)
