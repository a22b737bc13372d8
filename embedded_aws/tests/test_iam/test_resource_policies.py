"""Resource-based policies evaluated as IAM does (explicit Deny wins, then an Allow, else an
implicit deny), on the policies this project meets: the stack's alarm topic policy, a TLS-only
policy, SNS's default topic policy."""

from __future__ import annotations

from embedded_aws.services.iam.resource_policies import ALLOW, DENY, IMPLICIT_DENY, Principal, Request, decide

TOPIC = "arn:aws:sns:us-east-1:123456789012:p-alarms"
ALARM = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:p-dead-letters"
TLS_DENY = {
    "Sid": "AllowPublishThroughSSLOnly",
    "Effect": "Deny",
    "Principal": "*",
    "Action": "sns:Publish",
    "Resource": TOPIC,
    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
}
ALARMS_ALLOW = {
    "Effect": "Allow",
    "Principal": {"Service": "cloudwatch.amazonaws.com"},
    "Action": "sns:Publish",
    "Resource": TOPIC,
    "Condition": {
        "ArnLike": {"aws:SourceArn": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:p-*"},
        "StringEquals": {"aws:SourceAccount": "123456789012"},
    },
}
DEFAULT = {
    "Effect": "Allow",
    "Principal": {"AWS": "*"},
    "Action": ["SNS:Publish", "SNS:Subscribe"],
    "Resource": TOPIC,
    "Condition": {"StringEquals": {"AWS:SourceOwner": "123456789012"}},
}


def cloudwatch(alarm: str = ALARM, secure: str = "true", account: str = "123456789012") -> Request:
    return Request(
        Principal("Service", "cloudwatch.amazonaws.com"),
        "sns:Publish",
        TOPIC,
        {
            "aws:SourceArn": alarm,
            "aws:SourceAccount": account,
            "aws:SourceOwner": account,
            "aws:SecureTransport": secure,
        },
    )


def policy(*statements: dict) -> dict:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def test_a_tls_deny_alone_lets_nothing_publish_for_a_service():
    assert decide(policy(TLS_DENY), cloudwatch()) == IMPLICIT_DENY


def test_the_stacks_policy_lets_its_own_alarms_publish_only():
    assert decide(policy(TLS_DENY, ALARMS_ALLOW), cloudwatch()) == ALLOW
    other = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:q-dead-letters"
    assert decide(policy(TLS_DENY, ALARMS_ALLOW), cloudwatch(alarm=other)) == IMPLICIT_DENY
    assert decide(policy(TLS_DENY, ALARMS_ALLOW), cloudwatch(account="999999999999")) == IMPLICIT_DENY


def test_an_explicit_deny_wins_over_an_allow():
    assert decide(policy(TLS_DENY, ALARMS_ALLOW), cloudwatch(secure="false")) == DENY


def test_the_default_topic_policy_lets_the_accounts_alarms_publish():
    assert decide(policy(DEFAULT), cloudwatch()) == ALLOW
    assert decide(policy(DEFAULT), cloudwatch(account="999999999999")) == IMPLICIT_DENY


def test_an_iam_principal_of_the_account_matches_its_root():
    statement = {
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
        "Action": "sns:*",
        "Resource": "*",
    }
    user = Principal("AWS", "arn:aws:iam::123456789012:user/admin", "123456789012")
    assert decide(policy(statement), Request(user, "sns:Publish", TOPIC)) == ALLOW
    stranger = Principal("AWS", "arn:aws:iam::999999999999:user/x", "999999999999")
    assert decide(policy(statement), Request(stranger, "sns:Publish", TOPIC)) == IMPLICIT_DENY


def test_negated_and_if_exists_operators_hold_when_the_key_is_absent_and_unknown_ones_never_apply():
    absent = Request(Principal("Service", "cloudwatch.amazonaws.com"), "sns:Publish", TOPIC, {})
    negated = {**ALARMS_ALLOW, "Condition": {"StringNotEquals": {"aws:SourceAccount": "1"}}}
    if_exists = {**ALARMS_ALLOW, "Condition": {"ArnLikeIfExists": {"aws:SourceArn": "arn:*"}}}
    unknown = {**ALARMS_ALLOW, "Condition": {"NumericLessThan": {"aws:Foo": "3"}}}
    assert decide(policy(negated), absent) == ALLOW
    assert decide(policy(if_exists), absent) == ALLOW
    assert decide(policy(unknown), cloudwatch()) == IMPLICIT_DENY
    assert decide(policy(ALARMS_ALLOW), absent) == IMPLICIT_DENY
