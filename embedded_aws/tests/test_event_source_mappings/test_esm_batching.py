"""BatchSize and MaximumBatchingWindowInSeconds of an SQS mapping ("Lambda parameters for Amazon
SQS event source mappings", services-sqs-parameters.html): a batch size over 10 needs a window
of at least 1 s; with a window the host keeps receiving until the batch is full or the window
has passed, so one invocation can hold more than the 10 messages one ReceiveMessage returns. A
mapping is refused at create when the queue's visibility timeout is shorter than the function's
timeout (services-sqs-configure.html)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from local.session import wait_for
from test_event_source_mappings.support import drained, invocations, make, queue_arn, wait_for_bodies
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_batch_size_over_ten_needs_a_batching_window(emulator):
    """BatchSize 11 without a window: InvalidParameterValueException with AWS's message, on
    create and on update; with a 1 s window it is accepted."""
    p = make(emulator, "esm-window-rule", create_mapping=False)
    lambda_api = emulator.client("lambda")
    with pytest.raises(ClientError) as refused:
        lambda_api.create_event_source_mapping(EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=11)
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValueException"
    assert (
        "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10"
        in refused.value.response["Error"]["Message"]
    )
    mapping = lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn(p),
        FunctionName=p.name,
        BatchSize=11,
        MaximumBatchingWindowInSeconds=1,
        Enabled=False,
    )
    assert (mapping["BatchSize"], mapping["MaximumBatchingWindowInSeconds"]) == (11, 1)
    with pytest.raises(ClientError) as refused:
        lambda_api.update_event_source_mapping(UUID=mapping["UUID"], MaximumBatchingWindowInSeconds=0)
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValueException"


def test_a_batching_window_gathers_more_than_ten_and_waits_for_the_window(emulator):
    """25 messages waiting, BatchSize 30, a 2 s window, MaximumConcurrency 2: every message is
    handled once, in at most two invocations (so at least one holds more than 10), and as the
    batch never fills, each invocation starts only once its window has passed."""
    p = make(emulator, "esm-window", create_mapping=False)
    sqs = emulator.client("sqs")
    for start in range(0, 25, 10):
        sqs.send_message_batch(
            QueueUrl=p.queue_url,
            Entries=[{"Id": str(n), "MessageBody": f"m{n}"} for n in range(start, min(start + 10, 25))],
        )
    emulator.client("lambda").create_event_source_mapping(
        EventSourceArn=queue_arn(p),
        FunctionName=p.name,
        BatchSize=30,
        MaximumBatchingWindowInSeconds=2,
        ScalingConfig={"MaximumConcurrency": 2},
    )
    wait_for_bodies(emulator, p.name, 25)
    wait_for(lambda: drained(emulator, p), timeout=30, what="the queue to drain")
    seen = invocations(emulator, p.name)
    assert sorted(r["body"] for i in seen for r in i["records"]) == sorted(f"m{n}" for n in range(25))
    assert len(seen) <= 2 and max(len(i["records"]) for i in seen) > 10
    for invocation in seen:
        first_received = min(
            int(r["attributes"]["ApproximateFirstReceiveTimestamp"]) for r in invocation["records"]
        )
        assert invocation["start"] - first_received / 1000 >= 1.9


def test_a_visibility_timeout_shorter_than_the_function_timeout_is_refused_at_create(emulator):
    """CreateEventSourceMapping: a queue visibility timeout of 2 s for a 3 s function is
    InvalidParameterValueException with AWS's message; 3 s is accepted. A later change of
    either timeout is not checked, as on AWS."""
    p = make(emulator, "esm-visibility", create_mapping=False, timeout=3, visibility=2)
    lambda_api = emulator.client("lambda")
    with pytest.raises(ClientError) as refused:
        lambda_api.create_event_source_mapping(
            EventSourceArn=queue_arn(p), FunctionName=p.name, Enabled=False
        )
    error = refused.value.response["Error"]
    assert (error["Code"], error["Message"]) == (
        "InvalidParameterValueException",
        "Queue visibility timeout: 2 seconds is less than Function timeout: 3 seconds",
    )
    emulator.client("sqs").set_queue_attributes(QueueUrl=p.queue_url, Attributes={"VisibilityTimeout": "3"})
    mapping = lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, Enabled=False
    )
    lambda_api.update_function_configuration(FunctionName=p.name, Timeout=10)
    assert lambda_api.get_event_source_mapping(UUID=mapping["UUID"])["State"] in ("Disabled", "Disabling")
