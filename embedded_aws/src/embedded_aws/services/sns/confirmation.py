"""SNS email subscriptions wait for confirmation, as on AWS; moto confirms every subscription at once.

AWS (Subscribe, SNS API reference): for an HTTP/S or email endpoint "the endpoint owner must call
the ConfirmSubscription action to confirm the subscription"; until then Subscribe answers
`pending confirmation` (the ARN only with ReturnSubscriptionArn=true), GetSubscriptionAttributes
`PendingConfirmation` "true", and ListSubscriptions/ListSubscriptionsByTopic `PendingConfirmation`
where the ARN would be. Here an `email` or `email-json` subscription stays pending: no mail leaves
the machine, so no confirmation token reaches anyone (moto's ConfirmSubscription confirms
nothing). HTTP/S subscriptions stay confirmed at once, as moto makes them, so a local endpoint can
receive without answering a confirmation request (docs/local-fidelity.md).
"""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.registry import T, declare, install, reads

PENDING_PROTOCOLS = frozenset({"email", "email-json"})
PENDING_ARN = "PendingConfirmation"  # in place of the ARN in list answers
PENDING_ANSWER = "pending confirmation"  # Subscribe's answer


def pending(subscription: Any) -> bool:
    return bool(subscription.attributes.get("PendingConfirmation"))


def listed(subscription: Any) -> dict[str, str]:
    """One member of a list answer, as AWS writes it."""
    return {
        "SubscriptionArn": PENDING_ARN if pending(subscription) else subscription.arn,
        "Owner": subscription.owner,
        "Protocol": subscription.protocol,
        "Endpoint": subscription.endpoint,
        "TopicArn": subscription.topic.arn,
    }


@declare(
    "sns.pending-confirmation",
    "an email subscription stays pending confirmation, and the answers about it say so",
    T("moto.sns.models:SNSBackend.subscribe", "self", "topic_arn", "endpoint", "protocol"),
    T("moto.sns.responses:SNSResponse.subscribe", "self"),
    T("moto.sns.responses:SNSResponse.list_subscriptions", "self"),
    T("moto.sns.responses:SNSResponse.list_subscriptions_by_topic", "self"),
    reads("moto.sns.models:SNSBackend._find_subscription", "self", "topic_arn", "endpoint", "protocol"),
    fixes_moto=(
        "every subscription is confirmed at once: an email subscription (AWS: pending until its owner "
        "confirms) is listed with its ARN and Subscribe answers the ARN, not 'pending confirmation'"
    ),
)
def patch_pending_confirmation() -> None:
    from moto.core.responses import ActionResult
    from moto.sns.models import SNSBackend
    from moto.sns.responses import SNSResponse

    subscribe = SNSBackend.subscribe
    subscribe_answer = SNSResponse.subscribe
    list_all = SNSResponse.list_subscriptions
    list_by_topic = SNSResponse.list_subscriptions_by_topic

    def subscribe_pending(self: Any, topic_arn: str, endpoint: str, protocol: str) -> Any:
        existing = self._find_subscription(topic_arn, endpoint, protocol)
        subscription = subscribe(self, topic_arn, endpoint, protocol)
        if existing is None and protocol in PENDING_PROTOCOLS:
            subscription.attributes["PendingConfirmation"] = True
            subscription.attributes["ConfirmationWasAuthenticated"] = False
        return subscription

    def subscribe_answering(self: Any) -> ActionResult:
        answer = subscribe_answer(self)
        found = self.backend._find_subscription(
            self._get_param("TopicArn"), self._get_param("Endpoint"), self._get_param("Protocol")
        )
        wants_arn = str(self._get_param("ReturnSubscriptionArn", "false")).lower() == "true"
        if found is not None and pending(found) and not wants_arn:
            return ActionResult({"SubscriptionArn": PENDING_ANSWER})
        return answer

    def listing(original: Any) -> Any:
        def answer(self: Any) -> ActionResult:
            result = original(self).result
            return ActionResult({**result, "Subscriptions": [listed(s) for s in result["Subscriptions"]]})

        return answer

    install(SNSBackend, "subscribe", subscribe_pending)
    install(SNSResponse, "subscribe", subscribe_answering)
    install(SNSResponse, "list_subscriptions", listing(list_all))
    install(SNSResponse, "list_subscriptions_by_topic", listing(list_by_topic))
