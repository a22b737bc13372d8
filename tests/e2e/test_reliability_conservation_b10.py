"""Conservation through the real stack: over 1,000+ mixed messages (new orders, copies,
conflicting copies, malformed bodies) in random order, every message is accounted for exactly as
predicted, at batch size 10, with partial batch responses."""

from __future__ import annotations

import pytest

from tests.e2e.reliability import BATCH_TIMEOUTS, THREE_RECEIVES, check_conservation, deployed

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(70)]

BATCH_SIZE = 10


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    with deployed(
        shared_aws,
        "relmix10",
        BATCH_SIZE,
        tmp_path_factory.mktemp("relmix10"),
        {**BATCH_TIMEOUTS, **THREE_RECEIVES},
    ) as deployed_stack:
        yield deployed_stack


def test_conservation_over_a_mixed_run(stack, figure):
    """Every message of a 1,000+ mixed run accounted for as predicted (tests/e2e/reliability.py)."""
    check_conservation(stack, BATCH_SIZE, figure)
