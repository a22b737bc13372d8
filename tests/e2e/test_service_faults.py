"""Service faults: throttling and 5xx from DynamoDB, injected into the embedded AWS
(embedded_aws/faults.py), are retried by the worker inside an invocation; once its attempts are spent
the record is reported failed and not acknowledged, SQS delivers it again after the visibility
timeout, and when the fault clears the order is written exactly once."""

from __future__ import annotations

import json
import time

import pytest

from local.session import wait_for
from ops import observe

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(45)]

# The worker makes up to four attempts at a write (lib/src/guarded_consumer/write_guard.py, MAX_ATTEMPTS) while a
# whole attempt still fits before its deadline. The test measures it rather than trusting this.
ATTEMPTS = 4
# Enough faults to spend every attempt of the first invocation plus one of the second, which
# the worker then retries within that invocation: one redelivery, and a retry it absorbs.
FAULTS = ATTEMPTS + 1
# Deployed with 3 s (18 s is the 6x visibility timeout the stack requires), then given
# FUNCTION_TIMEOUT through the Lambda API: the worker starts an attempt only while a whole one
# (1.4 s) fits before its deadline, so a 3 s timeout left 1.6 s for three faulted round trips and
# their backoff (at most 0.35 s), which a loaded machine can spend, and the first invocation then
# stopped after three attempts. With 9 s there are 7.6 s for them; the redelivery still comes a
# visibility timeout (18 s, unchanged) after the first receive, after that invocation has ended.
CONTEXT = {"visibility_timeout_seconds": "18", "function_timeout_seconds": "3"}
FUNCTION_TIMEOUT = 9


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    with shared_aws.stack({**CONTEXT, "prefix": "faults"}, tmp_path_factory.mktemp("faults")) as session:
        outputs = session.outputs()
        session.client("lambda").update_function_configuration(
            FunctionName=outputs["FunctionName"], Timeout=FUNCTION_TIMEOUT
        )
        yield session, outputs


@pytest.mark.parametrize(
    "kind, code, status",
    [
        ("throttling", "ProvisionedThroughputExceededException", 400),
        ("5xx", "InternalServerError", 500),
    ],
)
def test_dynamodb_fault_is_retried_not_acknowledged_and_written_once(stack, kind, code, status, figure):
    """FAULTS PutItem faults on the orders table: the first delivery spends all its attempts
    and logs ERROR, nothing is written and the message stays on the queue; the redelivery meets
    the last fault, the worker retries it, and the order is written once (one WRITE Accepted, the
    right item); the queue drains and the DLQ stays empty."""
    session, outputs = stack
    sqs, dynamodb, logs = session.client("sqs"), session.client("dynamodb"), session.client("logs")
    queue_url = session.local_queue_url(outputs["QueueUrl"])
    dlq_url = session.local_queue_url(outputs["DeadLetterQueueUrl"])
    orders, log_group = outputs["OrdersTableName"], outputs["LogGroupName"]
    order = {"id": f"fault-{kind}", "quantity": 3}
    started = int(time.time() * 1000) - 1000

    session.inject_fault(action="PutItem", table=orders, code=code, status=status, count=FAULTS)
    message_id = sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps(order))["MessageId"]

    def records(tag: str) -> list[dict]:
        return [
            r.data
            for r in observe.log_records(logs, log_group, started)
            if r.tag == tag and (r.data.get("id") == order["id"] or r.data.get("message_id") == message_id)
        ]

    (error,) = wait_for(lambda: records("ERROR"), timeout=40, what=f"the ERROR line of {order['id']}")
    # The ERROR line is logged after the invocation ended, and the next delivery is a visibility
    # timeout away: what was served so far is what one invocation tried.
    (rule,) = [rule for rule in session.faults() if rule["table"] == orders]
    attempts = rule["served"]
    assert attempts == ATTEMPTS
    assert error["receive_count"] == "1" and error["error"] == code
    assert (
        error["message"].startswith(f"PutItem failed after {ATTEMPTS} attempts: ")
        and f"({code})" in error["message"]
    )
    assert observe.queue_counters(sqs, queue_url)["in_flight"] == 1, "a failed delivery was acknowledged"
    assert dynamodb.get_item(TableName=orders, Key={"id": {"S": order["id"]}}).get("Item") is None

    wait_for(lambda: records("RESULT"), timeout=90, what=f"the RESULT line of {order['id']}")
    wait_for(
        lambda: observe.queue_counters(sqs, queue_url) == {"visible": 0, "in_flight": 0, "delayed": 0},
        timeout=30,
        what="the jobs queue to drain",
    )
    deliveries = len(records("ERROR")) + len(records("RESULT"))  # each delivery ends in one of them
    writes = records("WRITE")
    (rule,) = [rule for rule in session.faults() if rule["table"] == orders]
    figure(
        f"service faults ({kind})",
        f"{FAULTS} x {status} {code} on PutItem; {attempts} attempts in the "
        f"failed invocation; {deliveries - 1} SQS redelivery; {rule['served']} faults served; "
        f"{len(writes)} write {writes[0]['outcome'] if writes else '-'}; "
        f"DLQ {observe.queue_counters(sqs, dlq_url)['visible']}",
    )
    assert (rule["served"], rule["remaining"]) == (FAULTS, 0)
    assert deliveries == 2 and len(records("ERROR")) == 1
    assert [(w["outcome"], w["decision"]) for w in writes] == [("Accepted", "written")]
    assert records("RESULT") == [{**order, "processed": True, "duplicate": False}]
    assert observe.plain_item(
        dynamodb.get_item(TableName=orders, Key={"id": {"S": order["id"]}})["Item"]
    ) == {**order, "total_cents": 3 * 250 + 100}
    assert observe.queue_counters(sqs, dlq_url)["visible"] == 0
