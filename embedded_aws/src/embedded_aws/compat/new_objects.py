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


def stack() -> Any:
    from moto.cloudformation.models import Stack

    made: Any = Stack  # a CloudFormationModel: abstract to mypy
    return made(
        stack_id=f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/registry-check/0",
        name="registry-check",
        template='{"Resources": {}}',
        parameters={},
        account_id=ACCOUNT,
        region_name=REGION,
    )


def change_set() -> Any:
    from moto.cloudformation.models import ChangeSet

    return ChangeSet(
        change_set_type="CREATE",
        change_set_id=f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:changeSet/registry-check/0",
        change_set_name="registry-check",
        stack=stack(),
        template='{"Resources": {}}',
        parameters={},
        description="",
    )


def stack_event() -> Any:
    from moto.cloudformation.models import Event

    return Event(
        stack_id="registry-check",
        stack_name="registry-check",
        logical_resource_id="registry-check",
        physical_resource_id="registry-check",
        resource_type="AWS::CloudFormation::Stack",
        resource_status="CREATE_IN_PROGRESS",
        resource_status_reason=None,
        resource_properties=None,
    )


def custom_model() -> Any:
    from moto.cloudformation.custom_model import CustomModel

    made: Any = CustomModel  # a CloudFormationModel: abstract to mypy
    return made(REGION, "registry-check", "RegistryCheck", "registry-check")


def alarm() -> Any:
    from moto.cloudwatch.models import Alarm

    return Alarm(
        account_id=ACCOUNT,
        region_name=REGION,
        name="registry-check",
        namespace="RegistryCheck",
        metric_name="Check",
        metric_data_queries=None,
        comparison_operator="GreaterThanThreshold",
        evaluation_periods=1,
        datapoints_to_alarm=None,
        period=60,
        threshold=0.0,
        statistic="Sum",
        extended_statistic=None,
        description="",
        dimensions=[],
        alarm_actions=[],
        ok_actions=None,
        insufficient_data_actions=None,
        unit=None,
        actions_enabled=True,
        treat_missing_data=None,
        evaluate_low_sample_count_percentile=None,
        threshold_metric_id=None,
        rule=None,
    )


def message() -> Any:
    from moto.sqs.models import Message

    return Message("registry-check", "registry-check")


def json_error() -> Any:
    from moto.core.exceptions import JsonRESTError

    return JsonRESTError("RegistryCheck", "registry check")


def aws_request() -> Any:
    from botocore.awsrequest import AWSRequest

    return AWSRequest(method="GET", url="http://localhost/")
