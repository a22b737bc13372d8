"""What of a stack is still there after it was destroyed, by service: `make demo` checks that
nothing is, and `make down` names what is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stacks.config import Names


def find_leftovers(client: Callable[[str], Any], prefix: str) -> dict[str, list[str]]:
    """Everything of the stack under `prefix` that still exists, by service (empty lists = clean)."""
    stack_name = Names(prefix).stack
    lambda_api, iam, logs, cloudwatch = (client(s) for s in ("lambda", "iam", "logs", "cloudwatch"))
    stacks = client("cloudformation").list_stacks()["StackSummaries"]
    return {
        "stacks": [
            s["StackName"]
            for s in stacks
            if s["StackName"] == stack_name and s["StackStatus"] != "DELETE_COMPLETE"
        ],
        "event source mappings": [
            m["UUID"]
            for m in lambda_api.list_event_source_mappings()["EventSourceMappings"]
            if m["FunctionArn"].split(":")[-1].startswith(prefix)
        ],
        "functions": [
            f["FunctionName"]
            for f in lambda_api.list_functions()["Functions"]
            if f["FunctionName"].startswith(prefix)
        ],
        "queues": [u for u in client("sqs").list_queues(QueueNamePrefix=prefix).get("QueueUrls", [])],
        "tables": [t for t in client("dynamodb").list_tables()["TableNames"] if t.startswith(prefix)],
        "roles": [r["RoleName"] for r in iam.list_roles()["Roles"] if r["RoleName"].startswith(stack_name)],
        "policies": [
            p["PolicyName"]
            for p in iam.list_policies(Scope="Local")["Policies"]
            if p["PolicyName"].startswith(prefix)
        ],
        "log groups": [
            g["logGroupName"]
            for group_prefix in (f"/aws/lambda/{prefix}", f"{prefix}-")
            for g in logs.describe_log_groups(logGroupNamePrefix=group_prefix)["logGroups"]
        ],
        "alarms": [
            a["AlarmName"] for a in cloudwatch.describe_alarms(AlarmNamePrefix=f"{prefix}-")["MetricAlarms"]
        ],
        "dashboards": [
            d["DashboardName"]
            for d in cloudwatch.list_dashboards(DashboardNamePrefix=prefix)["DashboardEntries"]
            if d["DashboardName"] == prefix
        ],
        "topics": [
            t["TopicArn"]
            for t in client("sns").list_topics()["Topics"]
            if t["TopicArn"].rsplit(":", 1)[-1].startswith(f"{prefix}-")
        ],
        "query definitions": [
            q["name"]
            for q in logs.describe_query_definitions(queryDefinitionNamePrefix=f"{prefix}/")[
                "queryDefinitions"
            ]
        ],
    }


def describe_leftovers(found: dict[str, list[str]]) -> str:
    """`kind: name, name; kind: name` for the kinds with something left ("" when nothing is)."""
    return "; ".join(f"{kind}: {', '.join(names)}" for kind, names in found.items() if names)
