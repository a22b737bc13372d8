"""Concurrency of an SQS mapping ("Configuring scaling behavior for SQS event source mappings",
services-sqs-scaling.html; "Handling errors for an SQS event source", services-sqs-errorhandling.html):
ScalingConfig.MaximumConcurrency is honoured and its changes apply while the host runs; the
function's reserved concurrency caps the mapping; reserved concurrency 0 throttles every
invocation, so the messages come back after the visibility timeout with a growing receive count
(and end in the DLQ), and the throttles show in the AWS/Lambda Throttles metric."""

from __future__ import annotations

import datetime

import pytest

from embedded_aws.services.awslambda.metrics import peak_concurrency
from local.session import wait_for
from test_event_source_mappings.support import (
    drained,
    invocations,
    make,
    queue_arn,
    recorder,
    wait_for_bodies,
)
from tests.e2e.conftest import dead_letters, emulator  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def send(emulator, p, prefix: str, count: int) -> None:
    emulator.client("sqs").send_message_batch(
        QueueUrl=p.queue_url, Entries=[{"Id": str(n), "MessageBody": f"{prefix}{n}"} for n in range(count)]
    )


def spans(emulator, name: str, prefix: str) -> list[tuple[float, float]]:
    return [
        (i["start"], i["end"])
        for i in invocations(emulator, name)
        if i["records"] and i["records"][0]["body"].startswith(prefix)
    ]


# The recorder, except that a record whose body starts with "b" waits until three such
# invocations have started (each leaves a file in GATHER_DIR): three run at once by construction
# wherever the mapping lets three run, however long new sandboxes take to start. With a 0.6 s
# sleep instead, the two warm sandboxes could take all ten records before a third had started on
# a loaded machine, and the peak stayed at two.
GATHERING = recorder().replace(
    '    time.sleep(float(os.environ.get("SLEEP", "0")))\n',
    """    records = event.get("Records", [])
    if records and records[0]["body"].startswith("b"):
        import pathlib
        gathered = pathlib.Path(os.environ["GATHER_DIR"])
        (gathered / context.aws_request_id).touch()
        while len(list(gathered.iterdir())) < 3:
            time.sleep(0.05)
    else:
        time.sleep(float(os.environ.get("SLEEP", "0")))
""",
)


def test_maximum_concurrency_is_honoured_and_read_live(emulator, tmp_path):
    """MaximumConcurrency 2: ten 0.6 s invocations never overlap more than two at a time. Raised
    to 5, the next ten run more than two at a time (the first three wait for each other) and never
    more than five."""
    assert GATHERING != recorder()
    p = make(
        emulator,
        "esm-maxconc",
        source=GATHERING,
        create_mapping=False,
        environment={"SLEEP": "0.6", "GATHER_DIR": str(tmp_path)},
        timeout=20,
        visibility=30,
    )
    lambda_api = emulator.client("lambda")
    mapping_id = lambda_api.create_event_source_mapping(
        EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=1, ScalingConfig={"MaximumConcurrency": 2}
    )["UUID"]
    send(emulator, p, "a", 10)
    wait_for_bodies(emulator, p.name, 10, timeout=60)
    assert peak_concurrency(spans(emulator, p.name, "a")) <= 2

    lambda_api.update_event_source_mapping(UUID=mapping_id, ScalingConfig={"MaximumConcurrency": 5})
    wait_for(
        lambda: (
            lambda_api.get_event_source_mapping(UUID=mapping_id)["ScalingConfig"]["MaximumConcurrency"] == 5
        ),
        timeout=30,
        what="the new maximum",
    )
    wait_for(lambda: drained(emulator, p), timeout=30, what="the queue to drain")
    send(emulator, p, "b", 10)
    wait_for_bodies(emulator, p.name, 20, timeout=60)
    assert 2 < peak_concurrency(spans(emulator, p.name, "b")) <= 5


def test_reserved_concurrency_caps_the_mapping(emulator):
    """Reserved concurrency 1: eight 0.3 s invocations run one at a time and all succeed."""
    p = make(
        emulator,
        "esm-reserved1",
        create_mapping=False,
        environment={"SLEEP": "0.3"},
        timeout=3,
        visibility=10,
    )
    lambda_api = emulator.client("lambda")
    lambda_api.put_function_concurrency(FunctionName=p.name, ReservedConcurrentExecutions=1)
    lambda_api.create_event_source_mapping(EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=1)
    send(emulator, p, "r", 8)
    wait_for_bodies(emulator, p.name, 8, timeout=60)
    assert peak_concurrency(spans(emulator, p.name, "r")) == 1
    wait_for(lambda: drained(emulator, p), timeout=30, what="the queue to drain")


def test_reserved_concurrency_zero_throttles_every_batch(emulator):
    """Reserved concurrency 0: the function never runs; the message is received, throttled until
    its 1 s visibility timeout runs out, received again (count 2 = maxReceiveCount) and moved to
    the DLQ by the queue; the Throttles metric counts the throttled attempts."""
    p = make(emulator, "esm-reserved0", create_mapping=False)
    lambda_api = emulator.client("lambda")
    lambda_api.put_function_concurrency(FunctionName=p.name, ReservedConcurrentExecutions=0)
    lambda_api.create_event_source_mapping(EventSourceArn=queue_arn(p), FunctionName=p.name, BatchSize=1)
    emulator.client("sqs").send_message(QueueUrl=p.queue_url, MessageBody="throttled")
    assert dead_letters(emulator, p, 1) == ["throttled"]
    assert invocations(emulator, p.name) == []
    cloudwatch = emulator.client("cloudwatch")
    now = datetime.datetime.now(datetime.UTC)

    def throttles() -> float:
        points = cloudwatch.get_metric_statistics(
            Namespace="AWS/Lambda",
            MetricName="Throttles",
            Dimensions=[{"Name": "FunctionName", "Value": p.name}],
            StartTime=now - datetime.timedelta(minutes=10),
            EndTime=now + datetime.timedelta(minutes=10),
            Period=60,
            Statistics=["Sum"],
        )["Datapoints"]
        summed: float = sum(point["Sum"] for point in points)
        return summed

    assert wait_for(throttles, timeout=30, what="Throttles datapoints") >= 2
