"""Alternative handlers the benchmark compares with lambda/worker/app.py."""
