"""Custom resources as CloudFormation drives them ("Custom resources", "Custom resource request
objects" in the CloudFormation User Guide): Create at stack create, Update with
OldResourceProperties when the properties change, each request after Create carrying the
PhysicalResourceId the function answered, a FAILED answer fails the stack update (with
its reason in the stack's events) and rolls it back, and Delete when the stack is deleted, before the function it
calls.
A small template of its own, created through the CloudFormation API; the function writes each
request it gets to its log group (made outside the stack, so it outlives it)."""

from __future__ import annotations

import json

import pytest
from test_lambda_host.functions import unique

from local.session import wait_for
from ops import observe
from tests.e2e.conftest import emulator, logs_statement, make_role  # noqa: F401 - the shared embedded AWS

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# Answers FAILED when asked to set the value "fail", SUCCESS otherwise.
PROBE = """
import json, urllib.request

def handler(event, context):
    print("REQUEST " + json.dumps({key: event.get(key) for key in
          ("RequestType", "ResourceProperties", "OldResourceProperties", "PhysicalResourceId")}))
    failed = event["RequestType"] != "Delete" and event["ResourceProperties"]["Value"] == "fail"
    body = json.dumps({"Status": "FAILED" if failed else "SUCCESS", "Reason": "asked to fail",
                       "PhysicalResourceId": "probe", "StackId": event["StackId"], "RequestId": event["RequestId"],
                       "LogicalResourceId": event["LogicalResourceId"], "Data": {"Echo": event["ResourceProperties"]["Value"]}})
    request = urllib.request.Request(event["ResponseURL"], data=body.encode(), method="PUT", headers={"Content-Type": ""})
    urllib.request.urlopen(request, timeout=10).read()
"""


def template(function_name: str, role_arn: str, value: str, visibility: int = 30, timeout: int = 10) -> str:
    return json.dumps(
        {
            "Resources": {
                "Fn": {
                    "Type": "AWS::Lambda::Function",
                    "Properties": {
                        "FunctionName": function_name,
                        "Runtime": "python3.14",
                        "Handler": "index.handler",
                        "Role": role_arn,
                        "Timeout": timeout,
                        "Code": {"ZipFile": PROBE + f"# timeout {timeout}\n"},
                    },
                },
                "Queue": {
                    "Type": "AWS::SQS::Queue",
                    "Properties": {"QueueName": f"{function_name}-q", "VisibilityTimeout": visibility},
                },
                "Probe": {
                    "Type": "Custom::Probe",
                    "Properties": {"ServiceToken": {"Fn::GetAtt": ["Fn", "Arn"]}, "Value": value},
                },
            },
            "Outputs": {"Echo": {"Value": {"Fn::GetAtt": ["Probe", "Echo"]}}},
        }
    )


def requests(emulator, function_name: str) -> list[dict]:
    events = observe.log_events(emulator.client("logs"), f"/aws/lambda/{function_name}")
    return [
        json.loads(e["message"][len("REQUEST ") :]) for e in events if e["message"].startswith("REQUEST ")
    ]


def test_create_update_failed_update_and_delete_reach_the_function(emulator):
    name = unique("cr-probe")
    role = make_role(emulator, f"{name}-role", [logs_statement(name)])
    emulator.client("logs").create_log_group(logGroupName=f"/aws/lambda/{name}")
    cloudformation = emulator.client("cloudformation")

    def status() -> str:
        current: str = cloudformation.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
        return current

    stack_id = cloudformation.create_stack(StackName=name, TemplateBody=template(name, role, "v1"))["StackId"]
    wait_for(lambda: status() == "CREATE_COMPLETE", timeout=30, what="the stack to be created")
    # The function's inline code and timeout change too (moto could not update inline code).
    cloudformation.update_stack(StackName=name, TemplateBody=template(name, role, "v2", timeout=12))
    wait_for(lambda: status() == "UPDATE_COMPLETE", timeout=30, what="the stack to be updated")
    assert emulator.client("lambda").get_function_configuration(FunctionName=name)["Timeout"] == 12
    outputs = {
        o["OutputKey"]: o["OutputValue"]
        for o in cloudformation.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]
    }
    assert outputs["Echo"] == "v2"
    seen = [
        (r["RequestType"], r["ResourceProperties"]["Value"], (r["OldResourceProperties"] or {}).get("Value"))
        for r in requests(emulator, name)
    ]
    assert seen == [("Create", "v1", None), ("Update", "v2", "v1")]

    # A failing update that also changes a queue: rolled back, the queue's change too.
    cloudformation.update_stack(
        StackName=name, TemplateBody=template(name, role, "fail", visibility=60, timeout=12)
    )
    wait_for(lambda: status() == "UPDATE_ROLLBACK_COMPLETE", timeout=30, what="the update to roll back")
    events = cloudformation.describe_stack_events(StackName=name)["StackEvents"]
    (failed,) = [e for e in events if e["ResourceStatus"] == "UPDATE_FAILED"]
    assert "asked to fail" in failed["ResourceStatusReason"]
    assert failed["LogicalResourceId"] == "Probe" and failed["PhysicalResourceId"] == "probe"
    assert failed["ResourceStatusReason"].startswith(
        "Received response status [FAILED] from custom resource."
    )
    sqs = emulator.client("sqs")
    queue = sqs.get_queue_attributes(
        QueueUrl=sqs.get_queue_url(QueueName=f"{name}-q")["QueueUrl"], AttributeNames=["VisibilityTimeout"]
    )["Attributes"]
    assert queue["VisibilityTimeout"] == "30"
    outputs = {
        o["OutputKey"]: o["OutputValue"]
        for o in cloudformation.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]
    }
    assert outputs["Echo"] == "v2"

    cloudformation.delete_stack(StackName=name)
    wait_for(
        lambda: "Delete" in [r["RequestType"] for r in requests(emulator, name)],
        timeout=30,
        what="the Delete request",
    )
    assert [r["RequestType"] for r in requests(emulator, name)] == ["Create", "Update", "Update", "Delete"]
    deleted = cloudformation.describe_stacks(StackName=stack_id)["Stacks"][0]  # by id: deleted stacks too
    assert deleted["StackStatus"] == "DELETE_COMPLETE" and "Outputs" not in deleted
    assert {r["PhysicalResourceId"] for r in requests(emulator, name)[1:]} == {
        "probe"
    }  # the id Create answered
    assert name not in [f["FunctionName"] for f in emulator.client("lambda").list_functions()["Functions"]]


