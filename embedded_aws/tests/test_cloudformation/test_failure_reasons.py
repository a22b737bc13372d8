"""What CloudFormation says about a failed resource (services/cloudformation/failure_messages.py), from the
errors moto's services raise, without a server."""

from __future__ import annotations

import pytest
from moto.dynamodb.exceptions import ResourceInUseException
from moto.iam.exceptions import EntityAlreadyExists
from moto.logs.exceptions import ResourceAlreadyExistsException
from moto.sqs.exceptions import QueueAlreadyExists

from embedded_aws.services.cloudformation.failure_messages import (
    ServiceError,
    handler_error_code,
    service_error,
    stack_reason,
    status_reason,
)
from embedded_aws.services.cloudformation.lifecycle import Answer, CustomResourceLifecycle


def test_a_table_name_that_is_taken_reads_as_the_handlers_already_exists():
    """The words AWS's handler uses for a name that is taken, with the table's name."""
    reason = status_reason(
        ResourceInUseException("Table already exists: rt-orders"),
        "AWS::DynamoDB::Table",
        "rt-orders",
        request_token=lambda: "token-1",
    )
    assert reason == (
        "Resource handler returned message: \"Resource of type 'AWS::DynamoDB::Table' with identifier "
        "'rt-orders' already exists.\" (RequestToken: token-1, HandlerErrorCode: AlreadyExists)"
    )


@pytest.mark.parametrize(
    "error",
    [
        QueueAlreadyExists("The specified queue already exists."),
        ResourceAlreadyExistsException(),
        EntityAlreadyExists("Role with name r already exists."),
    ],
)
def test_every_services_name_clash_is_already_exists(error):
    """SQS, Logs and IAM say it each their own way (a service exception, a JSON REST error)."""
    assert handler_error_code(service_error(error)) == "AlreadyExists"


def test_another_service_error_keeps_the_services_message():
    """Anything else carries the service's own message and the matching handler error code."""
    error = ResourceInUseException(
        "Attempt to change a resource which is still in use: table is being deleted"
    )
    reason = status_reason(error, "AWS::DynamoDB::Table", "t", request_token=lambda: "token-2")
    assert reason == (
        'Resource handler returned message: "Attempt to change a resource which is still in use: table is '
        'being deleted" (RequestToken: token-2, HandlerErrorCode: ResourceConflict)'
    )


@pytest.mark.parametrize(
    "code, message, expected",
    [
        ("ValidationException", "One or more parameter values were invalid", "InvalidRequest"),
        ("ResourceNotFoundException", "Requested resource not found", "NotFound"),
        ("ThrottlingException", "Rate exceeded", "Throttling"),
        ("LimitExceededException", "Too many tables", "ServiceLimitExceeded"),
        ("AccessDeniedException", "not allowed", "AccessDenied"),
        ("SomethingElse", "it broke", "GeneralServiceException"),
    ],
)
def test_handler_error_codes(code, message, expected):
    """The HandlerErrorCode follows the service's error code."""
    assert handler_error_code(ServiceError(code, message)) == expected


def test_a_failure_of_the_emulator_itself_is_an_internal_failure():
    """A Python error in moto is no service's answer: InternalFailure, with what it was."""
    found = service_error(KeyError("Queue"))
    assert found == ServiceError("KeyError", "'Queue'", from_service=False)
    assert handler_error_code(found) == "InternalFailure"


def test_the_stacks_reason_names_the_failed_resources():
    """The stack's rollback event lists them, as AWS's does."""
    assert stack_reason("CREATE", ["Orders"]) == "The following resource(s) failed to create: [Orders]."
    assert stack_reason("UPDATE", ["A", "B"]) == "The following resource(s) failed to update: [A, B]."


def test_a_custom_resources_failed_or_missing_answer_reads_as_cloudformations():
    """AWS's words for a custom resource that answered FAILED, or never answered."""
    reason = CustomResourceLifecycle.status_reason(Answer("FAILED", reason="asked to fail"), "r-1")
    assert reason == (
        "Received response status [FAILED] from custom resource. Message returned: asked to fail (RequestId: r-1)"
    )
    assert CustomResourceLifecycle.status_reason(None, "r-2") == (
        "CloudFormation did not receive a response from your Custom Resource. "
        "Please check your logs for requestId [r-2]."
    )
