"""What CloudFormation checks of a CreateStack, UpdateStack or CreateChangeSet before it starts,
run right after the request is authorized (services/iam/access_control.py): the execution role
(execution_role.py), the template's parameters (an SSM parameter type read from the account's
parameter store, UsePreviousValue as the stack's previous value) and its Rules (rules.py).

An update that names no RoleARN keeps the stack's role, as CloudFormation does ("If you don't
specify a value, CloudFormation uses the role that was previously associated with the stack").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from werkzeug.exceptions import HTTPException

from embedded_aws.services.cloudformation import execution_role, rules

ACTIONS = ("CreateStack", "UpdateStack", "CreateChangeSet")
_SSM_TYPE = "AWS::SSM::Parameter::Value<"


class Refused(HTTPException):
    """A refusal already serialized in CloudFormation's protocol: moto answers an exception raised
    while a request is authorized with the exception's status and description."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(description=body)
        self.code = status


class Invalid(Exception):
    """The request is refused with CloudFormation's ValidationError; the message is AWS's."""


def parameter_values(
    declared: Mapping[str, Mapping[str, Any]],
    given: list[Mapping[str, Any]],
    previous: Callable[[str], Any],
    ssm: Callable[[str], str | None],
) -> dict[str, Any]:
    """Every declared parameter's value: the one given, the previous one (UsePreviousValue), or
    the default; an SSM parameter type is replaced by the parameter store's value."""
    by_name = {entry.get("ParameterKey"): entry for entry in given}
    values: dict[str, Any] = {}
    missing, unfetched = [], []
    for name, spec in declared.items():
        entry = by_name.get(name, {})
        if "ParameterValue" in entry:
            raw = entry["ParameterValue"]
        elif str(entry.get("UsePreviousValue", "")).lower() == "true":
            raw = previous(name)
        else:
            raw = spec.get("Default")
        if raw is None:
            missing.append(name)
            continue
        kind = str(spec.get("Type", "String"))
        if kind.startswith(_SSM_TYPE):
            found = ssm(str(raw))
            if found is None:
                unfetched.append(str(raw))
                continue
            raw = found
            kind = kind[len(_SSM_TYPE) : -1]
        values[name] = raw.split(",") if kind.startswith("List<") or kind == "CommaDelimitedList" else raw
    if missing:
        # LocalStack's recording of AWS (test_stacks.snapshot.json): "Parameters: [Input] must have values"
        raise Invalid(f"Parameters: [{', '.join(missing)}] must have values")
    if unfetched:
        raise Invalid(
            f"Unable to fetch parameters [{','.join(unfetched)}] from parameter store for this account."
        )
    return values


def check_request(response: Any) -> None:
    """Refuse the request (raise Refused) as CloudFormation would, or let it go on, with
    UsePreviousValue and a kept RoleARN spelled out for moto."""
    action = response._get_action()
    if action not in ACTIONS:
        return
    try:
        _check(response, action)
    except Invalid as invalid:
        from moto.cloudformation.exceptions import ValidationError
        from moto.core.responses import ActionResult

        status, headers, body = response.serialized(ActionResult(ValidationError(message=str(invalid))))
        response.response_headers["Content-Type"] = headers.get("Content-Type", "text/xml")
        raise Refused(status, body if isinstance(body, str) else body.decode()) from None


def _check(response: Any, action: str) -> None:
    from moto.cloudformation.models import Stack, cloudformation_backends

    params = response.params
    account, region = response.current_account, response.region
    updating = action == "UpdateStack" or (
        action == "CreateChangeSet" and params.get("ChangeSetType", "CREATE") in ("UPDATE", "IMPORT")
    )
    stack = (
        _live_stack(cloudformation_backends[account][region], params.get("StackName")) if updating else None
    )

    def previous(name: str) -> Any:
        if stack is None:
            return None
        if name in (stack.parameters or {}):
            return stack.parameters[name]
        return ((stack.template_dict.get("Parameters") or {}).get(name) or {}).get("Default")

    if stack is not None:
        for entry in params.get("Parameters") or []:
            if str(entry.get("UsePreviousValue", "")).lower() == "true" and "ParameterValue" not in entry:
                # moto looks the previous value up where a parameter left at its default is not kept
                # (a 500), or takes an SSM parameter's resolved value for its name.
                entry.pop("UsePreviousValue")
                entry["ParameterValue"] = previous(entry["ParameterKey"])
        if not params.get("RoleARN") and stack.role_arn:
            params["RoleARN"] = stack.role_arn

    role_arn = params.get("RoleARN")
    if role_arn:
        _check_role(response, role_arn, account)

    body = _template_body(response, params, stack)
    if body is None:
        return
    template = Stack.parse_template(body)
    declared = template.get("Parameters") or {}
    needs_values = template.get("Rules") or any(
        str(spec.get("Type", "")).startswith(_SSM_TYPE) for spec in declared.values()
    )
    if not needs_values:
        return
    values = parameter_values(
        declared, params.get("Parameters") or [], previous, _ssm_lookup(account, region)
    )
    values.update(
        {
            "AWS::AccountId": account,
            "AWS::Region": region,
            "AWS::Partition": "aws",
            "AWS::StackName": params.get("StackName", ""),
        }
    )
    try:
        rules.check(template, values)
    except rules.RuleFailed as failed:
        raise Invalid(str(failed)) from None


def _check_role(response: Any, role_arn: str, account: str) -> None:
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.core.exceptions import AccessDeniedError

    from embedded_aws.services.iam.api_callers import identity_decision
    from embedded_aws.services.iam.resource_policies import ALLOW

    enforcing = ActionAuthenticatorMixin.request_count >= settings.INITIAL_NO_AUTH_ACTION_COUNT
    if enforcing:
        key = _access_key(response)
        if identity_decision(key, "iam:PassRole", role_arn) != ALLOW:
            raise AccessDeniedError(user_arn=key.arn, action=f"iam:PassRole on resource: {role_arn}")
    refusal = execution_role.cannot_be_assumed(role_arn, execution_role.trust_policy(role_arn, account))
    if refusal:
        raise Invalid(refusal)


def _access_key(response: Any) -> Any:
    from moto.iam.access_control import create_access_key

    found = re.search(r"Credential=([^/]+)/", response.headers.get("Authorization", ""))
    return create_access_key(
        account_id=response.current_account,
        partition=response.partition,
        access_key_id=found[1] if found else "",
        headers=response.headers,
    )


def _live_stack(backend: Any, name: str | None) -> Any:
    for stack in backend.stacks.values():
        if name in (stack.name, stack.stack_id) and stack.status != "DELETE_COMPLETE":
            return stack
    return None


def _template_body(response: Any, params: Mapping[str, Any], stack: Any) -> str | None:
    if str(params.get("UsePreviousTemplate", "")).lower() == "true":
        return stack.template if stack is not None else None
    if params.get("TemplateBody"):
        return str(params["TemplateBody"])
    if params.get("TemplateURL"):
        body: str | None = response._get_stack_from_s3_url(params["TemplateURL"])
        return body
    return None


def _ssm_lookup(account: str, region: str) -> Callable[[str], str | None]:
    def lookup(name: str) -> str | None:
        from moto.ssm.exceptions import ParameterNotFound
        from moto.ssm.models import ssm_backends

        try:
            parameter = ssm_backends[account][region].get_parameter(name)
        except ParameterNotFound:
            return None
        return None if parameter is None else str(parameter.value)

    return lookup
