"""The operations table's other failures, each to its first alarm and the topic: a malformed body,
DynamoDB throttling past the worker's retries, Lambda throttling, an invocation that fails as a
whole, a deleted table and too little time for a write. A stack of their own beside
test_alarms.py's: each waits for several alarms in turn, and on one stack the two files ran one
after the other, the suite's longest chain."""

from __future__ import annotations

import pytest

from local.session import wait_for
from ops import observe
from tests.e2e.alarms import (
    DEADLINE,
    alarm_fixtures,
    decision_sums,
    notification,
    notifications,
    out_of_alarm,
    send,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(90)]

PREFIX = "alarm-faults"

stack, inbox = alarm_fixtures(PREFIX)


def test_every_other_failure_of_the_operations_table_reaches_the_topic(stack, inbox):
    """docs/operations.md's failures, each to its first alarm within a minute: a malformed body
    -> malformed-jobs; DynamoDB throttling past the worker's retries -> orders-throttled and
    failed-records; Lambda throttling (reserved concurrency 0) -> worker-throttles; an invocation
    that fails as a whole (a configuration without the table's name) -> worker-errors. (A denied
    write, a conflict and dead letters: test_alarms.py.)"""
    session, env, _outputs = stack
    for what in ("malformed-jobs", "orders-throttled", "failed-records", "worker-throttles", "worker-errors"):
        since = out_of_alarm(session, f"{PREFIX}-{what}")
    send(session, env, {"id": "no-quantity"})
    session.inject_fault(
        action="PutItem",
        table=env["ORDERS_TABLE"],
        code="ProvisionedThroughputExceededException",
        status=400,
        count=4,
    )  # one invocation's attempts
    send(session, env, {"id": "throttled-order", "quantity": 3})
    wanted = {f"{PREFIX}-{what}" for what in ("malformed-jobs", "orders-throttled", "failed-records")}
    assert notifications(session, inbox, wanted, "ALARM", since) == wanted

    lambda_api, function = session.client("lambda"), env["FUNCTION_NAME"]
    lambda_api.put_function_concurrency(FunctionName=function, ReservedConcurrentExecutions=0)
    try:
        send(session, env, {"id": "throttled-invocation", "quantity": 1})
        assert (
            notification(session, inbox, f"{PREFIX}-worker-throttles", "ALARM", since)["Trigger"][
                "MetricName"
            ]
            == "Throttles"
        )
    finally:
        lambda_api.delete_function_concurrency(FunctionName=function)

    configuration = lambda_api.get_function_configuration(FunctionName=function)["Environment"]["Variables"]
    broken = {key: value for key, value in configuration.items() if key != "TABLE_NAME"}
    lambda_api.update_function_configuration(FunctionName=function, Environment={"Variables": broken})
    try:
        send(session, env, {"id": "broken-config", "quantity": 1})
        assert (
            notification(session, inbox, f"{PREFIX}-worker-errors", "ALARM", since)["Trigger"]["MetricName"]
            == "Errors"
        )
    finally:
        lambda_api.update_function_configuration(
            FunctionName=function, Environment={"Variables": configuration}
        )


def test_a_deleted_table_and_too_little_time_for_a_write_are_failed_records(stack, inbox):
    """Two failures inside a record, each counted in the worker's Error decision (the metric
    failed-records watches) and notified: the orders table deleted (ResourceNotFoundException) and
    a function timeout lowered below what one write may take (OutOfTime, never a half-done write).
    (A timeout of the whole invocation counts in Lambda's Errors: tests/e2e/test_lambda_host.py::
    test_invoke_api_runs_the_deployed_code; Errors reaching worker-errors: the test above. A poison
    record in a batch counts alone and the rest is acknowledged: tests/unit/test_worker_dynamodb.py::
    test_each_record_counts_its_decision_in_a_metrics_line_printed_with_its_lines.)"""
    session, env, _ = stack
    alarm = f"{PREFIX}-failed-records"
    since = out_of_alarm(session, alarm)
    dynamodb, logs = session.client("dynamodb"), session.client("logs")
    lambda_api, function, table = session.client("lambda"), env["FUNCTION_NAME"], env["ORDERS_TABLE"]

    def first_error(order: dict, what: str) -> str:
        """The failure class of the first ERROR line of `order`'s message."""
        message_id = send(session, env, order)

        def errors() -> list[str]:
            return [
                r.data["error"]
                for r in observe.log_records(logs, f"/aws/lambda/{function}")
                if r.tag == "ERROR" and r.data.get("message_id") == message_id
            ]

        found: str = wait_for(errors, timeout=DEADLINE, what=what)[0]
        return found

    shape = dynamodb.describe_table(TableName=table)["Table"]
    dynamodb.delete_table(TableName=table)
    try:
        error = first_error({"id": "no-table", "quantity": 2}, "the missing table's ERROR line")
        assert error == "ResourceNotFoundException"
    finally:
        dynamodb.create_table(
            TableName=table,
            KeySchema=shape["KeySchema"],
            AttributeDefinitions=shape["AttributeDefinitions"],
            BillingMode="PAY_PER_REQUEST",
        )

    timeout = lambda_api.get_function_configuration(FunctionName=function)["Timeout"]
    lambda_api.update_function_configuration(FunctionName=function, Timeout=1)
    try:
        assert first_error({"id": "no-time", "quantity": 2}, "the short timeout's ERROR line") == "OutOfTime"
    finally:
        lambda_api.update_function_configuration(FunctionName=function, Timeout=timeout)
    assert notification(session, inbox, alarm, "ALARM", since)["Trigger"]["MetricName"] == "Error"
    assert decision_sums(session, function, since)["Error"] >= 2
