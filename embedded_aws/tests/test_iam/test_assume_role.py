"""sts:AssumeRole as IAM decides it ("IAM JSON policy elements: Principal", "Policy evaluation
logic"): a trust policy naming the account lets the account's identities in when their identity
policy allows sts:AssumeRole; one naming the caller lets it in by itself; a service principal is
no signed caller; a condition the local IAM cannot evaluate never lets anyone in; refusals in
IAM's words. Pure cases first, then CDK's deploy-role trust policy in the shared embedded AWS."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest

from embedded_aws.services.sts.trust import ALLOW, DENY, IMPLICIT_DENY, Caller, evaluate
from test_iam.callers import refusal, user
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

ACCOUNT = "123456789012"
USER = f"arn:aws:iam::{ACCOUNT}:user/alice"
SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/deployer/cli-session"


def trust(*statements: dict) -> dict:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def allow(principal: dict | str, **extra) -> dict:
    return {"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": principal, **extra}


@pytest.mark.parametrize(
    "principal, caller, decision, names_caller",
    [
        ({"AWS": ACCOUNT}, USER, ALLOW, False),
        ({"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, USER, ALLOW, False),
        ({"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, SESSION, ALLOW, False),
        ({"AWS": "210987654321"}, USER, IMPLICIT_DENY, False),
        ({"AWS": USER}, USER, ALLOW, True),
        ({"AWS": f"arn:aws:iam::{ACCOUNT}:user/bob"}, USER, IMPLICIT_DENY, False),
        ({"AWS": f"arn:aws:iam::{ACCOUNT}:role/deployer"}, SESSION, ALLOW, True),
        ({"AWS": f"arn:aws:iam::{ACCOUNT}:role/other"}, SESSION, IMPLICIT_DENY, False),
        ({"Service": "lambda.amazonaws.com"}, USER, IMPLICIT_DENY, False),
    ],
)
def test_principals_match_the_account_or_the_caller(principal, caller, decision, names_caller):
    """An account principal (bare id or `:root` ARN) matches every identity of that account, an
    ARN matches that user or that role's sessions, a service principal no signed caller."""
    found = evaluate(trust(allow(principal)), Caller(arn=caller))
    assert (found.decision, found.names_caller) == (decision, names_caller)


def test_an_account_principal_needs_the_identity_policy_and_a_named_caller_does_not():
    """Trust in the account delegates to the identity policies; trust naming the caller is enough
    on its own; an explicit Deny in the identity policy refuses either way."""
    account = evaluate(trust(allow({"AWS": ACCOUNT})), Caller(arn=USER))
    named = evaluate(trust(allow({"AWS": USER})), Caller(arn=USER))
    assert (account.allows(ALLOW), account.allows(IMPLICIT_DENY)) == (True, False)
    assert (named.allows(ALLOW), named.allows(IMPLICIT_DENY), named.allows(DENY)) == (True, True, False)


def test_a_service_principal_matches_only_that_service():
    """CloudFormation acting as its execution role is the `cloudformation.amazonaws.com` principal."""
    policy = trust(allow({"Service": "cloudformation.amazonaws.com"}))
    assert evaluate(policy, Caller(service="cloudformation.amazonaws.com")).decision == ALLOW
    assert evaluate(policy, Caller(service="lambda.amazonaws.com")).decision == IMPLICIT_DENY


def test_cdk_deploy_role_null_external_id_condition():
    """CDK's bootstrap roles trust the account on condition that no ExternalId is given (`Null`)."""
    policy = trust(allow({"AWS": ACCOUNT}, Condition={"Null": {"sts:ExternalId": "true"}}))
    assert evaluate(policy, Caller(arn=USER)).decision == ALLOW
    assert evaluate(policy, Caller(arn=USER, context={"sts:ExternalId": "x1"})).decision == IMPLICIT_DENY


def test_a_condition_that_cannot_be_evaluated_never_lets_a_caller_in():
    """An operator the local IAM does not evaluate (IpAddress): the Allow allows nothing and a
    Deny with it denies, so the gap can only refuse, never admit."""
    unknown = {"IpAddress": {"aws:SourceIp": "203.0.113.0/24"}}
    assert (
        evaluate(trust(allow({"AWS": ACCOUNT}, Condition=unknown)), Caller(arn=USER)).decision
        == IMPLICIT_DENY
    )
    deny = {"Effect": "Deny", "Action": "sts:AssumeRole", "Principal": {"AWS": "*"}, "Condition": unknown}
    assert evaluate(trust(allow({"AWS": ACCOUNT}), deny), Caller(arn=USER)).decision == DENY


def test_an_explicit_deny_in_the_trust_policy_wins():
    """Deny beats Allow in the trust policy, whoever the Allow names."""
    deny = {"Effect": "Deny", "Action": "sts:*", "Principal": {"AWS": USER}}
    assert evaluate(trust(allow({"AWS": USER}), deny), Caller(arn=USER)).decision == DENY


# --- in the shared embedded AWS ----------------------------------------------------------


