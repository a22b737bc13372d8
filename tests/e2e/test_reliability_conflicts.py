"""Conflicting copies through the real stack: ten copies of one id with ten quantities at once;
one is written, the other nine are never acknowledged and end in the dead-letter queue."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.e2e.reliability import FIVE_POLLERS, TWO_RECEIVES, deployed, now_ms
from tests.shared_aws import FAST_TIMEOUTS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(45)]


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    """Batch size 1: five pollers take one copy each, so the copies race."""
    with deployed(
        shared_aws,
        "relconflict",
        1,
        tmp_path_factory.mktemp("relconflict"),
        {**FAST_TIMEOUTS, **TWO_RECEIVES, **FIVE_POLLERS},
    ) as deployed_stack:
        yield deployed_stack


def test_concurrent_conflicting_copies_one_wins_rest_dead_lettered(stack, figure):
    """Ten copies of one id with ten different quantities at once: exactly one is written; the
    other nine are never acknowledged and end in the DLQ; the stored item is the winner's."""
    since = now_ms()
    bodies = [json.dumps({"id": "race-conflict", "quantity": q}) for q in range(1, 11)]
    stack.send(bodies)
    stack.wait_settled()
    accepted = [
        r.data
        for r in stack.records(since, "WRITE")
        if r.data["id"] == "race-conflict" and r.data["outcome"] == "Accepted"
    ]
    assert len(accepted) == 1
    winner = accepted[0]["requested"]
    assert stack.items("race-conflict") == {"race-conflict": winner}
    dead = stack.take_dead_letters()
    assert Counter(dead) == Counter(b for b in bodies if json.loads(b)["quantity"] != winner["quantity"])
    results = [r.data for r in stack.records(since, "RESULT") if r.data["id"] == "race-conflict"]
    assert results == [
        {"id": "race-conflict", "quantity": winner["quantity"], "processed": True, "duplicate": False}
    ]
    figure(
        "race (conflicting copies)",
        f"10 copies, 10 quantities: 1 written (quantity {winner['quantity']}), "
        f"{len(dead)} in the DLQ, 0 acknowledged",
    )
