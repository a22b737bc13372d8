"""A stack delete of resources deleted out of band, as CloudFormation treats it."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "error, gone",
    [
        (KeyError("queue"), True),
        (RuntimeError("An error occurred (QueueDoesNotExist): The specified queue does not exist"), True),
        (RuntimeError("ResourceNotFoundException: log group not found"), True),
        (RuntimeError("NoSuchEntity: role"), True),
        (RuntimeError("DependencyViolation: still in use"), False),
        (RuntimeError("InternalFailure"), False),
    ],
)
def test_a_delete_of_a_resource_already_gone_counts_as_deleted(error, gone):
    """CloudFormation treats a resource deleted out of band as deleted; nothing else is swallowed."""
    from embedded_aws.services.cloudformation.stack_delete import resource_already_gone

    assert resource_already_gone(error) is gone
