"""SQS queue policies enforced as AWS evaluates them.

An API caller of the account may act on a queue if its identity policies or the queue's policy
allow it and no explicit Deny in either applies (api_callers.py); moto checked identity policies
only, so a queue policy neither allowed nor denied anything. A denial keeps moto's
`AccessDenied` (403) and wording, in the request's protocol, with IAM's reason added.

A service principal has no identity policy: SNS delivering to a subscribed queue
(`sns.amazonaws.com`, `sqs:SendMessage`) is allowed by the queue policy alone, with the
topic's ARN as aws:SourceArn and its account as aws:SourceAccount. Without such an Allow AWS
does not deliver ("Subscribing an Amazon SQS queue to an Amazon SNS topic", SNS developer guide:
the queue policy must allow the topic); nor does the embedded AWS, which logs the refusal.
"""

from __future__ import annotations

import logging
from typing import Any

from embedded_aws.compat.internals import REQUEST_ACCESS_KEY, REQUEST_ACTION
from embedded_aws.compat.registry import T, declare, install
from embedded_aws.services.iam.api_callers import refusal
from embedded_aws.services.iam.resource_policies import ALLOW, Principal, Request, decide

SNS = Principal("Service", "sns.amazonaws.com")

log = logging.getLogger("embedded_aws.sqs")


def queue_policy(arn: str) -> str | None:
    """The policy of the queue `arn` names (None: no policy, or no such queue)."""
    from moto.sqs.models import sqs_backends

    try:
        _, _, _, region, account, name = arn.split(":", 5)
        queue = sqs_backends[account][region].queues.get(name)
    except (ValueError, KeyError):
        return None
    return queue.policy if queue is not None else None


def delivery_request(topic_arn: str, queue_arn: str) -> Request:
    """SNS's SendMessage to a subscribed queue, as the queue policy sees it."""
    return Request(
        SNS,
        "sqs:SendMessage",
        queue_arn,
        {
            "aws:SourceArn": topic_arn,
            "aws:SourceAccount": topic_arn.split(":")[4],
            "aws:SecureTransport": "true",
        },
    )


def sns_may_deliver(topic_arn: str, queue_arn: str) -> bool:
    return decide(queue_policy(queue_arn), delivery_request(topic_arn, queue_arn)) == ALLOW


@declare(
    "iam.queue-access",
    (
        "SQS requests authorized by identity and queue policy together; SNS delivers to a queue only if "
        "its policy allows sns.amazonaws.com"
    ),
    T("moto.sqs.responses:SQSResponse._authenticate_and_authorize_normal_action", "self", "resource"),
    REQUEST_ACTION,
    REQUEST_ACCESS_KEY,
    T(
        "moto.sns.models:Subscription.publish",
        "self",
        "message",
        "message_id",
        "subject",
        "message_attributes",
        "group_id",
        "deduplication_id",
        "message_structure",
    ),
    fixes_moto=(
        "SQS queue policies are stored but never evaluated: they neither allow a caller nor deny one, and"
        " SNS delivers to a queue whose policy does not allow it"
    ),
)
def patch_queue_access() -> None:
    """SQS API requests checked with the queue policy too; SNS deliveries by the queue policy."""
    from moto.core.exceptions import AccessDeniedError, _RESTError
    from moto.iam.access_control import IAMRequest
    from moto.sns.models import Subscription
    from moto.sqs.responses import SQSResponse

    from embedded_aws.services.iam.access_control import in_request_protocol

    class QueueDenied(AccessDeniedError):
        """moto's AccessDenied (so the JSON-protocol answer applies) with IAM's reason."""

        def __init__(self, message: str) -> None:
            _RESTError.__init__(self, "AccessDenied", message)

    class QueueRequest(IAMRequest):
        def check_action_permitted(self, resource: str) -> None:
            denied = refusal(
                self._access_key,
                self.account_id,
                self._action,
                resource,
                queue_policy(resource) if resource != "*" else None,
            )
            if denied:
                raise QueueDenied(denied)

    def check(self: Any, resource: str = "*") -> None:
        in_request_protocol(self, lambda: self._authenticate_and_authorize_action(QueueRequest, resource))

    publish = Subscription.publish

    def deliver(self: Any, message: str, message_id: str, *args: Any, **kwargs: Any) -> None:
        if self.protocol == "sqs" and not sns_may_deliver(self.topic_arn, self.endpoint):
            log.warning(
                "SNS did not deliver message %s of %s to %s: the queue policy does not allow "
                "sns.amazonaws.com to sqs:SendMessage from this topic",
                message_id,
                self.topic_arn,
                self.endpoint,
            )
            return
        publish(self, message, message_id, *args, **kwargs)

    install(SQSResponse, "_authenticate_and_authorize_normal_action", check)
    install(Subscription, "publish", deliver)
