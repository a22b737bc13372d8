"""CloudFormation change sets as the CDK CLI's default deploy (and `cdk import`) drives them:
CreateChangeSet (CREATE, UPDATE and IMPORT, `ImportExistingResources`), DescribeChangeSet with the
resource changes computed from the old and new template, ExecuteChangeSet that leaves the stack
with its new template, parameters and outputs, and DeleteChangeSet and DescribeChangeSet answering
as AWS does when the change set or its stack is not there.

AWS's answers, as LocalStack recorded them on AWS (tests/aws/services/cloudformation/api/
test_changesets.snapshot.json): a change set that changes nothing is FAILED with "The submitted
information didn't contain changes. Submit different information to create a change set.", and
executing it is InvalidChangeSetStatus "ChangeSet [<arn>] cannot be executed in its current status
of [FAILED]"; a missing change set is ChangeSetNotFound (404) "ChangeSet [<name>] does not exist";
a missing stack is ValidationError "Stack [<name>] does not exist"; a name that is not an ARN
without a stack is ValidationError "StackName must be specified if ChangeSetName is not specified
as an ARN."; a CREATE change set for a stack that exists is ValidationError "Stack [<name>] already
exists and cannot be created again with the changeSet [<name>].". DeleteChangeSet of a change set
that is not there, on a stack that is, succeeds: the CDK CLI deletes `cdk-deploy-change-set` before
every deploy of an existing stack without catching an error (LocalStack's provider answers the
same). Executing a change set deletes the stack's other change sets (the ExecuteChangeSet API
reference: they are no longer valid for the updated stack).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from embedded_aws.compat import new_objects
from embedded_aws.compat.internals import (
    ADD_STACK_EVENT,
    CHANGE_SET_STATE,
    CREATE_OUTPUT_MAP,
    EVENT_TIMESTAMP,
    GET_BOOL_PARAM,
    GET_PARAM,
    PARSE_TEMPLATE,
    PARSED_RESOURCES,
    RESOURCE_JSON,
    STACK_FROM_S3_URL,
    STACK_STATE,
)
from embedded_aws.compat.registry import T, declare, states
from embedded_aws.services.cloudformation import imports
from embedded_aws.services.cloudformation.create_only import CREATE_ONLY
from embedded_aws.services.cloudformation.resource_failures import add_resource_event

if TYPE_CHECKING:
    from moto.core.responses import ActionResult, EmptyResult

NO_CHANGES = (
    "The submitted information didn't contain changes. Submit different information to create a change set."
)

# Properties whose change replaces the resource, beyond those the type's resource schema lists as
# create-only (create_only.py): the AWS::DynamoDB::Table page of the CloudFormation template
# reference says "Update requires: Replacement" for these, the schema does not list them.
REPLACING_BEYOND_SCHEMA = {"AWS::DynamoDB::Table": ("KeySchema", "LocalSecondaryIndexes")}


def replacing(resource_type: str) -> set[str]:
    """The properties of `resource_type` whose change replaces the resource (CloudFormation's
    rules for the type: none for a type it has no schema of, such as a custom resource)."""
    return {*CREATE_ONLY.get(resource_type, ()), *REPLACING_BEYOND_SCHEMA.get(resource_type, ())}


def _error(code: str, message: str) -> Exception:
    from moto.cloudformation.exceptions import CloudFormationError

    return CloudFormationError(code, message)


def validation_error(message: str) -> Exception:
    return _error("ValidationError", message)


def find_stack(backend: Any, name_or_id: str) -> Any:
    """The live stack of that name or id (a deleted one only by its id), or None."""
    if name_or_id in backend.stacks:
        return backend.stacks[name_or_id]
    if name_or_id in backend.deleted_stacks:
        return backend.deleted_stacks[name_or_id]
    return next((stack for stack in backend.stacks.values() if stack.name == name_or_id), None)


def find_change_set(backend: Any, name_or_arn: str, stack_name: str | None) -> Any:
    """The change set named (by ARN, or by name on the stack), or None; raises as AWS does when
    the stack is not named or not there."""
    if name_or_arn.startswith("arn:"):
        return backend.change_sets.get(name_or_arn)
    if not stack_name:
        raise validation_error("StackName must be specified if ChangeSetName is not specified as an ARN.")
    stack = find_stack(backend, stack_name)
    if stack is None:
        raise validation_error(f"Stack [{stack_name}] does not exist")
    named = [
        change_set
        for change_set in backend.change_sets.values()
        if change_set.stack_id == stack.stack_id and change_set.change_set_name == name_or_arn
    ]
    return named[-1] if named else None


def changed_attributes(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The resource attributes (Properties, Metadata, ...) and the properties that differ."""
    attributes = sorted(key for key in {**old, **new} if key != "Type" and old.get(key) != new.get(key))
    old_properties, new_properties = old.get("Properties") or {}, new.get("Properties") or {}
    properties = sorted(
        name
        for name in {**old_properties, **new_properties}
        if old_properties.get(name) != new_properties.get(name)
    )
    return attributes, properties


