"""The scaling rule of the local Lambda host's SQS mappings (lambda_host/event_source_mappings/scaling.py), with time
passed in: five batches at first, one more per 0.2 s (300 a minute) while batches come back
full, back to the floor when receives come back empty, and never more than the local cap,
MaximumConcurrency or reserved concurrency."""

from __future__ import annotations

from embedded_aws.lambda_host.event_source_mappings.scaling import (
    INITIAL_BATCHES,
    LOCAL_MAX_CONCURRENCY,
    SCALE_UP_SECONDS,
    Scaling,
    concurrency_limit,
)


def test_limit_is_the_lowest_of_cap_maximum_and_reserved_concurrency():
    """MaximumConcurrency and a positive reserved concurrency lower the local cap; reserved
    concurrency 0 does not stop polling (its invocations are throttled instead)."""
    assert concurrency_limit(None, None) == LOCAL_MAX_CONCURRENCY == 20
    assert concurrency_limit(2, None) == 2
    assert concurrency_limit(None, 3) == 3
    assert concurrency_limit(10, 4) == 4
    assert concurrency_limit(1000, None) == LOCAL_MAX_CONCURRENCY
    assert concurrency_limit(None, 0) == LOCAL_MAX_CONCURRENCY


def test_starts_with_five_or_the_limit():
    """Five pollers at first (the Lambda service's five concurrent batches), fewer under a lower
    limit; a raised limit adds the missing ones."""
    scaling = Scaling()
    assert scaling.start(limit=2) == 2
    assert scaling.start(limit=2) == 0
    assert scaling.start(limit=20) == INITIAL_BATCHES - 2
    assert scaling.active == INITIAL_BATCHES


def test_full_batches_add_one_poller_per_step_up_to_the_limit():
    """300 more concurrent invocations a minute: at most one per 0.2 s, only after a full batch,
    never past the limit."""
    scaling = Scaling()
    scaling.start(limit=7)
    assert not scaling.after_receive(9, 10, limit=7, now=100.0)  # not full: messages do not remain
    assert scaling.after_receive(10, 10, limit=7, now=100.0)
    assert not scaling.after_receive(10, 10, limit=7, now=100.0 + SCALE_UP_SECONDS / 2)
    assert scaling.after_receive(10, 10, limit=7, now=100.0 + SCALE_UP_SECONDS)
    assert scaling.active == 7
    assert not scaling.after_receive(10, 10, limit=7, now=200.0)


def test_empty_receives_scale_back_to_the_floor_and_a_lowered_limit_retires_at_once():
    """An empty receive retires pollers above the floor; after MaximumConcurrency is lowered,
    pollers above it retire after their batch even while messages keep coming."""
    scaling = Scaling()
    scaling.start(limit=20)
    for step in range(3):
        scaling.after_receive(10, 10, limit=20, now=step * SCALE_UP_SECONDS)
    assert scaling.active == 8
    assert [scaling.retire(empty=True, limit=20) for _ in range(4)] == [True, True, True, False]
    assert scaling.active == 5
    assert not scaling.retire(empty=False, limit=20)
    assert [scaling.retire(empty=False, limit=2) for _ in range(4)] == [True, True, True, False]
    assert scaling.active == 2
