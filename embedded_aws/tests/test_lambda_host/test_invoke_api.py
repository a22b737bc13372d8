"""The Invoke API of the embedded AWS running functions in the local Lambda host (botocore's
Invoke documentation, API_Invoke): DryRun validates and runs nothing (204); Event returns 202;
with the function's reserved concurrency in use the answer is 429 TooManyRequestsException with
Reason ReservedFunctionConcurrentInvocationLimitExceeded; a missing function is 404; no payload
is an empty event."""

from __future__ import annotations

import json
from typing import cast

import pytest
from botocore.exceptions import ClientError
from test_event_source_mappings.support import invocations, make

from local.session import wait_for
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def lambda_client(emulator, **config):
    return emulator.new_client("lambda", **config)


def test_dry_run_validates_and_runs_nothing_and_event_is_accepted(emulator):
    """DryRun: 204, an empty payload, no invocation. Event: 202 at once, and the function runs."""
    p = make(emulator, "inv-dryrun", create_mapping=False)
    lambda_api = emulator.client("lambda")
    dry = lambda_api.invoke(FunctionName=p.name, InvocationType="DryRun", Payload=b'{"Records": []}')
    assert dry["StatusCode"] == 204 and dry["Payload"].read() == b""
    event = lambda_api.invoke(
        FunctionName=p.name,
        InvocationType="Event",
        Payload=json.dumps({"Records": [{"messageId": "e", "body": "event"}]}),
    )
    assert event["StatusCode"] == 202
    wait_for(lambda: invocations(emulator, p.name), timeout=20, what="the Event invocation to run")
    assert [r["body"] for i in invocations(emulator, p.name) for r in i["records"]] == ["event"]


def test_reserved_concurrency_in_use_is_too_many_requests(emulator):
    """Reserved concurrency 0: 429 TooManyRequestsException, Reason
    ReservedFunctionConcurrentInvocationLimitExceeded, and the function does not run. Removed:
    the function runs."""
    p = make(emulator, "inv-throttle", create_mapping=False)
    admin = emulator.client("lambda")
    admin.put_function_concurrency(FunctionName=p.name, ReservedConcurrentExecutions=0)
    no_retries = lambda_client(emulator, retries={"total_max_attempts": 1})
    with pytest.raises(ClientError) as throttled:
        no_retries.invoke(FunctionName=p.name, Payload=b"{}")
    response = throttled.value.response
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 429
    assert response["Error"]["Code"] == "TooManyRequestsException"
    # Lambda's error carries Reason, which the stubs' ClientError response does not name
    assert cast(dict, response)["Reason"] == "ReservedFunctionConcurrentInvocationLimitExceeded"
    assert invocations(emulator, p.name) == []
    admin.delete_function_concurrency(FunctionName=p.name)
    assert no_retries.invoke(FunctionName=p.name, Payload=b"{}")["StatusCode"] == 200


def test_a_missing_function_is_not_found_and_no_payload_is_an_empty_event(emulator):
    """A function that does not exist: 404 ResourceNotFoundException, for DryRun too. An Invoke
    without a payload (`aws lambda invoke` with no `--payload`) runs the function with `{}`
    (moto failed both with SignatureDoesNotMatch: it signed a bodyless POST over its parameters)."""
    lambda_api = emulator.client("lambda")
    for invocation_type in ("RequestResponse", "DryRun"):
        with pytest.raises(ClientError) as missing:
            lambda_api.invoke(FunctionName="conf-no-such-function", InvocationType=invocation_type)
        assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
        assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"
    p = make(emulator, "inv-nopayload", create_mapping=False)
    answer = lambda_api.invoke(FunctionName=p.name)
    assert answer["StatusCode"] == 200 and "FunctionError" not in answer
    assert [i["records"] for i in invocations(emulator, p.name)] == [[]]
