"""A synchronous Invoke lasts as long as the function runs, up to its 900 s timeout: nothing in
the embedded AWS cuts it. The caller's SDK must wait that long: boto3's default read timeout
(60 s) gives up first, as AWS's Invoke documentation warns for any long synchronous call."""

from __future__ import annotations

import json
import threading
import time

import pytest
from botocore.exceptions import ReadTimeoutError
from test_event_source_mappings.support import make

from test_lambda_host.test_invoke_api import lambda_client
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(65)]

SLOW = """
import time

def handler(event, context):
    time.sleep(event["seconds"])
    return {"slept": event["seconds"], "remaining_ms": context.get_remaining_time_in_millis()}
"""


def test_an_invocation_longer_than_60_s_completes_with_a_long_read_timeout(emulator):
    """Timeout 900, a 62 s handler: a client with read_timeout 905 gets the result (the
    remaining time shows the 900 s timeout, counted from within the call); at the same time a
    client with boto3's default 60 s read timeout (retries off) fails with ReadTimeoutError."""
    p = make(emulator, "inv-long", source=SLOW, create_mapping=False, timeout=900)
    payload = json.dumps({"seconds": 62})
    default_failure: list[BaseException] = []

    def with_default_timeout() -> None:
        try:
            lambda_client(emulator, retries={"total_max_attempts": 1}).invoke(
                FunctionName=p.name, Payload=payload
            )
        except ReadTimeoutError as error:
            default_failure.append(error)

    impatient = threading.Thread(target=with_default_timeout)
    impatient.start()
    patient = lambda_client(emulator, read_timeout=905, retries={"total_max_attempts": 1})
    called = time.time()
    response = patient.invoke(FunctionName=p.name, Payload=payload)
    answered = time.time()
    # The impatient call ends on its own: its 60 s read timeout, or (never) the function's answer.
    impatient.join()
    assert "FunctionError" not in response
    result = json.loads(response["Payload"].read())
    # The 900 s run from a moment inside the call (the host sets the deadline once it has the
    # sandbox): the 62 s slept are gone from them, and no more than the whole call took (how long
    # a cold start takes on this machine does not matter).
    assert result["slept"] == 62
    assert 900_000 - (answered - called) * 1000 - 1 <= result["remaining_ms"] <= 900_000 - 62_000
    assert len(default_failure) == 1
