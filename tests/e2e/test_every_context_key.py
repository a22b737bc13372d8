"""Every key of the README's context table can be deployed locally at once: one stack with each
key off its default (tests/full_context.py, the same words `make up CONTEXT="..."` takes) deploys
on the embedded AWS, its Options output (what `ops status` and the live view show) names each
value, and the resources the cheapest keys shape say so too."""

from __future__ import annotations

import json

import pytest

from ops.aws import Clients, Endpoint
from ops.snapshot import take_snapshot
from stacks.config import WORKER_RETENTION_ENV
from tests.full_context import FULL_CONTEXT, FULL_OPTIONS
from tests.infra.test_context_synth import documented_keys

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def deployed(shared_aws, tmp_path_factory):
    with shared_aws.stack(FULL_CONTEXT, tmp_path_factory.mktemp(FULL_CONTEXT["prefix"])) as session:
        yield session


def test_the_context_sets_every_documented_key():
    """A key added to the README's table fails here until the full context sets it."""
    assert sorted(FULL_CONTEXT) == sorted(documented_keys()) == sorted(FULL_OPTIONS)


@pytest.mark.long_wait(30)  # a deploy: `make quick` leaves it to `make test`
def test_a_stack_with_every_key_set_deploys_and_its_options_say_so(deployed):
    """The stack is CREATE_COMPLETE and its Options output is each key's value; `ops status`'s
    snapshot reads it from there."""
    stack = deployed.client("cloudformation").describe_stacks(StackName=deployed.stack_name)["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    outputs = {output["OutputKey"]: output["OutputValue"] for output in stack["Outputs"]}
    assert json.loads(outputs["Options"]) == FULL_OPTIONS
    snapshot = take_snapshot(Clients(Endpoint.from_env(deployed.aws_env())), FULL_CONTEXT["prefix"])
    assert snapshot["options"] == {"from": "stack output Options", "values": FULL_OPTIONS}


@pytest.mark.long_wait(30)
def test_the_resources_follow_the_context(deployed):
    """Beyond the output: the FIFO jobs queue deduplicates by content with the retention and
    visibility asked for, the mapping's batch size and concurrency, the function's timeout and
    the order retention it writes, and the tags are the deployed resources' own."""
    prefix = FULL_CONTEXT["prefix"]
    sqs = deployed.client("sqs")
    url = sqs.get_queue_url(QueueName=f"{prefix}-jobs.fifo")["QueueUrl"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert {key: attributes.get(key) for key in ("FifoQueue", "ContentBasedDeduplication")} == {
        "FifoQueue": "true",
        "ContentBasedDeduplication": "true",
    }
    assert (attributes["MessageRetentionPeriod"], attributes["VisibilityTimeout"]) == (str(3 * 86_400), "12")
    assert json.loads(attributes["RedrivePolicy"])["maxReceiveCount"] == 2
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "orders", "cost-center": "cc-42"}
    lambda_api = deployed.client("lambda")
    (mapping,) = lambda_api.list_event_source_mappings(FunctionName=f"{prefix}-worker")["EventSourceMappings"]
    assert (mapping["BatchSize"], mapping["ScalingConfig"]["MaximumConcurrency"]) == (10, 3)
    function = lambda_api.get_function_configuration(FunctionName=f"{prefix}-worker")
    # The table's TTL: the Options output above only; the embedded AWS ignores
    # TimeToLiveSpecification (docs/local-fidelity.md).
    assert function["Timeout"] == 2 and function["TracingConfig"] == {"Mode": "Active"}
    assert function["Environment"]["Variables"][WORKER_RETENTION_ENV] == str(12 * 86_400)
