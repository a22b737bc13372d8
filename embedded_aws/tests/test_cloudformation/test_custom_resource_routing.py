"""Where an answer at a custom resource's response URL goes, and which resources an update
removes (services/cloudformation/custom_resources.py), without moto."""

from __future__ import annotations

import pytest

from embedded_aws.services.cloudformation.custom_resources import (
    AnswerRoute,
    answer_from,
    answer_route,
    removed_resources,
)
from embedded_aws.services.cloudformation.lifecycle import Answer, AnswerTo


@pytest.mark.parametrize("status", [None, "CREATE_IN_PROGRESS", "ROLLBACK_IN_PROGRESS", "UPDATE_COMPLETE"])
def test_an_answer_to_an_update_or_delete_is_taken_whatever_the_stack(status):
    """An answer the lifecycle awaited (Update, Delete) never reaches moto's handler."""
    assert answer_route(AnswerTo.REQUEST, status) is AnswerRoute.TAKEN


@pytest.mark.parametrize("whose", [AnswerTo.CREATE, AnswerTo.CREATE_THEN_ROLL_BACK])
def test_a_create_answer_for_an_unknown_stack_goes_to_moto(whose):
    """moto's handler reports a stack it does not know; nothing is rolled back."""
    assert answer_route(whose, None) is AnswerRoute.MOTO


@pytest.mark.parametrize("status", ["ROLLBACK_IN_PROGRESS", "ROLLBACK_COMPLETE", "ROLLBACK_FAILED"])
@pytest.mark.parametrize("whose", [AnswerTo.CREATE, AnswerTo.CREATE_THEN_ROLL_BACK])
def test_a_create_answer_while_the_stack_rolls_back_is_ignored(whose, status):
    """moto's handler would check the stack's readiness, which creates its resources again."""
    assert answer_route(whose, status) is AnswerRoute.IGNORED


@pytest.mark.parametrize("status", ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE", "DELETE_COMPLETE"])
def test_a_create_answer_after_the_stacks_create_keeps_only_its_data(status):
    """A custom resource an update added, or one answering after its stack was deleted, leaves
    the stack's status alone (moto's handler would mark it CREATE_COMPLETE)."""
    assert answer_route(AnswerTo.CREATE, status) is AnswerRoute.DATA_ONLY


def test_a_create_answer_during_the_create_goes_to_moto():
    """moto's handler records the answer and completes the stack's create."""
    assert answer_route(AnswerTo.CREATE, "CREATE_IN_PROGRESS") is AnswerRoute.MOTO


@pytest.mark.parametrize("status", ["CREATE_IN_PROGRESS", "UPDATE_COMPLETE"])
def test_the_failed_create_that_completes_the_creates_rolls_back(status):
    """The last Create answer in, one of them FAILED: the stack rolls back, then moto records it."""
    assert answer_route(AnswerTo.CREATE_THEN_ROLL_BACK, status) is AnswerRoute.ROLL_BACK_THEN_MOTO


def test_an_answer_is_read_from_the_requests_parameters():
    """Empty PhysicalResourceId and Data read as none given; the key is (StackId, LogicalResourceId)."""
    params = {
        "StackId": "arn:stack",
        "LogicalResourceId": "Probe",
        "Status": "FAILED",
        "PhysicalResourceId": "",
        "Data": None,
        "Reason": "boom",
        "RequestId": "r-1",
    }
    assert answer_from(params.get) == (
        ("arn:stack", "Probe"),
        Answer("FAILED", None, {}, "boom", "r-1"),
    )


def test_an_update_removes_the_resources_its_template_no_longer_names():
    """Only resources the stack has and the new template lacks are removed, with their JSON."""
    stack_has = {"Kept": {"Type": "A"}, "Dropped": {"Type": "B", "DeletionPolicy": "Retain"}}
    template = {"Resources": {"Kept": {"Type": "A"}, "Added": {"Type": "C"}}}
    assert removed_resources(stack_has, template) == {"Dropped": {"Type": "B", "DeletionPolicy": "Retain"}}
    assert removed_resources(stack_has, {"Resources": stack_has}) == {}
