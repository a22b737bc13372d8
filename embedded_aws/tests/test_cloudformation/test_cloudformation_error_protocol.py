"""Which CloudFormation answers are rewritten as InternalFailure in CloudFormation's XML
(services/cloudformation/resource_failures.py), without moto."""

from __future__ import annotations

import pytest

from embedded_aws.services.cloudformation.resource_failures import foreign_error


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b'{"__type": "ResourceInUseException"}', '{"__type": "ResourceInUseException"}'),
        ('{"message": "taken"}', '{"message": "taken"}'),
        ("", ""),
        (None, ""),
    ],
)
def test_an_error_not_in_xml_is_foreign(body, text):
    """Another service's JSON error (or an empty error body) is answered again in XML, its text kept."""
    assert foreign_error(400, body) == text


@pytest.mark.parametrize("body", [b"<ErrorResponse/>", "  \n<ErrorResponse><Error/></ErrorResponse>"])
def test_an_xml_error_is_left_alone(body):
    """CloudFormation's own errors (XML, leading whitespace allowed) pass unchanged."""
    assert foreign_error(400, body) is None


def test_a_success_is_left_alone_whatever_its_body():
    """Only error statuses are checked: a 200 with a JSON-looking body passes."""
    assert foreign_error(200, b"{}") is None
    assert foreign_error(399, "{}") is None
