"""AWS::Lambda::Function updates through CloudFormation, as on AWS."""

from __future__ import annotations

from typing import Any


def patch_inline_code_update() -> None:
    """A CloudFormation update of a function with inline code (`Code.ZipFile`: the source text,
    per the CloudFormation docs): moto zipped the text at create but read it as a base64 zip at
    update, so any update of such a function failed."""
    import base64

    from moto.awslambda.models import LambdaFunction

    update = LambdaFunction.update_from_cloudformation_json.__func__

    def update_from_cloudformation_json(
        cls: Any,
        original_resource: Any,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> Any:
        code = cloudformation_json["Properties"].get("Code", {})
        if isinstance(code.get("ZipFile"), str):
            zipped = base64.b64encode(cls._create_zipfile_from_plaintext_code(code["ZipFile"]))
            properties = {**cloudformation_json["Properties"], "Code": {**code, "ZipFile": zipped}}
            cloudformation_json = {**cloudformation_json, "Properties": properties}
        return update(cls, original_resource, new_resource_name, cloudformation_json, account_id, region_name)

    LambdaFunction.update_from_cloudformation_json = classmethod(update_from_cloudformation_json)
