"""Bad input through the real stack: every malformed body is delivered maxReceiveCount times, never
written or acknowledged, and kept in the dead-letter queue byte-for-byte. (The handler-level
property test covers 1,000 bodies without AWS; here 200 go through the queue.) Two receives, not
the default five: the outcome is the same, in one visibility timeout instead of four (72 s of
waiting); the default's value is pinned by the template tests, and the redrive at any count by the
conformance tests against AWS's recordings."""

from __future__ import annotations

from collections import Counter

import pytest

from ops import observe
from tests.e2e.reliability import BATCH_TIMEOUTS, TWO_RECEIVES, deployed, generated_bodies, now_ms

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(45)]

RECEIVES = int(TWO_RECEIVES["max_receive_count"])

BODIES = 200


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    # The 3 s function timeout of the other batch-of-ten checks: a fresh clone's .ci/run saw two
    # invocations of ten malformed bodies starved past 2 s on a saturated machine.
    with deployed(
        shared_aws,
        "relbad",
        10,
        tmp_path_factory.mktemp("relbad"),
        timeouts={**BATCH_TIMEOUTS, **TWO_RECEIVES},
    ) as deployed_stack:
        yield deployed_stack


def test_malformed_bodies_end_in_the_dlq_intact(stack, figure):
    """200 generated malformed bodies through the queue at batch size 10: none written, none
    acknowledged; each is delivered maxReceiveCount times and then sits in the DLQ byte-for-byte."""
    since = now_ms()
    assert stack.take_dead_letters() == []
    before = observe.scan_items(stack.dynamodb, stack.env["ORDERS_TABLE"])
    bodies = generated_bodies(BODIES)
    assert len(bodies) >= BODIES
    stack.send(bodies)
    stack.wait_settled()
    stack.assert_no_abnormal_ends(since)
    dead = stack.take_dead_letters()
    assert Counter(dead) == Counter(bodies)
    assert observe.scan_items(stack.dynamodb, stack.env["ORDERS_TABLE"]) == before
    assert stack.records(since, "WRITE") == [] and stack.records(since, "RESULT") == []
    # Each message's ERROR lines carry its id and receive count: every one was delivered
    # exactly maxReceiveCount times (counted as distinct deliveries, so a log line the SDK
    # happened to send twice cannot inflate the figure).
    deliveries: dict[str, set[str]] = {}
    for error in stack.records(since, "ERROR"):
        deliveries.setdefault(error.data["message_id"], set()).add(error.data["receive_count"])
    assert len(deliveries) == len(bodies)
    assert all(counts == {str(n) for n in range(1, RECEIVES + 1)} for counts in deliveries.values())
    failures = sum(map(len, deliveries.values()))
    figure(
        "bad input (through the queue)",
        f"{len(bodies)} malformed bodies: 0 written, 0 acknowledged, {failures} failed deliveries "
        f"({RECEIVES} each), {len(dead)}/{len(bodies)} in the DLQ byte-for-byte",
    )
