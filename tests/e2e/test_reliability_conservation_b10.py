"""Conservation through the real stack (tests/e2e/conservation.py) at batch size 10, with partial
batch responses."""

from __future__ import annotations

from tests.e2e.conservation import ConservationRun


class TestBatchSize10(ConservationRun):
    """Conservation at batch size 10."""

    batch_size = 10
