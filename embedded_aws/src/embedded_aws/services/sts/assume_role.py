"""sts:AssumeRole authorized as AWS authorizes it: the caller's identity policies and the role's
trust policy (trust.py), refused in IAM's words. The Lambda host's own role credentials do not
come through here: it asks moto's STS backend directly (server/emulator.py), as the Lambda
service is the principal a function role trusts."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.registry import T, declare, install
from embedded_aws.services.sts.trust import Caller, evaluate

ASSUME_ROLE = "sts:AssumeRole"


def caller_context(caller_arn: str, account: str, data: dict[str, Any]) -> dict[str, str]:
    """The condition keys an AssumeRole request brings (the ones trust policies use here)."""
    from embedded_aws.services.iam.api_callers import principal_arn

    context = {
        "aws:PrincipalArn": principal_arn(caller_arn),
        "aws:PrincipalAccount": account,
        "aws:SecureTransport": "true",
    }
    for key, name in (("ExternalId", "sts:ExternalId"), ("RoleSessionName", "sts:RoleSessionName")):
        value = data.get(key)
        if isinstance(value, list):
            value = value[0] if value else None
        if value:
            context[name] = str(value)
    return context


@declare(
    "sts.assume-role-trust",
    (
        "sts:AssumeRole allowed by the role's trust policy as IAM reads it (account principals, role "
        "sessions, Null conditions) together with the caller's identity policies"
    ),
    T("moto.iam.access_control:IAMRequestBase.check_action_permitted", "self", "resource"),
    fixes_moto=(
        "trust policy principals are compared literally: a role trusting its account "
        "(`arn:aws:iam::<account>:root` or the bare account id) cannot be assumed by that account's users"
    ),
)
def patch_assume_role() -> None:
    from moto.core.exceptions import AccessDeniedError
    from moto.iam.access_control import IAMRequestBase
    from moto.iam.exceptions import NotFoundException

    from embedded_aws.services.iam.api_callers import identity_decision

    check = IAMRequestBase.check_action_permitted

    def check_action_permitted(self: Any, resource: str) -> None:
        if self._action != ASSUME_ROLE or ":role/" not in resource:
            return check(self, resource)
        caller_arn = self._access_key.arn
        try:
            role = self.backend.get_role_by_arn(resource)
        except NotFoundException:
            role = None
        trust = (
            evaluate(
                role.assume_role_policy_document,
                Caller(arn=caller_arn, context=caller_context(caller_arn, self.account_id, self._data)),
            )
            if role is not None
            else None
        )
        identity = identity_decision(self._access_key, ASSUME_ROLE, resource)
        if trust is None or not trust.allows(identity):
            # moto's denial names the action only; IAM's names the role too.
            raise AccessDeniedError(user_arn=caller_arn, action=f"{ASSUME_ROLE} on resource: {resource}")
        return None

    install(IAMRequestBase, "check_action_permitted", check_action_permitted)


@declare(
    "sts.role-session-policies",
    "a role CloudFormation made keeps its inline policies as JSON text, as one the IAM API made: its "
    "sessions are authorized by them and GetAccountAuthorizationDetails lists them",
    T("moto.iam.models:Role.put_policy", "self", "policy_name", "policy_json"),
    fixes_moto=(
        "a role created by CloudFormation keeps inline policies as dicts; every request signed by one of "
        "its sessions fails with KeyError 'policy_document', and GetAccountAuthorizationDetails with "
        "TypeError in parse.quote (500s)"
    ),
)
def patch_role_session_policies() -> None:
    """Role.put_policy stores the JSON text of a policy given as parsed JSON (CloudFormation's
    Policies property), the form every reader of a role's policies expects."""
    import json

    from moto.iam.models import Role

    put_policy = Role.put_policy

    def put_policy_text(self: Any, policy_name: str, policy_json: Any) -> None:
        put_policy(
            self, policy_name, policy_json if isinstance(policy_json, str) else json.dumps(policy_json)
        )

    install(Role, "put_policy", put_policy_text)
