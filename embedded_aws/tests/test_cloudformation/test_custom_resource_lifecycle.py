"""The custom-resource lifecycle (services/cloudformation/lifecycle.py) without moto: requests and
their answers, FAILED answers, and when a stack rolls back."""

from __future__ import annotations

import pytest

from embedded_aws.services.cloudformation.lifecycle import (
    Answer,
    AnswerTo,
    CustomResourceFailed,
    CustomResourceLifecycle,
)

STACK = "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1"
PROBE = (STACK, "Probe")


def event(lifecycle: CustomResourceLifecycle, request_type: str = "Update", **extra) -> dict:
    return lifecycle.event(
        PROBE,
        request_type,
        service_token="arn:fn",
        response_url="http://localhost:1/r",
        resource_type="Custom::Probe",
        default_physical_id="moto-name",
        properties={"ServiceToken": "arn:fn", "Value": "2"},
        **extra,
    )


def test_a_request_carries_what_the_function_needs():
    lifecycle = CustomResourceLifecycle(request_id=lambda: "r-1")
    assert event(lifecycle, OldResourceProperties={"Value": "1"}) == {
        "RequestType": "Update",
        "ServiceToken": "arn:fn",
        "ResponseURL": "http://localhost:1/r",
        "StackId": STACK,
        "RequestId": "r-1",
        "LogicalResourceId": "Probe",
        "ResourceType": "Custom::Probe",
        "PhysicalResourceId": "moto-name",
        "ResourceProperties": {"ServiceToken": "arn:fn", "Value": "2"},
        "OldResourceProperties": {"Value": "1"},
    }


def test_the_answer_given_during_the_invocation_is_the_requests_and_its_physical_id_is_kept():
    lifecycle = CustomResourceLifecycle()
    answered = []

    def invoke(request):
        answered.append(lifecycle.answer(PROBE, Answer("SUCCESS", "probe-1", {"Echo": "2"})))

    assert lifecycle.send(PROBE, event(lifecycle), invoke) == Answer("SUCCESS", "probe-1", {"Echo": "2"})
    assert answered == [AnswerTo.REQUEST]
    assert event(lifecycle, "Delete")["PhysicalResourceId"] == "probe-1"


@pytest.mark.parametrize(
    "answer, reason",
    [
        (Answer("FAILED", reason="asked to fail"), "asked to fail"),
        (Answer("FAILED"), "FAILED"),
        (None, "no SUCCESS response"),
    ],
)
def test_a_failed_or_missing_answer_fails_the_request_with_its_reason(answer, reason):
    lifecycle = CustomResourceLifecycle()

    def invoke(request):
        if answer is not None:
            lifecycle.answer(PROBE, answer)

    with pytest.raises(CustomResourceFailed, match=rf"^custom resource Probe: Update failed: {reason}$"):
        lifecycle.send(PROBE, event(lifecycle), invoke)
    # The request is over: a late answer is taken as one to Create, not to this request.
    assert lifecycle.answer(PROBE, Answer("SUCCESS")) is AnswerTo.CREATE


def test_a_failed_create_rolls_back_once_every_resource_is_created():
    """Whichever comes last, the FAILED answer or the end of creating the stack, starts the
    rollback, and only once."""
    early = CustomResourceLifecycle()
    assert early.answer(PROBE, Answer("FAILED", reason="no")) is AnswerTo.CREATE
    assert early.all_created(STACK, pending=[PROBE]) is True

    late = CustomResourceLifecycle()
    assert late.all_created(STACK, pending=[PROBE]) is False
    assert late.answer(PROBE, Answer("FAILED", reason="no")) is AnswerTo.CREATE_THEN_ROLL_BACK
    assert late.claim_rollback(STACK) is True and late.claim_rollback(STACK) is False
    assert late.failed_creates([PROBE]) == [("Probe", "no")]
    assert late.create_failure_reason(PROBE).endswith("Message returned: no (RequestId: )")


def test_a_created_resource_is_not_a_failure_and_a_success_does_not_roll_back():
    lifecycle = CustomResourceLifecycle()
    assert lifecycle.answer(PROBE, Answer("SUCCESS", "probe")) is AnswerTo.CREATE
    assert lifecycle.all_created(STACK, pending=[]) is False
    assert lifecycle.physical_id(PROBE, "default") == "probe"


def test_a_failed_update_is_raised_after_the_update_loop_once():
    lifecycle = CustomResourceLifecycle()
    lifecycle.defer_update_failure(STACK, CustomResourceFailed("custom resource Probe: Update failed: no"))
    with pytest.raises(CustomResourceFailed):
        lifecycle.raise_update_failure(STACK)
    lifecycle.raise_update_failure(STACK)  # nothing left to raise
