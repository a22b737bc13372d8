"""Conservation through the real stack: over 1,000+ mixed messages (new orders, copies,
conflicting copies, malformed bodies) in random order, every message is accounted for exactly as
predicted, at batch size 1 (one record per invocation, five concurrent pollers)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.e2e.reliability import deployed, mixed_run, now_ms

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(110)]

BATCH_SIZE = 1


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    with deployed(shared_aws, "relmix1", BATCH_SIZE, tmp_path_factory.mktemp("relmix1")) as deployed_stack:
        yield deployed_stack


def test_conservation_over_a_mixed_run(stack, figure):
    """Over 1,000 mixed messages in random order: sent = accepted + acknowledged duplicates + in
    the DLQ, each exactly as predicted from the version that won each id; the table holds one
    item per id, equal to a version sent for it; nothing is written twice."""
    batch_size, since, tag = BATCH_SIZE, now_ms(), f"mix{BATCH_SIZE}"
    bodies, versions = mixed_run(tag, f"conservation-{BATCH_SIZE}")
    assert len(bodies) >= 1000
    stack.send(bodies)
    stack.wait_settled()
    stack.assert_no_abnormal_ends(since)

    stored = stack.items(f"{tag}-")
    assert sorted(stored) == sorted(versions)
    winners = {order_id: json.dumps({"id": order_id, "quantity": item["quantity"]}) for order_id, item in stored.items()}
    assert all(winners[order_id] in versions[order_id] for order_id in versions)
    assert all(item["total_cents"] == item["quantity"] * 250 + 100 for item in stored.values())
    acknowledged_expected = [b for b in bodies if b in winners.values()]
    dead_expected = [b for b in bodies if b not in winners.values()]

    dead = stack.take_dead_letters()
    writes = [r.data for r in stack.records(since, "WRITE") if str(r.data["id"]).startswith(f"{tag}-")]
    accepted = [w for w in writes if w["outcome"] == "Accepted"]
    # A write whose reply timed out (a busy emulator) is retried; if it had gone in, the retry
    # is rejected with the identical item: the order's first write, logged as a duplicate.
    first_by_retry = [w for w in writes if w["decision"] == "duplicate" and w.get("retried_after")
                      and w["id"] not in {a["id"] for a in accepted}]
    duplicates = [r for r in stack.records(since, "RESULT") if str(r.data["id"]).startswith(f"{tag}-") and r.data["duplicate"]]
    assert Counter(dead) == Counter(dead_expected)
    assert Counter(w["id"] for w in accepted) == Counter({order_id: 1 for order_id in versions}) - Counter(
        w["id"] for w in first_by_retry)  # no order written twice
    assert len(accepted) + len(first_by_retry) == len(versions)
    assert len(duplicates) - len(first_by_retry) == len(acknowledged_expected) - len(versions)
    assert len(bodies) == len(accepted) + len(duplicates) + len(dead)
    figure(f"conservation (batch size {batch_size})",
           f"sent {len(bodies)} = accepted {len(accepted)} + duplicates {len(duplicates)} + DLQ {len(dead)}; "
           f"table holds exactly the {len(versions)} expected items"
           + (f" ({len(first_by_retry)} first writes acknowledged as duplicates after a timed-out attempt)"
              if first_by_retry else ""))
