"""Alternative handlers the benchmark compares with lambda/worker/app.py, and that worker itself
(`load_worker`, shared with the operator tools)."""

from ops.worker_code import load_worker

__all__ = ["load_worker"]
