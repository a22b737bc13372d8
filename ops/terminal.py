"""Text for a terminal from data we do not control. An order id, a message body or a log line can
carry escape sequences (move the cursor, rewrite the screen, set the window title, or worse on
some terminals) or bidirectional overrides that make text read differently than it is; printed
raw, they act on the operator's terminal. `safe` shows them as escapes instead."""

from __future__ import annotations

import sys
import time
import unicodedata
from collections.abc import Callable
from typing import Any

# Cc: C0 and C1 controls and DEL (ESC and CSI among them); Cf: format characters such as the
# bidirectional overrides and zero-width joiners; Zl/Zp: line and paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe(text: str) -> str:
    """`text` with every control, format and separator character written as a visible escape."""
    if text.isprintable():  # the common case: nothing to do
        return text
    return "".join(
        _escape(char) if unicodedata.category(char) in _UNSAFE_CATEGORIES else char for char in text
    )


def safe_lines(lines: list[str]) -> str:
    """Lines joined for printing, each made safe: data cannot add or break a line."""
    return "\n".join(safe(line) for line in lines)


class Progress:
    """One line on stderr at most once `every` seconds while long work runs (`line` makes it from
    the figures the work reports); nothing for work done within the first `every` seconds."""

    def __init__(
        self, line: Callable[[Any], str], every: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.line, self.every, self.clock = line, every, clock
        self.last = clock()

    def __call__(self, figures: Any) -> None:
        now = self.clock()
        if now - self.last < self.every:
            return
        self.last = now
        print(safe(self.line(figures)), file=sys.stderr, flush=True)