def _role(emulator, statements: list[dict]) -> str:
    arn: str = emulator.client("iam").create_role(
        RoleName=f"trust-{uuid.uuid4().hex[:8]}", AssumeRolePolicyDocument=json.dumps(trust(*statements))
    )["Role"]["Arn"]
    return arn


ASSUME_ANY = {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}


@pytest.mark.e2e
def test_cdk_deploy_role_trust_lets_the_accounts_users_assume_it(emulator):
    """The deploy role's trust (the bare account id, no ExternalId) admits the admin user and a
    user allowed sts:AssumeRole, and refuses a user without that permission in IAM's words."""
    role = _role(emulator, [allow({"AWS": ACCOUNT}, Condition={"Null": {"sts:ExternalId": "true"}})])
    admin = emulator.client("sts").assume_role(RoleArn=role, RoleSessionName="cdk-deploy")
    assert admin["AssumedRoleUser"]["Arn"].startswith(f"arn:aws:sts::{ACCOUNT}:assumed-role/trust-")
    _, allowed = user(emulator, [ASSUME_ANY], service="sts")
    assert allowed.assume_role(RoleArn=role, RoleSessionName="allowed")["Credentials"]["AccessKeyId"]
    arn, bare = user(emulator, [{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}], service="sts")
    assert refusal(lambda: bare.assume_role(RoleArn=role, RoleSessionName="bare")) == {
        "code": "AccessDenied",
        "status": 403,
        "message": f"User: {arn} is not authorized to perform: sts:AssumeRole on resource: {role}",
    }


@pytest.mark.e2e
def test_a_role_trusting_a_service_or_another_account_refuses_the_admin(emulator):
    """A function's role (trusting lambda.amazonaws.com) and a role trusting another account
    cannot be assumed by the admin user, however broad its own policy."""
    for principal in ({"Service": "lambda.amazonaws.com"}, {"AWS": "arn:aws:iam::210987654321:root"}):
        role = _role(emulator, [allow(principal)])
        found = refusal(
            lambda role=role: emulator.client("sts").assume_role(RoleArn=role, RoleSessionName="x1")
        )
        assert (found["code"], found["status"]) == ("AccessDenied", 403)
        assert found["message"].endswith(f"is not authorized to perform: sts:AssumeRole on resource: {role}")


@pytest.mark.e2e
def test_a_session_of_a_role_cloudformation_made_is_authorized_by_its_policies(emulator):
    """A role from a template (as CDK's bootstrap roles are), trusting the account: its session
    may do what its inline policy allows (moto answered every such request with a 500) and what
    its AWS managed policy allows (moto ignored ManagedPolicyArns), and is refused the rest; the
    role's inline policy reads back as IAM's API gives it, also in GetAccountAuthorizationDetails
    (moto kept it as parsed JSON and that call answered a 500 page); the stack's delete removes
    the role with its policies attached."""
    cloudformation, name = emulator.client("cloudformation"), f"trust-{uuid.uuid4().hex[:8]}"
    role_name = f"{name}-deploy"
    read_queues = {"Effect": "Allow", "Action": "sqs:ListQueues", "Resource": "*"}
    template = {
        "Resources": {
            "Deploy": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "RoleName": role_name,
                    "AssumeRolePolicyDocument": trust(allow({"AWS": ACCOUNT})),
                    "Policies": [
                        {
                            "PolicyName": "read-queues",
                            "PolicyDocument": {"Version": "2012-10-17", "Statement": [read_queues]},
                        }
                    ],
                    "ManagedPolicyArns": ["arn:aws:iam::aws:policy/AWSCloudFormationReadOnlyAccess"],
                },
            }
        }
    }
    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))
    role = f"arn:aws:iam::{ACCOUNT}:role/{role_name}"
    credentials = emulator.client("sts").assume_role(RoleArn=role, RoleSessionName="cdk-deploy")[
        "Credentials"
    ]
    env = emulator.aws_env()
    session = boto3.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        region_name=env["AWS_REGION"],
    )
    as_role = session.client("cloudformation", endpoint_url=env["AWS_ENDPOINT_URL"])
    assert as_role.describe_stacks(StackName=name)["Stacks"][0]["StackName"] == name
    listed = session.client("sqs", endpoint_url=env["AWS_ENDPOINT_URL"]).list_queues()
    assert listed["ResponseMetadata"]["HTTPStatusCode"] == 200
    found = refusal(lambda: as_role.delete_stack(StackName=name))
    assert (found["code"], found["status"]) == ("AccessDenied", 403)
    iam = emulator.client("iam")
    stored = iam.get_role_policy(RoleName=role_name, PolicyName="read-queues")["PolicyDocument"]
    assert stored["Statement"] == [read_queues]
    details = iam.get_account_authorization_details(Filter=["Role"])["RoleDetailList"]
    listed_policies = next(r["RolePolicyList"] for r in details if r["RoleName"] == role_name)
    assert [(p["PolicyName"], p["PolicyDocument"]["Statement"]) for p in listed_policies] == [
        ("read-queues", [read_queues])
    ]
    cloudformation.delete_stack(StackName=name)
    assert role_name not in [r["RoleName"] for r in emulator.client("iam").list_roles()["Roles"]]
