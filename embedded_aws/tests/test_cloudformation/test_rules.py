"""A template's Rules and parameters checked as CloudFormation checks them before it starts
("Rules syntax", "Rule functions"): CDK's bootstrap-version rule against the SSM parameter, a rule
condition, a function the local CloudFormation cannot evaluate refused rather than passed, an
SSM parameter that does not exist, and UsePreviousValue of a parameter left at its SSM default
(moto answered a 500). Pure cases first, then CreateStack, UpdateStack and CreateChangeSet in the
shared embedded AWS."""

from __future__ import annotations

import json
import uuid

import pytest
from botocore.exceptions import ClientError

from embedded_aws.services.cloudformation.preflight import Invalid, parameter_values
from embedded_aws.services.cloudformation.rules import RuleFailed, check
from local.session import wait_for
from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS

DESCRIPTION = (
    "CDK bootstrap stack version 6 required. Please run 'cdk bootstrap' with a recent version of the CDK CLI."
)
BOOTSTRAP_RULE = {
    "CheckBootstrapVersion": {
        "Assertions": [
            {
                "Assert": {
                    "Fn::Not": [{"Fn::Contains": [["1", "2", "3", "4", "5"], {"Ref": "BootstrapVersion"}]}]
                },
                "AssertDescription": DESCRIPTION,
            }
        ]
    }
}


def cdk_template(version_parameter: str) -> dict:
    """A template with CDK's bootstrap-version parameter and rule, as `cdk synth` writes them."""
    return {
        "Parameters": {
            "BootstrapVersion": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": version_parameter}
        },
        "Rules": BOOTSTRAP_RULE,
        "Resources": {"Jobs": {"Type": "AWS::SQS::Queue"}},
    }


@pytest.mark.parametrize("version, passes", [("21", True), ("6", True), ("5", False), ("1", False)])
def test_cdk_bootstrap_version_rule(version, passes):
    """Versions 1-5 fail CDK's assertion with its AssertDescription; later ones pass."""
    if passes:
        check({"Rules": BOOTSTRAP_RULE}, {"BootstrapVersion": version})
    else:
        with pytest.raises(RuleFailed, match=r"^CDK bootstrap stack version 6 required\."):
            check({"Rules": BOOTSTRAP_RULE}, {"BootstrapVersion": version})


def test_a_rule_whose_condition_is_false_asserts_nothing():
    """Assertions apply only when the RuleCondition holds (Fn::Equals, Fn::And, Fn::Or)."""
    rule = {
        "ProdOnly": {
            "RuleCondition": {
                "Fn::And": [{"Fn::Equals": [{"Ref": "Env"}, "prod"]}, {"Fn::Or": [True, False]}]
            },
            "Assertions": [
                {"Assert": {"Fn::EachMemberIn": [{"Ref": "Sizes"}, ["large"]]}, "AssertDescription": "big"}
            ],
        }
    }
    check({"Rules": rule}, {"Env": "test", "Sizes": ["small"]})
    with pytest.raises(RuleFailed, match="^big$"):
        check({"Rules": rule}, {"Env": "prod", "Sizes": ["small"]})


def test_a_rule_function_the_local_cloudformation_cannot_evaluate_is_refused():
    """Fn::ValueOf looks up EC2 resources: refused in one line naming it, never passed."""
    rule = {
        "R": {"Assertions": [{"Assert": {"Fn::Equals": [{"Fn::ValueOf": ["Subnet", "VpcId"]}, "vpc-1"]}}]}
    }
    with pytest.raises(RuleFailed, match="cannot evaluate rule function Fn::ValueOf"):
        check({"Rules": rule}, {})


def test_parameter_values_resolve_ssm_previous_and_defaults():
    """An SSM type reads the store, UsePreviousValue the previous value, else the default; an SSM
    name that does not exist and a parameter with no value are refused in AWS's words."""
    declared = {
        "Version": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/v"},
        "Kept": {"Type": "String"},
        "Sizes": {"Type": "CommaDelimitedList", "Default": "a,b"},
    }
    store = {"/v": "21", "/other": "7"}
    values = parameter_values(
        declared, [{"ParameterKey": "Kept", "UsePreviousValue": True}], lambda name: "old", store.get
    )
    assert values == {"Version": "21", "Kept": "old", "Sizes": ["a", "b"]}
    with pytest.raises(
        Invalid, match=r"^Unable to fetch parameters \[/gone\] from parameter store for this account\.$"
    ):
        parameter_values(
            declared,
            [
                {"ParameterKey": "Version", "ParameterValue": "/gone"},
                {"ParameterKey": "Kept", "ParameterValue": "k"},
            ],
            lambda name: None,
            store.get,
        )
    with pytest.raises(Invalid, match=r"^Parameters: \[Kept\] must have values$"):
        parameter_values(declared, [], lambda name: None, store.get)


