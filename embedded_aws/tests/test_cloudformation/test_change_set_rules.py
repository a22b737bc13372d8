"""The rules of CreateChangeSet and ExecuteChangeSet (services/cloudformation/change_sets.py)
without moto: when AWS refuses, which parameters a request gives, what changes nothing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from embedded_aws.services.cloudformation.change_sets import (
    change_set_refusal,
    changes_nothing,
    execution_refusal,
    given_parameters,
)


def stack(status: str = "UPDATE_COMPLETE", **fields) -> SimpleNamespace:
    return SimpleNamespace(stack_id="arn:stack/s/1", status=status, **fields)


def test_an_update_of_no_stack_is_refused():
    """UPDATE needs a live stack: ValidationError "Stack [<name>] does not exist"."""
    assert change_set_refusal("UPDATE", "s", "cs", None) == "Stack [s] does not exist"


@pytest.mark.parametrize("status", ["REVIEW_IN_PROGRESS", "ROLLBACK_COMPLETE"])
def test_an_update_of_a_stack_that_was_never_created_is_refused(status):
    """A stack that is only under review, or rolled back from its create, cannot be updated."""
    assert change_set_refusal("UPDATE", "s", "cs", stack(status)) == (
        f"Stack:arn:stack/s/1 is in {status} state and can not be updated."
    )


def test_a_create_for_a_stack_that_exists_is_refused():
    """CREATE of an existing stack: AWS's "already exists and cannot be created again"."""
    assert change_set_refusal("CREATE", "s", "cs", stack()) == (
        "Stack [s] already exists and cannot be created again with the changeSet [cs]."
    )


@pytest.mark.parametrize(
    ("kind", "found"),
    [
        ("CREATE", None),
        ("CREATE", stack("REVIEW_IN_PROGRESS")),
        ("UPDATE", stack("UPDATE_COMPLETE")),
        ("IMPORT", None),
        ("IMPORT", stack("CREATE_COMPLETE")),
    ],
)
def test_change_sets_aws_accepts_are_not_refused(kind, found):
    """A CREATE of a new (or reviewed) stack, an UPDATE of a live one, and any IMPORT pass."""
    assert change_set_refusal(kind, "s", "cs", found) is None


def test_given_parameters_take_previous_values_from_the_stack():
    """UsePreviousValue reads the stack's value; one the stack lacks falls back to ParameterValue,
    and a parameter with neither is left out."""
    given: list[dict[str, Any]] = [
        {"ParameterKey": "Kept", "UsePreviousValue": True},
        {"ParameterKey": "New", "UsePreviousValue": True, "ParameterValue": "fallback"},
        {"ParameterKey": "Set", "ParameterValue": "2"},
        {"ParameterKey": "Empty"},
    ]
    assert given_parameters(given, stack(parameters={"Kept": "1"})) == {
        "Kept": "1",
        "New": "fallback",
        "Set": "2",
    }
    assert given_parameters(given, None) == {"New": "fallback", "Set": "2"}


def test_only_an_available_update_with_the_same_template_and_parameters_changes_nothing():
    """The FAILED "didn't contain changes" verdict needs an UPDATE, still CREATE_COMPLETE, whose
    template and parameters equal the stack's."""
    current = stack(template_dict={"Resources": {"A": {}}}, parameters={"P": "1"})
    same: tuple[dict[str, Any], dict[str, str]] = ({"Resources": {"A": {}}}, {"P": "1"})
    assert changes_nothing("UPDATE", "CREATE_COMPLETE", *same, current)
    assert not changes_nothing("UPDATE", "FAILED", *same, current)
    assert not changes_nothing("CREATE", "CREATE_COMPLETE", *same, current)
    assert not changes_nothing("UPDATE", "CREATE_COMPLETE", {"Resources": {}}, {"P": "1"}, current)
    assert not changes_nothing("UPDATE", "CREATE_COMPLETE", same[0], {"P": "2"}, current)


@pytest.mark.parametrize(
    ("status", "execution_status", "named"),
    [
        ("CREATE_COMPLETE", "AVAILABLE", None),
        ("FAILED", "UNAVAILABLE", "FAILED"),
        ("CREATE_COMPLETE", "EXECUTE_COMPLETE", "EXECUTE_COMPLETE"),
    ],
)
def test_execution_refusal_names_the_status_that_blocks_it(status, execution_status, named):
    """InvalidChangeSetStatus names the change set's status when it is not CREATE_COMPLETE, else
    its execution status when that is not AVAILABLE."""
    assert execution_refusal(status, execution_status) == named