def resource_changes(
    stack: Any, template: dict[str, Any], parameters: dict[str, Any], imported: dict[str, Any]
) -> list[dict[str, Any]]:
    """DescribeChangeSet's Changes: each resource the change set adds, imports, modifies (with
    whether that replaces it) or removes, as the ResourceChange of a change of Type Resource
    (moto's serializer wraps each)."""
    resource_map = stack.resource_map
    old, new = resource_map._resource_json_map or {}, template.get("Resources") or {}
    actions = resource_map.build_resource_diff(template, parameters or None)

    def physical_id(logical_id: str) -> str | None:
        resource = resource_map._parsed_resources.get(logical_id)
        value = getattr(resource, "physical_resource_id", None)
        return str(value) if value is not None else None

    changes = []
    for logical_id in actions["Add"]:
        resource_type = new[logical_id]["Type"]
        change: dict[str, Any] = {"LogicalResourceId": logical_id, "ResourceType": resource_type}
        if logical_id in imported:
            change.update(Action="Import", PhysicalResourceId=str(imported[logical_id].physical_resource_id))
        else:
            change["Action"] = "Add"
        changes.append({**change, "Scope": [], "Details": []})
    for logical_id in dict.fromkeys(actions["Modify"]):
        resource_type = new[logical_id]["Type"]
        attributes, properties = changed_attributes(old[logical_id], new[logical_id])
        replaced_by = replacing(resource_type)
        replaced = any(name in replaced_by for name in properties)
        details = [
            {
                "Target": {
                    "Attribute": "Properties",
                    "Name": name,
                    "RequiresRecreation": "Always" if name in replaced_by else "Never",
                },
                "Evaluation": "Static",
                "ChangeSource": "DirectModification",
            }
            for name in properties
        ]
        change = {
            "Action": "Modify",
            "LogicalResourceId": logical_id,
            "PhysicalResourceId": physical_id(logical_id),
            "ResourceType": resource_type,
            "Replacement": "True" if replaced else "False",
            "Scope": attributes or ["Properties"],
            "Details": details,
        }
        if replaced:
            retain = new[logical_id].get("UpdateReplacePolicy") == "Retain"
            change["PolicyAction"] = "ReplaceAndRetain" if retain else "ReplaceAndDelete"
        changes.append(change)
    for logical_id in actions["Remove"]:
        changes.append(
            {
                "Action": "Remove",
                "LogicalResourceId": logical_id,
                "PhysicalResourceId": physical_id(logical_id),
                "ResourceType": old[logical_id]["Type"],
                "PolicyAction": "Retain"
                if old[logical_id].get("DeletionPolicy") in imports.RETAINED
                else "Delete",
                "Scope": [],
                "Details": [],
            }
        )
    return [{key: value for key, value in change.items() if value is not None} for change in changes]


