"""SNS Publish refuses as AWS refuses where moto does not: an empty message (`InvalidParameter`,
`Invalid parameter: Empty message`), a topic that does not exist (`NotFound`, `Topic does not
exist`; moto: `Endpoint does not exist`), as LocalStack recorded AWS (test_conformance cites
both)."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.registry import T, declare, install


@declare(
    "sns.publish-refusals",
    "Publish refuses an empty message and a missing topic as AWS does",
    T(
        "moto.sns.models:SNSBackend.publish",
        "self",
        "message",
        "arn",
        "phone_number",
        "subject",
        "message_attributes",
        "group_id",
        "deduplication_id",
        "message_structure",
    ),
    fixes_moto=(
        "Publish accepts an empty message (AWS: InvalidParameter, 'Invalid parameter: Empty message') and"
        " answers a missing topic 'Endpoint does not exist' (AWS: 'Topic does not exist')"
    ),
)
def patch_publish_refusals() -> None:
    from moto.sns.exceptions import SNSInvalidParameter, TopicNotFound
    from moto.sns.models import SNSBackend

    publish = SNSBackend.publish

    def publish_refusing(self: Any, message: str, arn: str | None = None, *args: Any, **kwargs: Any) -> str:
        if not message:
            raise SNSInvalidParameter("Invalid parameter: Empty message")
        if arn and ":endpoint/" not in arn and arn not in self.topics:
            raise TopicNotFound
        return publish(self, message, arn, *args, **kwargs)

    install(SNSBackend, "publish", publish_refusing)
