"""SNS requests authorized as AWS authorizes them: against the topic they act on, by the caller's
identity policies and the topic's policy together (api_callers.py: IAM's evaluation within one
account). moto checked every SNS request against the resource `*` and its identity policies
only, so a policy scoped to a topic's ARN allowed nothing and a topic policy's Deny refused
nothing. A denial is SNS's `AuthorizationError` (403) in the words of IAM's access-denied
messages.

aws:SourceOwner is not set for an IAM caller, so SNS's default policy (which allows the owner's
account on that key) adds nothing here: the caller's identity policy decides, as it must for a
same-account caller on AWS.
"""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.internals import REQUEST_ACCESS_KEY, REQUEST_ACTION
from embedded_aws.compat.registry import T, Target, declare, install
from embedded_aws.services.iam.api_callers import refusal

# SNS actions that act on no one topic (IAM's resource `*`).
_ACCOUNT_ACTIONS = {
    "ListTopics",
    "ListSubscriptions",
    "CreatePlatformApplication",
    "ListPlatformApplications",
    "GetSMSAttributes",
    "SetSMSAttributes",
    "CheckIfPhoneNumberIsOptedOut",
    "ListPhoneNumbersOptedOut",
    "OptInPhoneNumber",
    "GetSMSSandboxAccountStatus",
    "ListOriginationNumbers",
}


def topic_arn(action: str, params: dict[str, Any], region: str, account: str) -> str | None:
    """The topic a request acts on, or None for an account-wide action."""
    if action in _ACCOUNT_ACTIONS:
        return None
    if action == "CreateTopic" and params.get("Name"):
        return f"arn:aws:sns:{region}:{account}:{params['Name']}"
    for key in ("TopicArn", "TargetArn", "ResourceArn"):
        value: str | None = params.get(key)
        if value and value.startswith("arn:aws:sns:"):
            return value
    subscription: str | None = params.get("SubscriptionArn")
    if subscription and subscription.count(":") >= 6:  # arn:aws:sns:region:account:topic:id
        return subscription.rsplit(":", 1)[0]
    return None


def topic_policy(arn: str) -> str | None:
    from moto.sns.models import sns_backends

    parts = arn.split(":")
    topic = sns_backends[parts[4]][parts[3]].topics.get(arn)
    return topic.policy if topic is not None else None


@declare(
    "iam.topic-access",
    "SNS requests authorized against their topic by identity and topic policy together",
    T("moto.sns.responses:SNSResponse._authenticate_and_authorize_normal_action", "self", "resource"),
    REQUEST_ACTION,
    REQUEST_ACCESS_KEY,
    Target(
        "moto.core.authorization:ActionAuthenticatorMixin._authenticate_and_authorize_action",
        ("self", "iam_request_cls", "resource"),
        replaced=False,
    ),
    Target(
        "moto.iam.access_control:IAMPolicy.is_action_permitted",
        ("self", "action", "resource", "principal", "incoming_condition_values"),
        replaced=False,
    ),
    fixes_moto=(
        "SNS requests are checked against '*' and identity policies only: a policy scoped to a topic ARN "
        "allows nothing, and a topic policy neither allows nor denies"
    ),
)
def patch_topic_access() -> None:
    from moto.core.exceptions import _RESTError
    from moto.iam.access_control import IAMRequest
    from moto.sns.responses import SNSResponse

    class AuthorizationError(_RESTError):
        code = 403

        def __init__(self, message: str) -> None:
            super().__init__("AuthorizationError", message)

    class TopicRequest(IAMRequest):
        def check_action_permitted(self, resource: str) -> None:
            denied = refusal(
                self._access_key,
                self.account_id,
                self._action,
                resource,
                topic_policy(resource) if resource != "*" else None,
                spelled="SNS:" + self._action.partition(":")[2],
            )  # SNS's spelling in its denials
            if denied:
                raise AuthorizationError(denied)

    def check(self: Any, resource: str = "*") -> None:
        params = {
            key: self._get_param(key)
            for key in ("Name", "TopicArn", "TargetArn", "ResourceArn", "SubscriptionArn")
        }
        arn = topic_arn(self._get_action(), params, self.region, self.current_account)
        self._authenticate_and_authorize_action(TopicRequest, arn or "*")

    install(SNSResponse, "_authenticate_and_authorize_normal_action", check)