def new_stack(backend: Any, name: str, parameters: dict[str, Any], **settings: Any) -> Any:
    """A stack in REVIEW_IN_PROGRESS for a CREATE or IMPORT change set, as moto makes one."""
    from moto.cloudformation.models import Stack
    from moto.cloudformation.utils import generate_stack_id

    stack = Stack(  # type: ignore[abstract]  # moto instantiates it the same way
        stack_id=generate_stack_id(name, backend.region_name, backend.account_id),
        name=name,
        template={},
        parameters=parameters,
        account_id=backend.account_id,
        region_name=backend.region_name,
        **settings,
    )
    backend.stacks[stack.stack_id] = stack
    stack.status = "REVIEW_IN_PROGRESS"
    stack._add_stack_event("REVIEW_IN_PROGRESS", resource_status_reason="User Initiated")
    return stack


def describe(change_set: Any) -> dict[str, Any]:
    """DescribeChangeSet's answer."""
    described = {
        "ChangeSetName": change_set.change_set_name,
        "ChangeSetId": change_set.change_set_id,
        "StackId": change_set.stack_id,
        "StackName": change_set.stack_name,
        "Description": change_set.description,
        "Parameters": dict(change_set.parameters or {}),  # moto's serializer makes it AWS's list
        "CreationTime": change_set.creation_time,
        "ExecutionStatus": change_set.execution_status,
        "Status": change_set.status,
        "StatusReason": change_set.status_reason,
        "NotificationARNs": change_set.notification_arns or [],
        "RollbackConfiguration": {},
        "Capabilities": change_set.capabilities,
        "Tags": [{"Key": k, "Value": v} for k, v in (change_set.tags or {}).items()],
        "Changes": change_set.resource_changes,
        "IncludeNestedStacks": False,
        "ImportExistingResources": change_set.import_existing_resources,
    }
    return {key: value for key, value in described.items() if value is not None}


def _record_events(stack: Any, after: int, events: list[tuple[str, str, str, str, str]]) -> None:
    """The import's resource events, placed right after the stack's own IN_PROGRESS event (the
    event at index `after`), in time order with what follows."""
    from embedded_aws.services.cloudformation.resource_failures import _spread_in_time

    later = stack.events[after + 1 :]
    del stack.events[after + 1 :]
    for logical_id, resource_type, physical_id, status, reason in events:
        add_resource_event(stack, logical_id, resource_type, physical_id, status, reason)
    if events and after < len(stack.events):
        for event in stack.events[after + 1 :]:
            event.timestamp = stack.events[after].timestamp
    stack.events.extend(later)
    _spread_in_time(stack)


def finish(backend: Any, change_set: Any) -> None:
    """After a change set was applied: the stack has the change set's template, parameters,
    outputs and exports (moto kept the old ones, so a created stack had no outputs), and the
    stack's other change sets are gone."""
    stack = change_set.stack
    stack.template = change_set.template
    stack._parse_template()
    stack.description = stack.template_dict.get("Description")
    if change_set.parameters:
        stack.parameters = change_set.parameters
    stack.output_map = stack._create_output_map()
    for export in stack.exports:
        backend.exports[export.name] = export
    for change_set_id, other in list(backend.change_sets.items()):
        if other.stack_id == stack.stack_id and other is not change_set:
            del backend.change_sets[change_set_id]


def execute(backend: Any, change_set: Any) -> None:
    """Apply the change set: an IMPORT binds its resources; CREATE and UPDATE run as moto runs them
    (with the rollbacks of resource_failures.py), the resources they import bound first."""
    stack = change_set.stack
    template = change_set.template_dict
    if change_set.change_set_type == "IMPORT":
        stack.status = "IMPORT_IN_PROGRESS"
        stack._add_stack_event("IMPORT_IN_PROGRESS", resource_status_reason="User Initiated")
        start = len(stack.events) - 1
        events = imports.bind(stack, change_set.imports, template)
        stack.resource_map.update(template, change_set.parameters or None)
        _record_events(stack, start, events)
        finish(backend, change_set)
        stack.status = "IMPORT_COMPLETE"
        stack._add_stack_event("IMPORT_COMPLETE")
        change_set.execution_status = "EXECUTE_COMPLETE"
        return
    start = len(stack.events)
    events = imports.bind(stack, change_set.imports, template)
    stack.status = f"{change_set.change_set_type}_IN_PROGRESS"
    backend.execute_change_set(change_set.change_set_id)
    _record_events(stack, start, events)
    if stack.status == f"{change_set.change_set_type}_COMPLETE":
        finish(backend, change_set)


