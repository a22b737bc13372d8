"""Alternative handlers the benchmark compares with lambda/worker/app.py, and that worker itself
loaded as a module (`lambda` is a keyword, and `app` is taken by the CDK app)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

WORKER_PATH = Path(__file__).resolve().parents[2] / "lambda" / "worker" / "app.py"
WORKER_MODULE = "bench_worker_app"


def load_worker() -> Any:
    """The deployed worker module, loaded from its file once per process."""
    if WORKER_MODULE not in sys.modules:
        spec = importlib.util.spec_from_file_location(WORKER_MODULE, WORKER_PATH)
        module = importlib.util.module_from_spec(spec)
        sys.modules[WORKER_MODULE] = module
        spec.loader.exec_module(module)
    return sys.modules[WORKER_MODULE]
