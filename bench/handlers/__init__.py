"""Alternative handlers the benchmark compares with lambda/worker/app.py, and that worker itself
(`load_worker`, the one loader of lambda/ code, stacks/lambda_code.py)."""

from stacks.lambda_code import load_worker

__all__ = ["load_worker"]