def change_set_refusal(kind: str, stack_name: str, name: str, stack: Any) -> str | None:
    """Why AWS refuses a change set of `kind` for `stack` (None: no live stack of that name), or
    None when it does not."""
    if kind == "UPDATE" and stack is None:
        return f"Stack [{stack_name}] does not exist"
    if kind == "UPDATE" and stack.status in ("REVIEW_IN_PROGRESS", "ROLLBACK_COMPLETE"):
        return f"Stack:{stack.stack_id} is in {stack.status} state and can not be updated."
    if kind == "CREATE" and stack is not None and stack.status != "REVIEW_IN_PROGRESS":
        return f"Stack [{stack_name}] already exists and cannot be created again with the changeSet [{name}]."
    return None


def given_parameters(given: list[dict[str, Any]], stack: Any) -> dict[str, Any]:
    """The parameters a request gives (`UsePreviousValue` reads the stack's, when it has one)."""
    values = {}
    for parameter in given:
        key = parameter["ParameterKey"]
        if parameter.get("UsePreviousValue") and stack is not None and key in (stack.parameters or {}):
            values[key] = stack.parameters[key]
        elif "ParameterValue" in parameter:
            values[key] = parameter["ParameterValue"]
    return values


def changes_nothing(
    kind: str, status: str, template: dict[str, Any], parameters: dict[str, Any], stack: Any
) -> bool:
    """An UPDATE change set, otherwise fit to run (`status`), that leaves the stack's template and
    parameters as they are (AWS marks it FAILED with NO_CHANGES)."""
    return (
        kind == "UPDATE"
        and status == "CREATE_COMPLETE"
        and template == (stack.template_dict or {})
        and parameters == (stack.parameters or {})
    )


def execution_refusal(status: str, execution_status: str) -> str | None:
    """The status ExecuteChangeSet names when it refuses a change set, or None when it runs it."""
    if status != "CREATE_COMPLETE":
        return status
    if execution_status != "AVAILABLE":
        return execution_status
    return None


def _template_body(response: Any, stack: Any) -> tuple[str, dict[str, Any]]:
    """The request's template (TemplateBody, TemplateURL or the stack's previous one), read."""
    from moto.cloudformation.models import Stack

    body = response._get_param("TemplateBody")
    if response._get_param("TemplateURL"):
        body = response._get_stack_from_s3_url(response._get_param("TemplateURL"))
    elif response._get_bool_param("UsePreviousTemplate", False) and stack is not None:
        body = stack.template
    if not body:
        raise validation_error("Either Template URL or Template Body must be specified.")
    template = Stack.parse_template(body)
    if not isinstance(template, dict) or not isinstance(template.get("Resources"), dict):
        raise validation_error("Template format error: At least one Resources member must be defined.")
    return body, template


def _tags(response: Any) -> dict[str, str]:
    return {item["Key"]: item["Value"] for item in response._get_param("Tags", [])}