def test_a_failed_create_rolls_the_stack_back(emulator):
    """FAILED at create: CREATE_FAILED with the answer's reason, then ROLLBACK_COMPLETE; the
    rollback sends the custom resource a Delete and deletes the function."""
    name = unique("cr-fail")
    role = make_role(emulator, f"{name}-role", [logs_statement(name)])
    emulator.client("logs").create_log_group(logGroupName=f"/aws/lambda/{name}")
    cloudformation = emulator.client("cloudformation")
    stack_id = cloudformation.create_stack(StackName=name, TemplateBody=template(name, role, "fail"))[
        "StackId"
    ]

    def status() -> str:
        current: str = cloudformation.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"]
        return current

    wait_for(lambda: status() == "ROLLBACK_COMPLETE", timeout=30, what="the stack to roll back")
    assert "Outputs" not in cloudformation.describe_stacks(StackName=stack_id)["Stacks"][0]
    events = cloudformation.describe_stack_events(StackName=stack_id)["StackEvents"]
    (failed,) = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
    assert "asked to fail" in failed["ResourceStatusReason"]
    assert failed["LogicalResourceId"] == "Probe" and failed["ResourceType"] == "Custom::Probe"
    assert failed["ResourceStatusReason"].startswith(
        "Received response status [FAILED] from custom resource."
    )
    assert [r["RequestType"] for r in requests(emulator, name)] == ["Create", "Delete"]
    assert name not in [f["FunctionName"] for f in emulator.client("lambda").list_functions()["Functions"]]


# Answers its Create only after a while, as a slow provider does.
SLOW_PROBE = PROBE.replace(
    "def handler(event, context):", "def handler(event, context):\n    import time\n    time.sleep(2)"
).replace(
    "urllib.request.urlopen(request, timeout=10).read()",
    'urllib.request.urlopen(request, timeout=10).read()\n    print("ANSWERED " + event["RequestType"])',
)


def test_an_answer_to_a_create_an_update_added_leaves_the_updated_stack_updated(emulator):
    """A custom resource added by an update whose Create is answered after the update finished:
    the stack stays UPDATE_COMPLETE (moto marked any stack CREATE_COMPLETE on a Create answer,
    which a redeploy test met on a loaded machine)."""
    name = unique("cr-late")
    role = make_role(emulator, f"{name}-role", [logs_statement(name)])
    emulator.client("logs").create_log_group(logGroupName=f"/aws/lambda/{name}")
    cloudformation = emulator.client("cloudformation")
    full = json.loads(template(name, role, "v1"))
    full["Resources"]["Fn"]["Properties"]["Code"]["ZipFile"] = SLOW_PROBE
    without = {"Resources": {k: v for k, v in full["Resources"].items() if k != "Probe"}}

    def status() -> str:
        current: str = cloudformation.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
        return current

    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(without))
    wait_for(lambda: status() == "CREATE_COMPLETE", timeout=30, what="the stack to be created")
    cloudformation.update_stack(StackName=name, TemplateBody=json.dumps({"Resources": full["Resources"]}))
    wait_for(lambda: status() == "UPDATE_COMPLETE", timeout=30, what="the stack to be updated")
    wait_for(
        lambda: any(
            e["message"].startswith("ANSWERED Create")
            for e in observe.log_events(emulator.client("logs"), f"/aws/lambda/{name}")
        ),
        timeout=30,
        what="the late answer to the Create",
    )
    assert status() == "UPDATE_COMPLETE"
    cloudformation.delete_stack(StackName=name)
