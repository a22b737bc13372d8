"""Where the project is, and where a local run keeps its state (keys, logs, stack outputs)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# package.json's CDK CLI and the Node 24 it ships (jsii no longer supports Node 20).
NODE_BIN = ROOT / "node_modules" / ".bin"
DEFAULT_STATE_DIR = Path(os.environ.get("LOCAL_STATE_DIR") or ROOT / ".local")
