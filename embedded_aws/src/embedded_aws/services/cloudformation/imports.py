"""Resource import as CloudFormation does it, for the types whose existing resources the emulator
can find (a table, a queue, a log group): an IMPORT change set (`ResourcesToImport`, what `cdk
import` sends) and `ImportExistingResources` (what `cdk deploy --import-existing-resources`
sends) bind a logical resource of the stack to a resource that exists, instead of creating it.

AWS's rules, from the pages "Import AWS resources into a CloudFormation stack manually" and
"Import AWS resources into a CloudFormation stack automatically", with the words of AWS's errors as
users recorded them: "The following resources to import [X] must have DeletionPolicy attribute
specified in the template." (aws-quickstart/quickstart-awx#38, awsdocs/elastic-beanstalk-samples
#168); "As part of the import operation, you cannot modify or add [Outputs]"
(awslabs/aws-security-assessment-solution#6); "You have modified resources [..] in your template
that are not being imported. Update, create or delete operations cannot be executed during import
operations.", "ResourceTypes [..] are not supported for Import" and "<id> already exists in stack
<stack arn>" (a blog post quoting the console); and the automatic import's failure, "CloudFormation
is attempting to import some resources because they already exist in your account. ..." (quoted by
aws/aws-cdk-cli's stack-diagnoser.ts, which parses it). The words for a resource that does not
exist are ours: no recording of AWS's was found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

RETAINED = ("Retain", "RetainExceptOnCreate")


@dataclass(frozen=True)
class Importable:
    """A resource type that can be imported: its primary identifier, whether that identifier is
    read-only (then it is not in a template, and an automatic import cannot use it), and how to
    find the existing resource by its value."""

    identifier: str
    read_only: bool
    find: Callable[[str, str, str], Any]  # (value, account, region) -> the moto model, or None


def _table(name: str, account: str, region: str) -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[account][region].tables.get(name)


def _queue(url: str, account: str, region: str) -> Any:
    from moto.sqs.models import sqs_backends

    return sqs_backends[account][region].queues.get(url.rstrip("/").rsplit("/", 1)[-1])


def _log_group(name: str, account: str, region: str) -> Any:
    from moto.logs.models import logs_backends

    return logs_backends[account][region].groups.get(name)


# The types' primary identifiers, as in their CloudFormation resource schemas (QueueUrl is a
# read-only property of AWS::SQS::Queue; TableName and LogGroupName are create-only).
IMPORTABLE = {
    "AWS::DynamoDB::Table": Importable("TableName", read_only=False, find=_table),
    "AWS::SQS::Queue": Importable("QueueUrl", read_only=True, find=_queue),
    "AWS::Logs::LogGroup": Importable("LogGroupName", read_only=False, find=_log_group),
}


class QueueExists(Exception):
    """A queue of that name exists: CloudFormation creates a queue, it does not adopt one."""

    code = "AlreadyExists"

    def __init__(self, name: str) -> None:
        self.message = f"Queue {name} already exists"
        super().__init__(self.message)


def refuse_existing_queue(name: str, account: str, region: str) -> None:
    """Raise QueueExists when the queue a stack would create exists. SQS's CreateQueue answers a
    queue of the same name and attributes with its URL, so moto's CloudFormation took an existing
    queue (one a destroyed stack retained) for one it created; AWS fails the create ("Resource of
    type 'AWS::SQS::Queue' ... already exists"), which is why automatic import matters."""
    if name and _queue(name, account, region) is not None:
        raise QueueExists(name)


class ImportRefused(Exception):
    """CreateChangeSet refuses the import: the ValidationError's message."""


def identifier_summaries(resources: dict[str, Any]) -> list[dict[str, Any]]:
    """GetTemplateSummary's ResourceIdentifierSummaries: per importable type of the template, its
    logical ids and the property that identifies one (the CDK CLI's `cdk import` asks for these)."""
    by_type: dict[str, list[str]] = {}
    for logical_id, resource in resources.items():
        if isinstance(resource, dict) and resource.get("Type") in IMPORTABLE:
            by_type.setdefault(resource["Type"], []).append(logical_id)
    return [
        {
            "ResourceType": resource_type,
            "LogicalResourceIds": logical_ids,
            "ResourceIdentifiers": [IMPORTABLE[resource_type].identifier],
        }
        for resource_type, logical_ids in by_type.items()
    ]


def owner(model: Any, resource_type: str, account: str, region: str, but: Any = None) -> Any:
    """The live stack (other than `but`) that manages `model`, or None. A stack that was deleted or
    rolled back after a failed create manages nothing: what it retained is no longer its own."""
    from moto.cloudformation.models import cloudformation_backends

    physical_id = model.physical_resource_id
    for stack in cloudformation_backends[account][region].stacks.values():
        if stack is but or stack.status in ("DELETE_COMPLETE", "ROLLBACK_COMPLETE", "REVIEW_IN_PROGRESS"):
            continue
        resource_map = stack.resource_map
        for logical_id, resource in resource_map._parsed_resources.items():
            templated = resource_map._resource_json_map.get(logical_id)
            if not isinstance(templated, dict) or templated.get("Type") != resource_type:
                continue
            if resource is model or getattr(resource, "physical_resource_id", None) == physical_id:
                return stack
    return None


def _listed(names: Iterable[str]) -> str:
    return ", ".join(names)


def check_import(
    stack: Any, template: dict[str, Any], resources_to_import: list[dict[str, Any]]
) -> dict[str, Any]:
    """The existing resources an IMPORT change set binds, by logical id; raises ImportRefused in
    AWS's words when the import breaks one of its rules."""
    resources = template.get("Resources") or {}
    current = stack.template_dict or {}
    before = current.get("Resources") or {}
    wanted = {entry["LogicalResourceId"]: entry for entry in resources_to_import}

    unsupported = sorted({entry["ResourceType"] for entry in wanted.values()} - set(IMPORTABLE))
    if unsupported:
        raise ImportRefused(f"ResourceTypes [{_listed(unsupported)}] are not supported for Import")
    absent = [
        logical_id
        for logical_id, entry in wanted.items()
        if resources.get(logical_id, {}).get("Type") != entry["ResourceType"]
    ]
    if absent:
        raise ImportRefused(
            f"Resources [{_listed(absent)}] to import are not in the template with the type given"
        )
    unprotected = [logical_id for logical_id in wanted if "DeletionPolicy" not in resources[logical_id]]
    if unprotected:
        raise ImportRefused(
            f"The following resources to import [{_listed(unprotected)}] must have DeletionPolicy "
            "attribute specified in the template."
        )
    changed = [
        logical_id
        for logical_id in {**before, **resources}
        if logical_id not in wanted and resources.get(logical_id) != before.get(logical_id)
    ]
    if changed:
        raise ImportRefused(
            f"You have modified resources [{_listed(changed)}] in your template that are not being "
            "imported. Update, create or delete operations cannot be executed during import operations."
        )
    if (template.get("Outputs") or {}) != (current.get("Outputs") or {}):
        raise ImportRefused("As part of the import operation, you cannot modify or add [Outputs]")

    found: dict[str, Any] = {}
    for logical_id, entry in wanted.items():
        importable = IMPORTABLE[entry["ResourceType"]]
        value = (entry.get("ResourceIdentifier") or {}).get(importable.identifier)
        if not isinstance(value, str) or not value:
            raise ImportRefused(
                f"ResourceIdentifier of {logical_id} must give {importable.identifier} for {entry['ResourceType']}"
            )
        model = importable.find(value, stack.account_id, stack.region_name)
        if model is None:
            raise ImportRefused(
                f"Resource {logical_id} of type {entry['ResourceType']} to import does not exist: "
                f"{{{importable.identifier}={value}}}"
            )
        other = owner(model, entry["ResourceType"], stack.account_id, stack.region_name, but=stack)
        if other is not None:
            raise ImportRefused(f"{value} already exists in stack {other.stack_id}")
        found[logical_id] = model
    return found


def automatic_imports(
    stack: Any, template: dict[str, Any], added: Iterable[str]
) -> tuple[dict[str, Any], str]:
    """What `ImportExistingResources` imports among the `added` resources: those of an importable
    type, named statically by a primary identifier that is not read-only, that exist, are in no
    other stack and are retained. Returns them by logical id, and the change set's failure reason
    ("" if none) when such a resource exists but is not retained."""
    resources = template.get("Resources") or {}
    imports: dict[str, Any] = {}
    unretained: list[str] = []
    for logical_id in added:
        resource = resources[logical_id]
        importable = IMPORTABLE.get(resource.get("Type", ""))
        if importable is None or importable.read_only:
            continue
        value = (resource.get("Properties") or {}).get(importable.identifier)
        if not isinstance(value, str):  # no name, or one made by a function: not imported
            continue
        model = importable.find(value, stack.account_id, stack.region_name)
        if model is None or owner(model, resource["Type"], stack.account_id, stack.region_name, but=stack):
            continue
        if resource.get("DeletionPolicy") in RETAINED:
            imports[logical_id] = model
        else:
            unretained.append(f"{logical_id} ({{{importable.identifier}={value}}})")
    if not unretained:
        return imports, ""
    return imports, (
        "CloudFormation is attempting to import some resources because they already exist in your "
        "account. The resources must have the DeletionPolicy attribute set to 'Retain' or "
        "'RetainExceptOnCreate' in the template for successful import. The affected resources are "
        + ", ".join(unretained)
    )


def bind(
    stack: Any, imports: dict[str, Any], template: dict[str, Any]
) -> list[tuple[str, str, str, str, str]]:
    """Make each imported resource the stack's own under its logical id (moto then finds it instead
    of creating it); returns the resource events of the import, (logical id, type, physical id,
    status, reason), as CloudFormation logs them."""
    events = []
    for logical_id, model in imports.items():
        resource_type = template["Resources"][logical_id]["Type"]
        model.logical_resource_id, model.cf_resource_type = logical_id, resource_type
        stack.resource_map._parsed_resources[logical_id] = model
        physical_id = str(model.physical_resource_id)
        events.append(
            (logical_id, resource_type, physical_id, "IMPORT_IN_PROGRESS", "Resource import started.")
        )
        events.append(
            (logical_id, resource_type, physical_id, "IMPORT_COMPLETE", "Resource import completed.")
        )
    return events
