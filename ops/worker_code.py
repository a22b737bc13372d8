"""The deployed worker's own code (lambda/worker/app.py) as a module, for the tools that must judge
messages exactly as the worker does: its parser and its duplicate rule, one implementation and
never a copy. `lambda` is a keyword, so the file is loaded by path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

WORKER_PATH = Path(__file__).resolve().parent.parent / "lambda" / "worker" / "app.py"
WORKER_MODULE = "order_worker_app"


def load_worker() -> ModuleType:
    """The worker module, loaded from its file once per process."""
    if WORKER_MODULE not in sys.modules:
        spec = importlib.util.spec_from_file_location(WORKER_MODULE, WORKER_PATH)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[WORKER_MODULE] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[WORKER_MODULE]
