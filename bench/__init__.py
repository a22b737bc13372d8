"""Benchmarks: this handler against the usual alternatives, the local pipeline, the developer loop.

Run with `make bench`; results go to bench/results.json and docs/benchmarks.md.
"""