# --- in the shared embedded AWS ----------------------------------------------------------


def _refused(call) -> tuple[str, str]:
    with pytest.raises(ClientError) as raised:
        call()
    return raised.value.response["Error"]["Code"], raised.value.response["Error"]["Message"]


def _settled(cloudformation, name: str) -> str:
    settled: str | None = wait_for(
        lambda: (
            status
            if not (
                status := cloudformation.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
            ).endswith("IN_PROGRESS")
            else None
        ),
        timeout=30,
        what=f"stack {name} to settle",
    )
    assert settled is not None  # wait_for returns only a truthy value
    return settled


@pytest.mark.e2e
def test_the_bootstrap_rule_is_evaluated_on_create_update_and_change_set(emulator):
    """CreateStack is refused with the AssertDescription while the SSM version is 5 and succeeds
    once it is 21; UpdateStack and an UPDATE change set reusing the parameter (UsePreviousValue,
    as the CDK CLI sends it) succeed, and are refused again when the version goes back to 5."""
    ssm, cloudformation = emulator.client("ssm"), emulator.client("cloudformation")
    version, name = f"/cfnroles-{uuid.uuid4().hex[:8]}/version", f"rules-{uuid.uuid4().hex[:8]}"
    ssm.put_parameter(Name=version, Value="5", Type="String")
    body = json.dumps(cdk_template(version))
    assert _refused(lambda: cloudformation.create_stack(StackName=name, TemplateBody=body)) == (
        "ValidationError",
        DESCRIPTION,
    )
    ssm.put_parameter(Name=version, Value="21", Type="String", Overwrite=True)
    cloudformation.create_stack(StackName=name, TemplateBody=body)
    assert _settled(cloudformation, name) == "CREATE_COMPLETE"

    updated = cdk_template(version)
    updated["Resources"]["Other"] = {"Type": "AWS::SQS::Queue"}
    previous = [{"ParameterKey": "BootstrapVersion", "UsePreviousValue": True}]
    cloudformation.update_stack(StackName=name, TemplateBody=json.dumps(updated), Parameters=previous)
    assert _settled(cloudformation, name) == "UPDATE_COMPLETE"
    cloudformation.create_change_set(
        StackName=name, ChangeSetName="again", ChangeSetType="UPDATE", TemplateBody=body, Parameters=previous
    )

    ssm.put_parameter(Name=version, Value="5", Type="String", Overwrite=True)
    assert _refused(
        lambda: cloudformation.create_change_set(
            StackName=name,
            ChangeSetName="old",
            ChangeSetType="UPDATE",
            TemplateBody=body,
            Parameters=previous,
        )
    ) == ("ValidationError", DESCRIPTION)
    cloudformation.delete_stack(StackName=name)


@pytest.mark.e2e
def test_an_ssm_parameter_that_does_not_exist_refuses_the_stack(emulator):
    """A template whose SSM parameter type names a parameter the store lacks (an account never
    bootstrapped) is refused with CloudFormation's words, by CreateStack and CreateChangeSet."""
    cloudformation = emulator.client("cloudformation")
    missing = f"/cfnroles-{uuid.uuid4().hex[:8]}/version"
    body = json.dumps(cdk_template(missing))
    expected = (
        "ValidationError",
        f"Unable to fetch parameters [{missing}] from parameter store for this account.",
    )
    name = f"rules-{uuid.uuid4().hex[:8]}"
    assert _refused(lambda: cloudformation.create_stack(StackName=name, TemplateBody=body)) == expected
    assert (
        _refused(
            lambda: cloudformation.create_change_set(
                StackName=name, ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=body
            )
        )
        == expected
    )
