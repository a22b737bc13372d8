"""The conservation run shared by test_reliability_conservation_b1.py and _b10.py: over 300+
mixed messages (new orders, copies, conflicting copies, malformed bodies) in random order, every
message is accounted for exactly as predicted. One file per batch size, so that xdist, which hands
out files, runs the two side by side."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from tests.e2e.reliability import BATCH_TIMEOUTS, Stack, deployed, generated_bodies, now_ms

# The conservation runs send 300+ messages in batches while the rest of the suite deploys: on a
# saturated machine a batch can time out twice, and with two receives a valid order then ended
# in the DLQ (once in a fresh clone's run). Three receives need three timeouts in a row.
THREE_RECEIVES = {"max_receive_count": "3", "target": "local"}
# Every kind of message (copies, conflicting copies, malformed bodies) many times over, in random
# order, in seconds of the suite's time: the rule is the same at any count (a 1,000-message run
# took a core for two minutes at batch size 1), and load is the benchmarks' business.
ORDERS, MALFORMED = 150, 50


def mixed_run(tag: str, seed: str) -> tuple[list[str], dict[str, set[str]]]:
    """About 350 messages: orders sent once or several times, some with a conflicting copy,
    and malformed bodies, shuffled. Returns the bodies and each id's distinct versions."""
    rng = random.Random(seed)
    bodies: list[str] = []
    versions: dict[str, set[str]] = {}
    for n in range(ORDERS):
        order_id = f"{tag}-{n}"
        quantity = rng.randint(1, 10)
        original = json.dumps({"id": order_id, "quantity": quantity})
        copies = [original] * (1 + rng.choice([0, 0, 1, 2]))
        if rng.random() < 0.2:
            copies.append(json.dumps({"id": order_id, "quantity": quantity % 10 + 1}))
        versions[order_id] = set(copies)
        bodies += copies
    bodies += generated_bodies(MALFORMED)
    rng.shuffle(bodies)
    return bodies, versions


def check_conservation(stack: Stack, batch_size: int, figure) -> None:
    """Over 300 mixed messages in random order: sent = accepted + acknowledged duplicates + in
    the DLQ, each exactly as predicted from the version that won each id; the table holds one
    item per id, equal to a version sent for it; nothing is written twice."""
    since, tag = now_ms(), f"mix{batch_size}"
    bodies, versions = mixed_run(tag, f"conservation-{batch_size}")
    assert len(bodies) >= 300
    stack.send(bodies)
    stack.wait_settled()
    log = stack.run_log(since)

    stored = stack.items(f"{tag}-")
    missing = sorted(set(versions) - set(stored))
    if missing:
        errors = [r.data for r in log.of("ERROR") if r.data.get("id") in missing]
        raise AssertionError(
            f"{len(missing)} order(s) never stored, e.g. {missing[:3]}; their errors: {errors[:6]}"
        )
    winners = {
        order_id: json.dumps({"id": order_id, "quantity": item["quantity"]})
        for order_id, item in stored.items()
    }
    assert all(winners[order_id] in versions[order_id] for order_id in versions)
    assert all(item["total_cents"] == item["quantity"] * 250 + 100 for item in stored.values())
    acknowledged_expected = [b for b in bodies if b in winners.values()]
    dead_expected = [b for b in bodies if b not in winners.values()]

    dead = stack.take_dead_letters()
    writes = [r.data for r in log.of("WRITE") if str(r.data["id"]).startswith(f"{tag}-")]
    accepted = [w for w in writes if w["outcome"] == "Accepted"]
    # A write whose reply timed out (a busy emulator) is retried; if it had gone in, the retry
    # is rejected with the identical item: the order's first write, logged as a duplicate.
    first_by_retry = [
        w
        for w in writes
        if w["decision"] == "duplicate"
        and w.get("retried_after")
        and w["id"] not in {a["id"] for a in accepted}
    ]
    # A write whose reply timed out with no time left to retry fails its record (ERROR), and SQS
    # delivers it again; if it had gone in, that delivery is rejected with the identical item:
    # the order's first write, logged as a duplicate one delivery later.
    # An invocation that did not return (its function timed out) acknowledged none of its
    # records: each is delivered again, and a write it made is acknowledged as a duplicate then.
    # Its lines name those orders, except the one whose write was under way when it was stopped
    # (no line yet): at most one per such invocation, the worker writing one record at a time.
    timed_out = {r.data.get("id") for r in log.of("ERROR") if r.data.get("error") == "ReadTimeoutError"} | {
        r.data.get("id") for r in log.cut
    }
    first_ids = {a["id"] for a in accepted} | {w["id"] for w in first_by_retry}
    unexplained = {
        w["id"]: w
        for w in writes
        if w["decision"] == "duplicate" and w["id"] not in first_ids and w["id"] not in timed_out
    }
    cut_mid_write = list(unexplained.values())
    assert len(cut_mid_write) <= sum(log.ends.values()), (
        "orders first written by no logged write, beyond one per invocation that did not return",
        cut_mid_write[:4],
    )
    first_by_redelivery = (
        list(
            {
                w["id"]: w
                for w in writes
                if w["decision"] == "duplicate" and w["id"] in timed_out and w["id"] not in first_ids
            }.values()
        )
        + cut_mid_write
    )
    first = Counter(w["id"] for w in first_by_retry) + Counter(w["id"] for w in first_by_redelivery)
    duplicates = [
        r for r in log.of("RESULT") if str(r.data["id"]).startswith(f"{tag}-") and r.data["duplicate"]
    ]
    assert Counter(dead) == Counter(dead_expected)
    unaccounted = Counter({order_id: 1 for order_id in versions}) - first - Counter(w["id"] for w in accepted)
    assert Counter(w["id"] for w in accepted) == Counter({order_id: 1 for order_id in versions}) - first, (
        "orders stored with no Accepted write and no timed-out first attempt",
        [w for w in writes if w["id"] in unaccounted][:4],
    )  # no order written twice
    assert len(accepted) + len(first_by_retry) + len(first_by_redelivery) == len(versions)
    assert len(duplicates) - len(first_by_retry) - len(first_by_redelivery) == len(
        acknowledged_expected
    ) - len(versions)
    assert len(bodies) == len(accepted) + len(duplicates) + len(dead)
    figure(
        f"conservation (batch size {batch_size})",
        f"sent {len(bodies)} = accepted {len(accepted)} + duplicates {len(duplicates)} + DLQ {len(dead)}; "
        f"table holds exactly the {len(versions)} expected items"
        + (
            f" ({len(first_by_retry) + len(first_by_redelivery)} first writes acknowledged as duplicates after a "
            "timed-out attempt)"
            if first_by_retry or first_by_redelivery
            else ""
        )
        + (f"; invocations that did not return, redelivered: {dict(log.ends)}" if log.ends else ""),
    )


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.long_wait(70)
class ConservationRun:
    """The real stack at `batch_size` (set by each file's subclass), then one conservation run."""

    batch_size: int

    @pytest.fixture(scope="class")
    @classmethod
    def stack(cls, shared_aws, tmp_path_factory):
        prefix = f"relmix{cls.batch_size}"
        timeouts = {**BATCH_TIMEOUTS, **THREE_RECEIVES}
        with deployed(shared_aws, prefix, cls.batch_size, tmp_path_factory.mktemp(prefix), timeouts) as stack:
            yield stack

    def test_conservation_over_a_mixed_run(self, stack, figure):
        """Every message of a 300+ mixed run accounted for as predicted (check_conservation)."""
        check_conservation(stack, self.batch_size, figure)
