"""Conservation through the real stack (tests/e2e/conservation.py) at batch size 1: one record
per invocation, five concurrent pollers."""

from __future__ import annotations

from tests.e2e.conservation import ConservationRun


class TestBatchSize1(ConservationRun):
    """Conservation at batch size 1."""

    batch_size = 1
