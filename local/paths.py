"""Where the project is, and where a local run keeps its state (keys, logs, stack outputs)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STATE_DIR = Path(os.environ.get("LOCAL_STATE_DIR") or ROOT / ".local")