def _new_change_set(
    response: Any, kind: str, name: str, stack: Any, body: str, parameters: dict[str, Any]
) -> Any:
    """moto's ChangeSet for the request, AVAILABLE, its imports and changes not yet worked out."""
    from moto.cloudformation.models import ChangeSet
    from moto.cloudformation.utils import generate_changeset_id

    backend = response.cloudformation_backend
    change_set: Any = ChangeSet(
        change_set_type=kind,
        change_set_id=generate_changeset_id(name, backend.region_name, backend.account_id),
        change_set_name=name,
        stack=stack,
        template=body,
        parameters=parameters,
        description=response._get_param("Description"),
        notification_arns=response._get_param("NotificationARNs", []),
        tags=_tags(response),
        role_arn=response._get_param("RoleARN"),
    )
    change_set.capabilities = response._get_param("Capabilities", [])
    change_set.import_existing_resources = response._get_bool_param("ImportExistingResources", False)
    change_set.status, change_set.execution_status, change_set.status_reason = (
        "CREATE_COMPLETE",
        "AVAILABLE",
        None,
    )
    return change_set


def create_change_set(response: Any) -> ActionResult:
    """CreateChangeSet: CREATE, UPDATE and IMPORT, refused and FAILED as on AWS."""
    from moto.core.responses import ActionResult

    backend = response.cloudformation_backend
    stack_name, name = response._get_param("StackName"), response._get_param("ChangeSetName")
    kind = response._get_param("ChangeSetType", "CREATE")
    stack = find_stack(backend, stack_name)
    if stack is not None and stack.status == "DELETE_COMPLETE":
        stack = None
    refusal = change_set_refusal(kind, stack_name, name, stack)
    if refusal is not None:
        raise validation_error(refusal)
    body, template = _template_body(response, stack)
    parameters = {
        **((stack.parameters or {}) if kind != "CREATE" and stack else {}),
        **given_parameters(response._get_param("Parameters", []), stack),
    }

    probe = stack if stack is not None else unsaved_stack(backend)
    found: dict[str, Any] = {}
    if kind == "IMPORT":
        try:
            found = imports.check_import(probe, template, response._get_param("ResourcesToImport", []))
        except imports.ImportRefused as refused:
            raise validation_error(str(refused)) from None

    if stack is None:
        stack = new_stack(
            backend,
            stack_name,
            parameters,
            notification_arns=response._get_param("NotificationARNs", []),
            tags=_tags(response),
            role_arn=response._get_param("RoleARN"),
        )
    change_set = _new_change_set(response, kind, name, stack, body, parameters)
    if kind != "IMPORT" and change_set.import_existing_resources:
        added = stack.resource_map.build_resource_diff(template)["Add"]
        found, import_refusal = imports.automatic_imports(stack, template, added)
        if import_refusal:
            change_set.status, change_set.execution_status = "FAILED", "UNAVAILABLE"
            change_set.status_reason = import_refusal
    change_set.imports = found
    change_set.resource_changes = resource_changes(stack, template, parameters, found)
    if changes_nothing(kind, change_set.status, template, parameters, stack):
        change_set.status, change_set.execution_status = "FAILED", "UNAVAILABLE"
        change_set.status_reason = NO_CHANGES
        change_set.resource_changes = []
    backend.change_sets[change_set.change_set_id] = change_set
    return ActionResult({"Id": change_set.change_set_id, "StackId": stack.stack_id})


def _named_change_set(response: Any) -> Any:
    name = response._get_param("ChangeSetName")
    change_set = find_change_set(response.cloudformation_backend, name, response._get_param("StackName"))
    if change_set is None:
        raise _error("ChangeSetNotFound", f"ChangeSet [{name}] does not exist")
    return change_set


def describe_change_set(response: Any) -> ActionResult:
    """DescribeChangeSet; ChangeSetNotFound when it is not there."""
    from moto.core.responses import ActionResult

    return ActionResult(describe(_named_change_set(response)))


def delete_change_set(response: Any) -> EmptyResult:
    """DeleteChangeSet; one that is not there, on a stack that is, is no error."""
    from moto.core.responses import EmptyResult

    backend = response.cloudformation_backend
    change_set = find_change_set(
        backend, response._get_param("ChangeSetName"), response._get_param("StackName")
    )
    if change_set is not None:
        del backend.change_sets[change_set.change_set_id]
    return EmptyResult()


