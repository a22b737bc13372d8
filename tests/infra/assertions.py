"""aws_cdk.assertions for the infra tests, imported on first use (`assertions.Match`,
`assertions.Template`). Every xdist worker collects every test module, and an aws_cdk import at a
module's top cost each of them about 0.7 CPU-seconds and a jsii process, although one worker
runs these tests (their `jsii` mark, conftest.py)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("_"):  # collection asks every module for `__test__`, `_mock_name` and the like
        raise AttributeError(name)
    import aws_cdk.assertions

    return getattr(aws_cdk.assertions, name)
