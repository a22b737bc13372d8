"""AWS::Lambda::Function updates through CloudFormation, as on AWS."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.cloudformation_models import (
    CREATE_PARAMETERS,
    UPDATE_PARAMETERS,
    after_create,
    after_update,
)
from embedded_aws.compat.registry import T, declare, reads


@declare(
    "lambda.inline-code-update",
    "a CloudFormation update of a function with inline code",
    T("moto.awslambda.models:LambdaFunction.update_from_cloudformation_json", *UPDATE_PARAMETERS),
    reads("moto.awslambda.models:LambdaFunction._create_zipfile_from_plaintext_code", "code"),
    fixes_moto=(
        "an update of a function with Code.ZipFile reads the source text as a base64 zip; an update drops"
        " Architectures and TracingConfig"
    ),
)
def patch_inline_code_update() -> None:
    """A CloudFormation update of a function with inline code (`Code.ZipFile`: the source text,
    per the CloudFormation docs): moto zipped the text at create but read it as a base64 zip at
    update, so any update of such a function failed. The update also applies the template's
    architecture and tracing (SETTINGS), which moto dropped."""
    import base64

    from moto.awslambda.models import LambdaFunction

    def zipped_inline_code(cls: Any, cloudformation_json: dict[str, Any]) -> dict[str, Any]:
        code = cloudformation_json["Properties"].get("Code", {})
        if not isinstance(code.get("ZipFile"), str):
            return cloudformation_json
        zipped = base64.b64encode(cls._create_zipfile_from_plaintext_code(code["ZipFile"]))
        properties = {**cloudformation_json["Properties"], "Code": {**code, "ZipFile": zipped}}
        return {**cloudformation_json, "Properties": properties}

    after_update(LambdaFunction, _apply_settings, prepare=zipped_inline_code)


# The function settings a template may give that moto's CloudFormation handler did not copy
# onto the function (CreateFunction takes them): the architecture and X-Ray tracing.
SETTINGS = {"Architectures": "architectures", "TracingConfig": "tracing_config"}


def _apply_settings(function: Any, cloudformation_json: dict[str, Any], *_: Any) -> None:
    properties = cloudformation_json.get("Properties", {})
    for prop, attribute in SETTINGS.items():
        if prop in properties:
            setattr(function, attribute, properties[prop])


@declare(
    "awslambda.cloudformation-settings",
    (
        "a function's Architectures and TracingConfig from its template at create (at update: the "
        "inline-code patch above)"
    ),
    T("moto.awslambda.models:LambdaFunction.create_from_cloudformation_json", *CREATE_PARAMETERS),
    fixes_moto=(
        "AWS::Lambda::Function drops Architectures and TracingConfig: an arm64 function reads x86_64 and "
        "an Active-traced one PassThrough"
    ),
)
def patch_function_settings() -> None:
    """AWS::Lambda::Function's Architectures and TracingConfig reach the function at create, as
    they do on AWS (moto left an arm64 function x86_64 and tracing PassThrough); an update applies
    them in patch_inline_code_update, which owns that method."""
    from moto.awslambda.models import LambdaFunction

    after_create(LambdaFunction, _apply_settings)
