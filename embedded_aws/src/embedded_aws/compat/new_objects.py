"""moto (and botocore) objects made new, for the registry to check the attributes their
`__init__` sets that a patch reads or writes (`registry.state`). Each is made alone, outside any
backend's store: making one changes nothing a request can see."""

from __future__ import annotations

from typing import Any

ACCOUNT, REGION = "123456789012", "us-east-1"


def queue() -> Any:
    from moto.sqs.models import Queue

    made: Any = Queue  # a CloudFormationModel: abstract to mypy
    return made("registry-check", region=REGION, account_id=ACCOUNT)


def resource_map() -> Any:
    from moto.cloudformation.parsing import ResourceMap

    return ResourceMap(
        stack_id="registry-check",
        stack_name="registry-check",
        parameters={},
        tags={},
        region_name=REGION,
        account_id=ACCOUNT,
        template={"Resources": {}},
        cross_stack_resources={},
    )


def topic() -> Any:
    from moto.sns.models import SNSBackend, Topic

    made: Any = Topic  # a CloudFormationModel: abstract to mypy
    return made("registry-check", sns_backend=SNSBackend(REGION, ACCOUNT))


def lambda_backend() -> Any:
    from moto.awslambda.models import LambdaBackend

    return LambdaBackend(REGION, ACCOUNT)


def shape() -> Any:
    from botocore.model import Shape

    return Shape("RegistryCheck", {"type": "structure"})


def iam_request() -> Any:
    """A request as moto's IAM check holds it. Its key is looked up in no backend: moto's lookup
    is stood in for while it is made (before the server serves, so no request sees it)."""
    from unittest import mock

    from moto.iam import access_control

    credential = f"AKIAREGISTRYCHECK/20260101/{REGION}/sqs/aws4_request"
    with mock.patch.object(access_control, "create_access_key", return_value=object()):
        return access_control.IAMRequest(
            account_id=ACCOUNT,
            method="GET",
            path="/",
            data={},
            body=b"",
            headers={
                "Authorization": f"AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders=host, Signature=0"
            },
            action="ListQueues",
        )
