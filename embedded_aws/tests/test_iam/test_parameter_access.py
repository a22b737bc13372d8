"""SSM Parameter Store requests authorized against the parameter's ARN, as IAM does: CDK's deploy
role may read the bootstrap-version parameter and nothing else ("Actions, resources, and condition
keys for AWS Systems Manager")."""

from __future__ import annotations

import uuid

import pytest

from embedded_aws.services.ssm.parameter_access import request_resource
from test_iam.callers import refusal, user
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"Name": "/cdk-bootstrap/hnb659fds/version"}, "parameter/cdk-bootstrap/hnb659fds/version"),
        ({"Name": "plain"}, "parameter/plain"),
        ({"Names": ["/one"]}, "parameter/one"),
        ({"Names": ["/one", "/two"]}, None),
        ({}, None),
    ],
)
def test_a_request_names_its_parameters_arn(params, expected):
    """A name with or without its leading slash maps to one ARN; several names, or none, to `*`."""
    found = request_resource(params, "us-east-1", "123456789012")
    assert found == (f"arn:aws:ssm:us-east-1:123456789012:{expected}" if expected else "*")


@pytest.mark.e2e
def test_a_policy_scoped_to_one_parameter_reads_that_one_only(emulator):
    """Allowed ssm:GetParameter on one parameter's ARN (as CDK's deploy role is), a caller reads it
    and is refused another one."""
    ssm, prefix = emulator.client("ssm"), f"/cfnroles-{uuid.uuid4().hex[:8]}"
    for name in ("version", "other"):
        ssm.put_parameter(Name=f"{prefix}/{name}", Value="21", Type="String")
    arn = f"arn:aws:ssm:{emulator.aws_env()['AWS_REGION']}:123456789012:parameter{prefix}/version"
    _, scoped = user(
        emulator, [{"Effect": "Allow", "Action": "ssm:GetParameter", "Resource": arn}], service="ssm"
    )
    assert scoped.get_parameter(Name=f"{prefix}/version")["Parameter"]["Value"] == "21"
    found = refusal(lambda: scoped.get_parameter(Name=f"{prefix}/other"))
    assert found["code"] in ("AccessDenied", "AccessDeniedException")
