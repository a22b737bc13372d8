"""IAM as AWS evaluates it, where moto differs: the resource ARN of each DynamoDB, Logs, Lambda
and CloudFormation request (moto checked `*`), IAM's action prefixes, JSON denials for JSON-protocol
services, SQS batch calls authorized as their single-message actions, and the signature of a
bodyless request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from embedded_aws.compat import new_objects
from embedded_aws.compat.internals import ERROR_CODE, GET_ACTION, REQUEST_ACTION
from embedded_aws.compat.registry import T, declare, install, state

# --- resource ARNs for moto's access check --------------------------------------------------

# IAM authorizes each operation inside a transaction with the permission of the single-item call.
_TRANSACT_PERMISSIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}


def dynamodb_permissions(
    action: str, params: dict[str, Any], region: str, account: str
) -> list[tuple[str, str]]:
    """The (action, resource ARN) pairs IAM checks for a DynamoDB request: its table or index,
    every table of a batch, and each operation of a transaction as its single-item action."""

    def table_arn(name: str, index: str | None = None) -> str:
        if name.startswith("arn:"):
            base = name
        else:
            base = f"arn:aws:dynamodb:{region}:{account}:table/{name}"
        return f"{base}/index/{index}" if index else base

    if "TableName" in params:
        return [(action, table_arn(params["TableName"], params.get("IndexName")))]
    if "RequestItems" in params:  # BatchGetItem, BatchWriteItem
        return [(action, table_arn(name)) for name in params["RequestItems"]] or [(action, "*")]
    if "TransactItems" in params:  # TransactGetItems, TransactWriteItems
        checks = {
            (_TRANSACT_PERMISSIONS.get(operation, action), table_arn(details["TableName"]))
            for item in params["TransactItems"]
            for operation, details in item.items()
            if isinstance(details, dict) and "TableName" in details
        }
        return sorted(checks) or [(action, "*")]
    if "ResourceArn" in params:
        return [(action, params["ResourceArn"])]
    return [(action, "*")]


def logs_resource_arn(params: dict[str, Any], region: str, account: str) -> str:
    """The ARN IAM checks a Logs request against: the log stream's when the request names one,
    else the log group's in the form with a trailing `:*`, which CloudWatch Logs documents for
    every action on a group but the tagging ones; else `*`."""
    group = params.get("logGroupName")
    if not group:
        identifier = params.get("logGroupIdentifier")
        if identifier and identifier.startswith("arn:"):
            return identifier if identifier.endswith(":*") else f"{identifier}:*"
        group = identifier
    if not group:
        return "*"
    arn = f"arn:aws:logs:{region}:{account}:log-group:{group}"
    stream = params.get("logStreamName")
    return f"{arn}:log-stream:{stream}" if stream else f"{arn}:*"


def lambda_function_arn(name: str | None, qualifier: str | None, region: str, account: str) -> str:
    """The function ARN IAM checks a Lambda request against: the function its path names (a name,
    a partial or a full ARN, with its qualifier as a version or alias ARN), or `*` for the calls
    that name none (ListFunctions, ListEventSourceMappings, ...)."""
    if not name:
        return "*"
    if name.startswith("arn:"):
        arn = name
    elif ":function:" in name:  # 123456789012:function:name
        arn = f"arn:aws:lambda:{region}:{name}"
    else:
        arn = f"arn:aws:lambda:{region}:{account}:function:{name}"
    if qualifier and arn.count(":") == 6:
        arn = f"{arn}:{qualifier}"
    return arn


def cloudformation_stack_arn(stack_name: str | None, region: str, account: str) -> str:
    """The stack ARN IAM checks a CloudFormation request against: the named stack's own ARN
    (`stack/<name>/<id>`), a pattern for a stack that does not exist, or `*` for all stacks."""
    if not stack_name:
        return "*"
    if stack_name.startswith("arn:"):
        return stack_name
    from moto.cloudformation.models import cloudformation_backends

    stacks = cloudformation_backends[account][region].stacks.values()
    live = [
        stack.stack_id for stack in stacks if stack.name == stack_name and stack.status != "DELETE_COMPLETE"
    ]
    return live[0] if live else f"arn:aws:cloudformation:{region}:{account}:stack/{stack_name}/*"


_QUERY_COMPATIBLE = {"sqs", "cloudwatch"}


def in_request_protocol(response: Any, check: Any) -> None:
    """Run an access `check` of a moto response object. moto answers every denial in XML; a
    request in a JSON protocol (boto3's default for SQS, CloudWatch, DynamoDB, Logs, ...) gets it
    in JSON, as AWS answers it, or the SDK sees a bare 403. Query-compatible services (SQS,
    CloudWatch) keep their query code."""
    from moto.core.exceptions import AccessDeniedError, JsonRESTError

    try:
        check()
    except AccessDeniedError as denied:
        if not str(response.headers.get("Content-Type", "")).startswith("application/x-amz-json"):
            raise
        query_compatible = response.service_name in _QUERY_COMPATIBLE
        error = JsonRESTError("AccessDenied" if query_compatible else "AccessDeniedException", denied.message)
        error.code = 403 if query_compatible else 400
        raise error from None


@declare(
    "iam.access-control",
    (
        "resource ARNs for DynamoDB, Logs, Lambda and CloudFormation; JSON denials; the custom-resource "
        "response URL unsigned; injected DynamoDB faults once allowed"
    ),
    T(
        "moto.core.authorization:ActionAuthenticatorMixin._authenticate_and_authorize_normal_action",
        "self",
        "resource",
    ),
    T("moto.dynamodb.responses:DynamoHandler._authenticate_and_authorize_normal_action", "self", "resource"),
    T("moto.logs.responses:LogsResponse._authenticate_and_authorize_normal_action", "self", "resource"),
    T(
        "moto.cloudformation.responses:CloudFormationResponse._authenticate_and_authorize_normal_action",
        "self",
        "resource",
    ),
    T(
        "moto.awslambda.responses:LambdaResponse._authenticate_and_authorize_normal_action",
        "self",
        "resource",
    ),
    GET_ACTION,  # the action a fault or CloudFormation's preflight is for
    ERROR_CODE,  # a denial's (and an injected fault's) HTTP status
    fixes_moto=(
        "IAM matches policy resources only for SQS, S3, IAM and STS: DynamoDB, Logs and Lambda requests "
        "are checked against '*'; denials are XML for JSON-protocol services"
    ),
    uses=("faults_file",),
)
def patch_access_control(faults_file: Path | None = None) -> None:
    """Every access check moto makes, in one place: the resource ARN of each DynamoDB, Logs, Lambda
    and CloudFormation request, denials in the request's protocol, no signature on the custom
    resource response URL, and, with `faults_file`, the DynamoDB faults injected there
    (embedded_aws/faults.py) once a request is allowed."""
    from moto.awslambda.responses import LambdaResponse
    from moto.cloudformation.responses import CloudFormationResponse
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.core.exceptions import AccessDeniedError, JsonRESTError
    from moto.dynamodb.responses import DynamoHandler
    from moto.logs.responses import LogsResponse

    xml_check = ActionAuthenticatorMixin._authenticate_and_authorize_normal_action

    def check(self: Any, resource: str = "*") -> None:
        in_request_protocol(self, lambda: xml_check(self, resource))

    def json_check(self: Any, resource: str) -> None:
        # DynamoDB and Logs name the resource in the message, as AWS does.
        try:
            xml_check(self, resource)
        except AccessDeniedError as denied:
            raise JsonRESTError(
                "AccessDeniedException", f"{denied.message} on resource: {resource}"
            ) from None

    def dynamodb_check(self: Any, resource: str = "*") -> None:
        params = getattr(self, "body", None)
        params = params if isinstance(params, dict) else {}
        for permission, arn in dynamodb_permissions(
            self._get_action(), params, self.region, self.current_account
        ):
            # moto names the IAM action after the request; a transaction's operations are
            # checked as their own actions, so the request's name is swapped just for the check.
            self._get_action = lambda permission=permission: permission
            try:
                json_check(self, arn)
            finally:
                del self._get_action
        if faults_file is not None:
            from embedded_aws.faults import raise_injected_fault

            raise_injected_fault(self, faults_file)

    def logs_check(self: Any, resource: str = "*") -> None:
        try:
            params = json.loads(self.body or "{}")
        except (TypeError, ValueError):
            params = {}
        json_check(self, logs_resource_arn(params, self.region, self.current_account))

    def lambda_check(self: Any, resource: str = "*") -> None:
        self._get_action()  # routes the request, which fills uri_match with the path's names
        found = getattr(self, "uri_match", None) or {}
        qualifier = self.querystring.get("Qualifier") or [None]
        check(
            self,
            lambda_function_arn(found.get("FunctionName"), qualifier[0], self.region, self.current_account),
        )

    def cloudformation_check(self: Any, resource: str = "*") -> None:
        # The custom-resource response URL stands in for a pre-signed S3 URL: no SigV4 header.
        if self._get_action() == "ProcessCfnResponse":
            return
        xml_check(
            self, cloudformation_stack_arn(self._get_param("StackName"), self.region, self.current_account)
        )
        # What CloudFormation checks before it starts: the execution role, parameters and Rules.
        from embedded_aws.services.cloudformation.preflight import check_request

        check_request(self)

    install(DynamoHandler, "_authenticate_and_authorize_normal_action", dynamodb_check)
    install(LogsResponse, "_authenticate_and_authorize_normal_action", logs_check)
    install(CloudFormationResponse, "_authenticate_and_authorize_normal_action", cloudformation_check)
    install(LambdaResponse, "_authenticate_and_authorize_normal_action", lambda_check)
    install(ActionAuthenticatorMixin, "_authenticate_and_authorize_normal_action", check)


# SQS authorizes a batch call with the permission of its single-message action.
_SQS_BATCH_PERMISSIONS = {
    "sqs:SendMessageBatch": "sqs:SendMessage",
    "sqs:DeleteMessageBatch": "sqs:DeleteMessage",
    "sqs:ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
}


# moto names an IAM action after the signing name; where IAM's prefix differs, IAM's is used.
_IAM_PREFIXES = {"monitoring": "cloudwatch"}


@declare(
    "iam.action-names",
    "IAM's action prefixes (cloudwatch:, not monitoring:); SQS batch calls as their single-message actions",
    T(
        "moto.iam.access_control:IAMRequestBase.__init__",
        "self",
        "account_id",
        "method",
        "path",
        "data",
        "body",
        "headers",
        "action",
    ),
    REQUEST_ACTION,
    fixes_moto="CloudWatch actions are authorized as monitoring:*, SQS batch calls as *Batch actions",
)
def patch_iam_action_names() -> None:
    from moto.iam.access_control import IAMRequestBase

    init = IAMRequestBase.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        prefix, _, name = self._action.partition(":")
        action = f"{_IAM_PREFIXES.get(prefix, prefix)}:{name}"
        self._action = _SQS_BATCH_PERMISSIONS.get(action, action)

    install(IAMRequestBase, "__init__", __init__)


@declare(
    "iam.bodyless-signature",
    "a request without a body is signed over an empty payload",
    T("moto.iam.access_control:IAMRequestBase._create_aws_request", "self"),
    state("moto.iam.access_control:IAMRequestBase._headers", new_objects.iam_request),
    state("moto.iam.access_control:IAMRequestBase._body", new_objects.iam_request),
    state("botocore.awsrequest:AWSRequest.data", new_objects.aws_request),
    fixes_moto="a signed GET or bodyless POST fails SignatureDoesNotMatch (re-signed over its parameters)",
)
def patch_signature_of_bodyless_requests() -> None:
    """moto re-signs a request without a body over its parsed parameters instead of an empty
    payload, so every signed REST GET (e.g. Lambda ListFunctions) and every bodyless POST (an
    Invoke without a payload, `aws lambda invoke` with no `--payload`) failed
    SignatureDoesNotMatch. Their parameters are in the signed URL already."""
    from moto.iam.access_control import IAMRequestBase

    create = IAMRequestBase._create_aws_request

    def create_aws_request(self: Any) -> Any:
        request = create(self)
        # A form POST (query protocol) reaches here with its body parsed into the parameters.
        form = "x-www-form-urlencoded" in (self._headers.get("Content-Type") or "")
        if not self._body and not form:
            request.data = b""
        return request

    install(IAMRequestBase, "_create_aws_request", create_aws_request)