def execute_change_set(response: Any) -> EmptyResult:
    """ExecuteChangeSet; InvalidChangeSetStatus for one that is not AVAILABLE."""
    from moto.core.responses import EmptyResult

    change_set = _named_change_set(response)
    current = execution_refusal(change_set.status, change_set.execution_status)
    if current is not None:
        raise _error(
            "InvalidChangeSetStatus",
            f"ChangeSet [{change_set.change_set_id}] cannot be executed in its current status of [{current}]",
        )
    execute(response.cloudformation_backend, change_set)
    return EmptyResult()


@declare(
    "cloudformation.change-sets",
    (
        "change sets as the CDK CLI uses them: CREATE, UPDATE and IMPORT (ResourcesToImport, "
        "ImportExistingResources), their resource changes, outputs after execution, AWS's errors"
    ),
    T("moto.cloudformation.responses:CloudFormationResponse.create_change_set", "self"),
    T("moto.cloudformation.responses:CloudFormationResponse.describe_change_set", "self"),
    T("moto.cloudformation.responses:CloudFormationResponse.delete_change_set", "self"),
    T("moto.cloudformation.responses:CloudFormationResponse.execute_change_set", "self"),
    PARSED_RESOURCES,
    RESOURCE_JSON,
    ADD_STACK_EVENT,
    PARSE_TEMPLATE,
    CREATE_OUTPUT_MAP,
    GET_PARAM,
    GET_BOOL_PARAM,
    STACK_FROM_S3_URL,
    *STACK_STATE,
    EVENT_TIMESTAMP,
    *CHANGE_SET_STATE,
    # DescribeChangeSet's answers moto lacks, kept on its change sets
    *states(
        "moto.cloudformation.models:ChangeSet",
        new_objects.change_set,
        *("capabilities", "import_existing_resources", "resource_changes", "imports"),
        adds=True,
    ),
    fixes_moto=(
        "DeleteChangeSet of a missing change set raises UnboundLocalError (a 500 page); DescribeChangeSet"
        " of one answers 'Stack with id <name> does not exist' (AWS: ChangeSetNotFound); an executed "
        "change set leaves the stack without outputs; Changes lack physical ids and replacement; no "
        "IMPORT change sets"
    ),
)
def patch_change_sets() -> None:
    """The change-set actions of moto's CloudFormation responses, replaced by the ones above."""
    from moto.cloudformation.responses import CloudFormationResponse

    # Ours take the response object as moto's methods do; their results are moto's result types.
    CloudFormationResponse.create_change_set = create_change_set  # type: ignore[assignment]
    CloudFormationResponse.describe_change_set = describe_change_set  # type: ignore[assignment]
    CloudFormationResponse.delete_change_set = delete_change_set  # type: ignore[assignment]
    CloudFormationResponse.execute_change_set = execute_change_set  # type: ignore[assignment]


def unsaved_stack(backend: Any) -> Any:
    """What an import into a stack that does not exist yet is checked against: an empty stack,
    not registered (a refused CreateChangeSet creates no stack)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        template_dict={}, account_id=backend.account_id, region_name=backend.region_name, stack_id=None
    )


@declare(
    "cloudformation.template-summary-identifiers",
    "GetTemplateSummary's ResourceIdentifierSummaries, which `cdk import` reads",
    T("moto.cloudformation.responses:get_template_summary_response_from_template", "template_body"),
    fixes_moto="GetTemplateSummary has no ResourceIdentifierSummaries",
)
def patch_template_summary() -> None:
    """GetTemplateSummary gives ResourceIdentifierSummaries, from which `cdk import` learns which
    resources it can import and by what identifier (moto gave none, so it imported nothing)."""
    from moto.cloudformation import responses

    summary = responses.get_template_summary_response_from_template

    def with_identifiers(template_body: str) -> dict[str, Any]:
        answer = summary(template_body)
        answer["ResourceIdentifierSummaries"] = imports.identifier_summaries(answer.get("Resources") or {})
        return answer

    responses.get_template_summary_response_from_template = with_identifiers
