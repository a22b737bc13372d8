"""Every change the embedded AWS makes to moto and werkzeug, in the order `EmbeddedAWS.start`
applies them (`REGISTRY.apply(context)`), each with its targets, its reason and, where it works
around moto itself, what to report upstream. The code of each patch lives with its service.

Order matters only where a patch reads what another wrote: the added CloudFormation types are
registered before any stack is parsed, and all of it happens before the server listens.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embedded_aws.compat.registry import Patch, Registry, Target
from embedded_aws.compat.request_overhead import CAMELCASE_IMPORTERS

# Checked against these releases; embedded_aws/pyproject.toml declares the same range.
SUPPORTED_MOTO = ">=5.2.5,<5.3"


@dataclass
class Context:
    """What the patches are applied for: the server's port, the Lambda host that runs code, the
    CloudWatch that evaluates alarms, and the optional fault file and profiling directory."""

    port: int
    host: Any  # services/awslambda/invoke.py: FunctionRunner
    cloudwatch: Any  # services/cloudwatch/service.py: LocalCloudWatch
    faults_file: Path | None = None
    state_dir: Path | None = None


def T(path: str, *parameters: str, adds: bool = False) -> Target:
    return Target(path, tuple(parameters) if parameters else None, adds=adds)


# The targets' modules, spelled once.
SQS, SQS_RESPONSES = "moto.sqs.models", "moto.sqs.responses"
DDB, DDB_TABLE = "moto.dynamodb.responses:DynamoHandler", "moto.dynamodb.models.table:Table"
LAMBDA = "moto.awslambda.models"
CFN, CFN_PARSING = "moto.cloudformation.models:Stack", "moto.cloudformation.parsing"
CW, CW_RESPONSES = "moto.cloudwatch.models:CloudWatchBackend", "moto.cloudwatch.responses:CloudWatchResponse"
LOGS, LOGS_RESPONSES = "moto.logs.models", "moto.logs.responses:LogsResponse"
IAM_REQUEST = "moto.iam.access_control:IAMRequestBase"
AUTHORIZE = "_authenticate_and_authorize_normal_action"
HANDLER = "moto.moto_server.werkzeug_app:MotoRequestHandler"
CUSTOM = "moto.cloudformation.custom_model:CustomModel"
ESM_RULES = "moto.awslambda.models:LambdaBackend"
LAMBDA_RESPONSES = "moto.awslambda.responses:LambdaResponse"


def _profiling(context: Context) -> None:
    from embedded_aws import profiling

    profiling.install(context.state_dir)


def _global_cors_off(context: Context) -> None:
    from moto import settings
    from moto.moto_server import werkzeug_app

    # werkzeug_app copied the setting when moto was first imported; it reads its own copy.
    settings.DISABLE_GLOBAL_CORS = werkzeug_app.DISABLE_GLOBAL_CORS = True


def _iam_enforced(context: Context) -> None:
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin

    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    ActionAuthenticatorMixin.request_count = 0


def _resource_types(context: Context) -> None:
    from embedded_aws.services.cloudformation import resource_types

    resource_types.register()


def _managed_policy_delete(context: Context) -> None:
    from moto.iam.models import ManagedPolicy

    from embedded_aws.services.iam.managed_policy import delete_managed_policy

    ManagedPolicy.delete = delete_managed_policy


def _query_definitions(context: Context) -> None:
    from embedded_aws.services.logs import query_definitions

    query_definitions.install()


def _alarm_history(context: Context) -> None:
    from embedded_aws.services.cloudwatch import history

    history.install(context.cloudwatch.history)


def _alarm_states(context: Context) -> None:
    context.cloudwatch.states.install()


def _emf(context: Context) -> None:
    from embedded_aws.services.logs import emf

    emf.install()


def _metric_queries(context: Context) -> None:
    from embedded_aws.services.cloudwatch import metric_queries

    metric_queries.install(context.cloudwatch.evaluator.index)


def _call(module: str, function: str, *arguments: str) -> Any:
    """An `apply` that imports `module` when applied and calls `function` with context fields."""

    def apply(context: Context) -> None:
        import importlib

        getattr(importlib.import_module(module), function)(*(getattr(context, name) for name in arguments))

    return apply


def _sqs_message_calls(context: Context) -> None:
    from embedded_aws.services.sqs import backend

    backend.patch_message_calls(context.cloudwatch.sqs)


PATCHES = [
    Patch(
        "profiling",
        "LOCAL_PROFILE: the CPU of each whole request on its connection thread",
        (T("werkzeug.serving:WSGIRequestHandler.handle_one_request", "self"),),
        _profiling,
        when=lambda context: context.state_dir is not None and _profiling_enabled(),
    ),
    Patch(
        "server.global-cors-off",
        "moto's server approves every origin's CORS preflight (docs/security.md)",
        (T("moto.settings:DISABLE_GLOBAL_CORS"), T("moto.moto_server.werkzeug_app:DISABLE_GLOBAL_CORS")),
        _global_cors_off,
    ),
    Patch(
        "iam.enforced",
        "every request signed by known credentials and allowed by IAM, from the first one "
        "(moto allows unsigned requests until INITIAL_NO_AUTH_ACTION_COUNT have been made)",
        (
            T("moto.settings:INITIAL_NO_AUTH_ACTION_COUNT"),
            # moto's count of requests so far, started again (it is 0 unless moto served before)
            Target("moto.core.authorization:ActionAuthenticatorMixin.request_count", replaced=False),
        ),
        _iam_enforced,
    ),
    # CloudFormation types moto skips with a warning: a deploy "succeeds" without them.
    Patch(
        "cloudformation.resource-types",
        "alarms, query definitions, metric filters, SNS subscriptions, "
        "topic policies and queue policies created by CloudFormation (moto skips them)",
        tuple(
            Target(f"{CFN_PARSING}:{cache}", replaced=False)  # caches cleared, so they see the new types
            for cache in ("get_model_map", "get_model_list", "get_name_type_map")
        ),
        _resource_types,
        fixes_moto="CloudFormation skips AWS::CloudWatch::Alarm, AWS::Logs::QueryDefinition, "
        "AWS::Logs::MetricFilter, AWS::SNS::Subscription, AWS::SNS::TopicPolicy, AWS::SQS::QueuePolicy with only "
        "a warning",
    ),
    Patch(
        "iam.managed-policy-delete",
        "deleting a stack deletes its AWS::IAM::ManagedPolicy",
        (T("moto.iam.models:ManagedPolicy.delete", adds=True),),
        _managed_policy_delete,
        fixes_moto="AWS::IAM::ManagedPolicy has no delete: a deleted stack leaves it behind",
    ),
    # CloudWatch and Logs: what moto stores but never does.
    Patch(
        "logs.query-definitions",
        "PutQueryDefinition, DescribeQueryDefinitions, DeleteQueryDefinition",
        (
            T(f"{LOGS_RESPONSES}.put_query_definition", adds=True),
            T(f"{LOGS_RESPONSES}.describe_query_definitions", adds=True),
            T(f"{LOGS_RESPONSES}.delete_query_definition", adds=True),
        ),
        _query_definitions,
        fixes_moto="Logs has no query definition APIs",
    ),
    Patch(
        "cloudwatch.alarm-history",
        "DescribeAlarmHistory from the alarms' recorded history",
        (T(f"{CW_RESPONSES}.describe_alarm_history", adds=True),),
        _alarm_history,
        fixes_moto="CloudWatch has no DescribeAlarmHistory",
    ),
    Patch(
        "cloudwatch.alarm-states",
        "alarm state changes recorded and their actions notified",
        (
            T(
                f"{CW}.put_metric_alarm",
                "self",
                "name",
                "namespace",
                "metric_name",
                "comparison_operator",
                "evaluation_periods",
                "period",
                "threshold",
                "statistic",
                "description",
                "dimensions",
                "alarm_actions",
                "metric_data_queries",
                "datapoints_to_alarm",
                "extended_statistic",
                "ok_actions",
                "insufficient_data_actions",
                "unit",
                "actions_enabled",
                "treat_missing_data",
                "evaluate_low_sample_count_percentile",
                "threshold_metric_id",
                "rule",
                "tags",
            ),
            T(f"{CW}.set_alarm_state", "self", "alarm_name", "reason", "reason_data", "state_value"),
            T(f"{CW}.delete_alarms", "self", "alarm_names"),
        ),
        _alarm_states,
        fixes_moto="CloudWatch stores alarms but never evaluates them nor runs their actions",
    ),
    Patch(
        "logs.embedded-metric-format",
        "EMF log events become metric data, as CloudWatch Logs does",
        (T(f"{LOGS}:LogsBackend.put_log_events", "self", "log_group_name", "log_stream_name", "log_events"),),
        _emf,
        fixes_moto="Logs does not extract embedded-metric-format metrics",
    ),
    Patch(
        "cloudwatch.metric-queries",
        "GetMetricData reads one metric's points, not every point per period",
        (T(f"{CW}.get_metric_data", "self", "queries", "start_time", "end_time", "scan_by"),),
        _metric_queries,
    ),
    # Speed, with the same answers (compat/request_overhead.py).
    Patch(
        "server.request-overhead",
        "per-request work whose answer never changes, cached",
        (
            T("moto.backends:list_of_moto_modules"),
            T("moto.core.responses:method_names_from_class", "clazz"),
            T("moto.iam.access_control:IAMPolicy.__init__", "self", "policy"),
            *(T(f"{module}:camelcase_to_underscores", "argument") for module in CAMELCASE_IMPORTERS),
            T("moto.core.utils:_load_service_model", "service_name", "model_name"),
            T(
                "moto.moto_api._internal.moto_random:MotoRandom.get_random_string",
                "self",
                "length",
                "include_digits",
                "lower_case",
            ),
            T("moto.sqs.utils:generate_receipt_handle"),
            T(f"{SQS}:generate_receipt_handle"),
        ),
        _call("embedded_aws.compat.request_overhead", "patch_request_overhead"),
    ),
    # IAM as AWS evaluates it (services/iam/access_control.py); DynamoDB faults after the check.
    Patch(
        "iam.access-control",
        "resource ARNs for DynamoDB, Logs, Lambda and CloudFormation; JSON denials; "
        "the custom-resource response URL unsigned; injected DynamoDB faults once allowed",
        (
            T(f"moto.core.authorization:ActionAuthenticatorMixin.{AUTHORIZE}", "self", "resource"),
            T(f"{DDB}.{AUTHORIZE}", "self", "resource"),
            T(f"{LOGS_RESPONSES}.{AUTHORIZE}", "self", "resource"),
            T(f"moto.cloudformation.responses:CloudFormationResponse.{AUTHORIZE}", "self", "resource"),
            T(f"{LAMBDA_RESPONSES}.{AUTHORIZE}", "self", "resource"),
        ),
        _call("embedded_aws.services.iam.access_control", "patch_access_control", "faults_file"),
        fixes_moto="IAM matches policy resources only for SQS, S3, IAM and STS: DynamoDB, Logs and Lambda "
        "requests are checked against '*'; denials are XML for JSON-protocol services",
    ),
    Patch(
        "iam.topic-access",
        "SNS requests authorized against their topic by identity and topic policy together",
        (
            T(f"moto.sns.responses:SNSResponse.{AUTHORIZE}", "self", "resource"),
            Target(
                "moto.core.authorization:ActionAuthenticatorMixin._authenticate_and_authorize_action",
                ("self", "iam_request_cls", "resource"),
                replaced=False,
            ),
            Target(
                "moto.iam.access_control:IAMPolicy.is_action_permitted",
                ("self", "action", "resource", "principal", "incoming_condition_values"),
                replaced=False,
            ),
        ),
        _call("embedded_aws.services.iam.topic_access", "patch_topic_access"),
        fixes_moto="SNS requests are checked against '*' and identity policies only: a policy scoped to a topic "
        "ARN allows nothing, and a topic policy neither allows nor denies",
    ),
    Patch(
        "iam.queue-access",
        "SQS requests authorized by identity and queue policy together; SNS delivers to a "
        "queue only if its policy allows sns.amazonaws.com",
        (
            T(f"{SQS_RESPONSES}:SQSResponse.{AUTHORIZE}", "self", "resource"),
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
        ),
        _call("embedded_aws.services.iam.queue_access", "patch_queue_access"),
        fixes_moto="SQS queue policies are stored but never evaluated: they neither allow a caller nor deny one, "
        "and SNS delivers to a queue whose policy does not allow it",
    ),
    Patch(
        "sns.publish-refusals",
        "Publish refuses an empty message and a missing topic as AWS does",
        (
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
        ),
        _call("embedded_aws.services.sns.publish", "patch_publish_refusals"),
        fixes_moto="Publish accepts an empty message (AWS: InvalidParameter, 'Invalid parameter: Empty message') "
        "and answers a missing topic 'Endpoint does not exist' (AWS: 'Topic does not exist')",
    ),
    Patch(
        "sns.pending-confirmation",
        "an email subscription stays pending confirmation, and the answers about it say so",
        (
            T("moto.sns.models:SNSBackend.subscribe", "self", "topic_arn", "endpoint", "protocol"),
            T("moto.sns.responses:SNSResponse.subscribe", "self"),
            T("moto.sns.responses:SNSResponse.list_subscriptions", "self"),
            T("moto.sns.responses:SNSResponse.list_subscriptions_by_topic", "self"),
        ),
        _call("embedded_aws.services.sns.confirmation", "patch_pending_confirmation"),
        fixes_moto="every subscription is confirmed at once: an email subscription (AWS: pending until its "
        "owner confirms) is listed with its ARN and Subscribe answers the ARN, not 'pending confirmation'",
    ),
    Patch(
        "iam.bodyless-signature",
        "a request without a body is signed over an empty payload",
        (T(f"{IAM_REQUEST}._create_aws_request", "self"),),
        _call("embedded_aws.services.iam.access_control", "patch_signature_of_bodyless_requests"),
        fixes_moto="a signed GET or bodyless POST fails SignatureDoesNotMatch (re-signed over its parameters)",
    ),
    Patch(
        "iam.action-names",
        "IAM's action prefixes (cloudwatch:, not monitoring:); SQS batch calls as their "
        "single-message actions",
        (
            T(
                f"{IAM_REQUEST}.__init__",
                "self",
                "account_id",
                "method",
                "path",
                "data",
                "body",
                "headers",
                "action",
            ),
        ),
        _call("embedded_aws.services.iam.access_control", "patch_iam_action_names"),
        fixes_moto="CloudWatch actions are authorized as monitoring:*, SQS batch calls as *Batch actions",
    ),
    Patch(
        "logs.log-group-arn",
        "Fn::GetAtt LogGroup.Arn ends in :* as on AWS",
        (T(f"{LOGS}:LogGroup.get_cfn_attribute", "self", "attribute_name"),),
        _call("embedded_aws.services.logs.log_group_arn", "patch_log_group_arn"),
        fixes_moto="Fn::GetAtt of AWS::Logs::LogGroup Arn lacks the trailing :*",
    ),
    # SQS (services/sqs/).
    Patch(
        "sqs.lambda-trigger-off",
        "the local Lambda host polls mappings; moto would receive inside SendMessage",
        (T(f"{SQS}:Queue.lambda_event_source_mappings", adds=True),),
        _call("embedded_aws.services.sqs.backend", "patch_lambda_trigger"),
        fixes_moto="with a mapping, SendMessage receives on the function's behalf and, without Docker, "
        "bumps receive counts until messages are redriven unprocessed",
    ),
    Patch(
        "sqs.message-calls",
        "one consumer per received message, AWS/SQS counters, one scan per "
        "DeleteMessageBatch: every wrapper of the backend's message calls, composed in one place",
        tuple(
            T(f"{SQS}:SQSBackend.{name}", "self", *parameters)
            for name, parameters in {
                "send_message": (
                    "queue_name",
                    "message_body",
                    "message_attributes",
                    "delay_seconds",
                    "deduplication_id",
                    "group_id",
                    "system_attributes",
                    "validate_group_id",
                ),
                "send_message_batch": ("queue_name", "entries"),
                "receive_message": (
                    "queue_name",
                    "count",
                    "wait_seconds_timeout",
                    "visibility_timeout",
                    "message_attribute_names",
                ),
                "delete_message": ("queue_name", "receipt_handle"),
                "delete_message_batch": ("queue_name", "receipts"),
                "change_message_visibility": ("queue_name", "receipt_handle", "visibility_timeout"),
                "change_message_visibility_batch": ("queue_name", "entries"),
                "purge_queue": ("queue_name",),
            }.items()
        ),
        _sqs_message_calls,
        fixes_moto="ReceiveMessage is not thread-safe: concurrent receivers get the "
        "same message or 500s; no in-flight cap; a batch's size is its bodies' characters, not the bytes of "
        "bodies and attributes; MaximumMessageSize counts the body's characters, not body and attributes in "
        "bytes; SendMessageBatch refuses the whole batch for one entry over MaximumMessageSize (AWS fails that "
        "entry alone) and answers MissingParameter for a FIFO entry without MessageGroupId (AWS: "
        "InvalidParameterValue); ChangeMessageVisibilityBatch accepts more than ten entries and invalid or "
        "repeated entry ids, DeleteMessageBatch invalid or repeated ids; FIFO deduplication compares only with "
        "messages still queued (a duplicate sent after the first copy was deleted is delivered) and ignores "
        "DeduplicationScope messageGroup; DeleteMessage with a FIFO message's expired receipt handle deletes it "
        "(AWS: InvalidParameterValue, the receipt handle has expired); a FIFO group with any message in flight "
        "holds back every message of the group, also those ahead of it (a message whose visibility was "
        "extended)",
    ),
    Patch(
        "sqs.retention-check",
        "a receive checks each message's retention without building every attribute",
        (T(f"{SQS}:SQSBackend.is_message_valid_based_on_retention_period", "self", "queue_name", "message"),),
        _call("embedded_aws.services.sqs.backend", "patch_retention_check"),
    ),
    Patch(
        "sqs.send-attributes",
        "a send reads only the attributes it needs (no three scans per message)",
        (T(f"{SQS}:Queue.attributes", "self"),),
        _call("embedded_aws.services.sqs.backend", "patch_send_attributes"),
    ),
    Patch(
        "sqs.queue-attributes",
        "GetQueueAttributes counts once per call, not twice per name",
        (T(f"{SQS}:SQSBackend.get_queue_attributes", "self", "queue_name", "attribute_names"),),
        _call("embedded_aws.services.sqs.backend", "patch_queue_attributes"),
    ),
    Patch(
        "sqs.answers",
        "an empty body or string attribute refused, AWS's JSON error types and statuses, a dead "
        "letter's DeadLetterQueueSourceArn (as LocalStack recorded AWS)",
        (
            T(
                f"{SQS}:SQSBackend._validate_message",
                "self",
                "queue",
                "message_body",
                "delay_seconds",
                "deduplication_id",
                "group_id",
                "validate_group_id",
            ),
            T("moto.core.serialize:get_error_model", "exception", "default_service_model"),
            T(f"{SQS_RESPONSES}:SQSResponse.receive_message", "self"),
            T(f"{SQS_RESPONSES}:validate_message_attributes", "message_attributes"),
        ),
        _call("embedded_aws.services.sqs.answers", "patch_sqs_answers"),
        fixes_moto="SendMessage accepts an empty body and an empty string attribute; JSON errors InvalidParameterValue and MissingParameter lack "
        "AWS's types (InvalidParameterValueException, MissingRequiredParameterException); a dead letter's "
        "attributes lack DeadLetterQueueSourceArn",
    ),
    Patch(
        "sqs.move-tasks",
        "StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask (DLQ redrive)",
        (
            T(f"{SQS}:Queue.add_message", "self", "message"),
            T(f"{SQS}:Queue.messages", "self"),
            T(f"{SQS_RESPONSES}:SQSResponse._determine_resource", "self"),
            T(f"{SQS_RESPONSES}:SQSResponse.start_message_move_task", adds=True),
            T(f"{SQS_RESPONSES}:SQSResponse.list_message_move_tasks", adds=True),
            T(f"{SQS_RESPONSES}:SQSResponse.cancel_message_move_task", adds=True),
        ),
        _call("embedded_aws.services.sqs.move_tasks", "install"),
        fixes_moto="SQS has no message move tasks",
    ),
    # DynamoDB (services/dynamodb/).
    Patch(
        "dynamodb.atomic-writes",
        "a conditional write is checked and stored as one step",
        tuple(
            T(f"{DDB}.{name}", "self")
            for name in ("put_item", "update_item", "delete_item", "batch_write_item", "transact_write_items")
        ),
        _call("embedded_aws.services.dynamodb.writes", "patch_dynamodb_write_atomicity"),
        fixes_moto="a conditional write checks and stores in two steps: two threads can both pass the check",
    ),
    Patch(
        "dynamodb.item-count",
        "DescribeTable's ItemCount without a scan",
        (T(f"{DDB_TABLE}.__len__", "self"),),
        _call("embedded_aws.services.dynamodb.writes", "patch_dynamodb_item_count"),
    ),
    Patch(
        "dynamodb.answers",
        "answers in AWS's shape: ConsumedCapacity and ItemCollectionMetrics only when asked, CreateTable "
        "CREATING and DeleteTable DELETING, descriptions with TableId and without empty index lists, a "
        "missing required member a 400 ValidationException, DeleteTable of a missing table naming it",
        (T(f"{DDB}.call_action", "self"),),
        _call("embedded_aws.services.dynamodb.answers", "patch_dynamodb_answers"),
        fixes_moto="a request without a required member (PutItem without Item) fails with KeyError, a 500 HTML "
        "page, not a 400 ValidationException; BatchGetItem, BatchWriteItem, UpdateItem and TransactWriteItems "
        "return ConsumedCapacity (and ItemCollectionMetrics) nobody asked for; CreateTable and DeleteTable "
        "answer ACTIVE; descriptions lack TableId and carry empty index lists and a PROVISIONED "
        "BillingModeSummary; DeleteTable of a missing table does not name it",
    ),
    # Lambda (services/awslambda/).
    Patch(
        "lambda.invoke",
        "the Invoke API (and custom resources) run code in the local Lambda host",
        (T(f"{LAMBDA}:LambdaFunction.invoke", "self", "body", "request_headers", "response_headers"),),
        _call("embedded_aws.services.awslambda.invoke", "patch_lambda_invoke", "host"),
        fixes_moto="without Docker, Invoke returns canned answers and never runs the handler",
    ),
    Patch(
        "lambda.mapping-rules",
        "CreateEventSourceMapping and UpdateEventSourceMapping refuse what AWS refuses, in AWS's words",
        (
            T(f"{ESM_RULES}.create_event_source_mapping", "self", "spec"),
            T(f"{ESM_RULES}.update_event_source_mapping", "self", "uuid", "spec"),
        ),
        _call("embedded_aws.services.awslambda.mappings", "patch_event_source_mapping_rules"),
        fixes_moto="event source mappings are stored without AWS's checks of batch size, window, filters, "
        "visibility timeout and duplicates; a missing queue is ResourceNotFoundException (AWS: "
        "InvalidParameterValueException)",
    ),
    Patch(
        "lambda.mapping-answers",
        "CreateEventSourceMapping answers 202 Creating, UpdateEventSourceMapping its "
        "transition; every answer with AWS's SQS defaults and USER_INITIATED",
        (
            T(f"{LAMBDA}:EventSourceMapping.get_configuration", "self"),
            T(f"{LAMBDA_RESPONSES}.create_event_source_mapping", "self"),
            T(f"{LAMBDA_RESPONSES}.update_event_source_mapping", "self"),
            T(f"{LAMBDA_RESPONSES}.delete_event_source_mapping", "self"),
        ),
        _call("embedded_aws.services.awslambda.mappings", "patch_event_source_mapping_answers"),
        fixes_moto="CreateEventSourceMapping answers 201 and State Enabled (AWS: 202, Creating); FunctionResponseTypes "
        "and MaximumBatchingWindowInSeconds are missing when unset (AWS: [] and 0); StateTransitionReason is "
        "'User initiated' (AWS: USER_INITIATED)",
    ),
    Patch(
        "lambda.user-errors",
        'Lambda client errors carry "Type": "User" as AWS\'s do',
        (T("moto.awslambda.exceptions:LambdaClientError.__init__", "self", "error", "message"),),
        _call("embedded_aws.services.awslambda.mappings", "patch_lambda_user_errors"),
        fixes_moto='Lambda error bodies lack AWS\'s "Type": "User"',
    ),
    Patch(
        "lambda.inline-code-update",
        "a CloudFormation update of a function with inline code",
        (
            T(
                f"{LAMBDA}:LambdaFunction.update_from_cloudformation_json",
                "cls",
                "original_resource",
                "new_resource_name",
                "cloudformation_json",
                "account_id",
                "region_name",
            ),
        ),
        _call("embedded_aws.services.awslambda.cloudformation", "patch_inline_code_update"),
        fixes_moto="an update of a function with Code.ZipFile reads the source text as a base64 zip; "
        "an update drops Architectures and TracingConfig",
    ),
    Patch(
        "awslambda.cloudformation-settings",
        "a function's Architectures and TracingConfig from its template at create (at update: the "
        "inline-code patch above)",
        (
            T(
                f"{LAMBDA}:LambdaFunction.create_from_cloudformation_json",
                "cls",
                "resource_name",
                "cloudformation_json",
                "account_id",
                "region_name",
                "kwargs",
            ),
        ),
        _call("embedded_aws.services.awslambda.cloudformation", "patch_function_settings"),
        fixes_moto="AWS::Lambda::Function drops Architectures and TracingConfig: an arm64 function reads "
        "x86_64 and an Active-traced one PassThrough",
    ),
    # CloudFormation (services/cloudformation/).
    Patch(
        "cloudformation.response-url",
        "custom resources answer this server, on localhost",
        (T("moto.settings:moto_server_host"),),
        _call("embedded_aws.services.cloudformation.custom_resources", "patch_custom_resource_host", "port"),
    ),
    Patch(
        "cloudformation.custom-resources",
        "custom resources get Update and Delete; FAILED, or a resource's failure, fails and rolls back; "
        "an update deletes the resources it removes last",
        (
            T(
                f"{CUSTOM}.create_from_cloudformation_json",
                "cls",
                "resource_name",
                "cloudformation_json",
                "account_id",
                "region_name",
                "kwargs",
            ),
            T(
                f"{CUSTOM}.update_from_cloudformation_json",
                "cls",
                "original_resource",
                "new_resource_name",
                "cloudformation_json",
                "account_id",
                "region_name",
            ),
            T(f"{CUSTOM}.delete", adds=True),
            T("moto.cloudformation.responses:CloudFormationResponse.process_cfn_response", "self"),
            T(f"{CFN_PARSING}:ResourceMap.delete", "self"),
            T(f"{CFN_PARSING}:ResourceMap.update", "self", "template", "parameters"),
            T(f"{CFN}.create_resources", "self"),
            T(f"{CFN}.update", "self", "template", "role_arn", "parameters", "tags"),
            T(f"{CFN}.delete", "self"),
        ),
        _call("embedded_aws.services.cloudformation.custom_resources", "patch_custom_resource_requests"),
        fixes_moto="custom resources get Create only; a FAILED answer is ignored and the stack stays "
        "CREATE_IN_PROGRESS",
    ),
    Patch(
        "cloudformation.resource-failures",
        "a resource whose create or update fails gives its CREATE_FAILED/UPDATE_FAILED event and "
        "rolls the stack back; CloudFormation answers errors in its own XML",
        (
            T(
                f"{CFN_PARSING}:parse_and_create_resource",
                "logical_id",
                "resource_json",
                "resources_map",
                "account_id",
                "region_name",
            ),
            T(
                f"{CFN_PARSING}:parse_and_update_resource",
                "logical_id",
                "resource_json",
                "resources_map",
                "account_id",
                "region_name",
            ),
            T("moto.cloudformation.responses:CloudFormationResponse.call_action", "self"),
            T(
                "moto.cloudformation.models:CloudFormationBackend.execute_change_set",
                "self",
                "change_set_name",
                "stack_name",
            ),
        ),
        _call("embedded_aws.services.cloudformation.resource_failures", "patch_resource_failures"),
        fixes_moto="a service error while creating a stack's resource (a table name that is taken) escapes "
        "CreateStack as that service's JSON error and leaves the stack CREATE_IN_PROGRESS, with no rollback",
    ),
    Patch(
        "cloudformation.json-templates",
        "a JSON template is parsed as JSON, not by PyYAML's pure-Python loader first",
        (T("moto.cloudformation.models:yaml"), T("moto.cloudformation.responses:yaml")),
        _call("embedded_aws.services.cloudformation.templates", "patch_json_templates"),
    ),
    Patch(
        "cloudformation.delete-resources-gone",
        "a stack whose resources were deleted by hand deletes",
        (T(f"{CFN_PARSING}:ResourceMap._delete_resource", "self", "parsed_resource", "resource_json"),),
        _call("embedded_aws.services.cloudformation.stack_delete", "patch_stack_delete_of_resources_gone"),
        fixes_moto="a stack delete stops at the first resource already deleted out of band",
    ),
    Patch(
        "cloudformation.change-sets",
        "change sets as the CDK CLI uses them: CREATE, UPDATE and IMPORT (ResourcesToImport, "
        "ImportExistingResources), their resource changes, outputs after execution, AWS's errors",
        tuple(
            T(f"moto.cloudformation.responses:CloudFormationResponse.{name}", "self")
            for name in (
                "create_change_set",
                "describe_change_set",
                "delete_change_set",
                "execute_change_set",
            )
        ),
        _call("embedded_aws.services.cloudformation.change_sets", "patch_change_sets"),
        fixes_moto="DeleteChangeSet of a missing change set raises UnboundLocalError (a 500 page); DescribeChangeSet "
        "of one answers 'Stack with id <name> does not exist' (AWS: ChangeSetNotFound); an executed change set "
        "leaves the stack without outputs; Changes lack physical ids and replacement; no IMPORT change sets",
    ),
    Patch(
        "cloudformation.template-summary-identifiers",
        "GetTemplateSummary's ResourceIdentifierSummaries, which `cdk import` reads",
        (T("moto.cloudformation.responses:get_template_summary_response_from_template", "template_body"),),
        _call("embedded_aws.services.cloudformation.change_sets", "patch_template_summary"),
        fixes_moto="GetTemplateSummary has no ResourceIdentifierSummaries",
    ),
    Patch(
        "server.keep-alive",
        "HTTP/1.1 connections stay open between requests, as AWS endpoints keep them",
        (
            T(f"{HANDLER}.make_environ", "self"),
            T(f"{HANDLER}.send_header", "self", "keyword", "value"),
            T(f"{HANDLER}.end_headers", "self"),
            T(f"{HANDLER}.run_wsgi", "self"),
            T(f"{HANDLER}.disable_nagle_algorithm"),
            T("werkzeug.serving:selectors"),
        ),
        _call("embedded_aws.server.keep_alive", "patch_keep_alive"),
    ),
    # STS (services/sts/).
    Patch(
        "sts.assume-role-trust",
        "sts:AssumeRole allowed by the role's trust policy as IAM reads it (account principals, "
        "role sessions, Null conditions) together with the caller's identity policies",
        (T(f"{IAM_REQUEST}.check_action_permitted", "self", "resource"),),
        _call("embedded_aws.services.sts.assume_role", "patch_assume_role"),
        fixes_moto="trust policy principals are compared literally: a role trusting its account "
        "(`arn:aws:iam::<account>:root` or the bare account id) cannot be assumed by that account's users",
    ),
    Patch(
        "sts.role-session-policies",
        "a session of a role CloudFormation made is authorized by the role's inline policies",
        (T("moto.iam.access_control:AssumedRoleAccessKey.collect_policies", "self"),),
        _call("embedded_aws.services.sts.assume_role", "patch_role_session_policies"),
        fixes_moto="a role created by CloudFormation keeps inline policies as dicts; every request signed by "
        "one of its sessions fails with KeyError 'policy_document' (a 500)",
    ),
    Patch(
        "ssm.parameter-resource",
        "SSM Parameter Store requests authorized against the parameter's ARN",
        (T("moto.ssm.responses:SimpleSystemManagerResponse._determine_resource", adds=True),),
        _call("embedded_aws.services.ssm.parameter_access", "patch_parameter_resource"),
        fixes_moto="SSM requests are checked against '*': a policy scoped to one parameter's ARN allows nothing",
    ),
    Patch(
        "iam.role-managed-policies",
        "a CloudFormation role's ManagedPolicyArns attached (AWS's own policies from moto's copy), "
        "detached before the role is deleted",
        (
            T(
                "moto.iam.models:Role.create_from_cloudformation_json",
                "cls",
                "resource_name",
                "cloudformation_json",
                "account_id",
                "region_name",
                "kwargs",
            ),
            T(
                "moto.iam.models:Role.update_from_cloudformation_json",
                "cls",
                "original_resource",
                "new_resource_name",
                "cloudformation_json",
                "account_id",
                "region_name",
            ),
            T(
                "moto.iam.models:Role.delete_from_cloudformation_json",
                "cls",
                "resource_name",
                "cloudformation_json",
                "account_id",
                "region_name",
            ),
        ),
        _call("embedded_aws.services.iam.role_managed_policies", "patch_role_managed_policies"),
        fixes_moto="AWS::IAM::Role ignores ManagedPolicyArns: a role CloudFormation creates lacks its managed policies",
    ),
    # SQS answers (services/sqs/batches.py); the batch and FIFO rules are in sqs.message-calls.
    Patch(
        "sqs.batch-answers",
        "SendMessageBatch with every entry sent has no Failed member, as LocalStack recorded AWS",
        (T(f"{SQS_RESPONSES}:SQSResponse.send_message_batch", "self"),),
        _call("embedded_aws.services.sqs.batches", "patch_batch_answers"),
        fixes_moto="SendMessageBatch answers an empty Failed list in the JSON protocol where AWS leaves it out",
    ),
    # DynamoDB's consumed capacity (services/dynamodb/capacity.py).
    Patch(
        "dynamodb.consumed-capacity",
        "AWS/DynamoDB ConsumedWriteCapacityUnits and ConsumedReadCapacityUnits per table, for item "
        "writes (a failed conditional write too) and GetItem, from the items' sizes",
        (
            T(
                "moto.dynamodb.models:DynamoDBBackend.put_item",
                "self",
                "table_name",
                "item_attrs",
                "expected",
                "condition_expression",
                "expression_attribute_names",
                "expression_attribute_values",
                "overwrite",
                "return_values_on_condition_check_failure",
            ),
            T(
                "moto.dynamodb.models:DynamoDBBackend.update_item",
                "self",
                "table_name",
                "key",
                "update_expression",
                "expression_attribute_names",
                "expression_attribute_values",
                "attribute_updates",
                "expected",
                "condition_expression",
                "return_values_on_condition_check_failure",
            ),
            T(
                "moto.dynamodb.models:DynamoDBBackend.delete_item",
                "self",
                "table_name",
                "key",
                "expression_attribute_names",
                "expression_attribute_values",
                "condition_expression",
                "return_values_on_condition_check_failure",
            ),
            T(f"{DDB}.get_item", "self"),
        ),
        _call("embedded_aws.services.dynamodb.capacity", "patch_dynamodb_consumed_capacity"),
        fixes_moto="no AWS/DynamoDB metrics are published: ConsumedWriteCapacityUnits and "
        "ConsumedReadCapacityUnits, which DynamoDB publishes for every table, are missing",
    ),
    # CloudFormation's termination protection (services/cloudformation/termination_protection.py).
    Patch(
        "cloudformation.termination-protection",
        "UpdateTerminationProtection; DeleteStack of a protected stack refused in AWS's words",
        (
            T(
                "moto.cloudformation.responses:CloudFormationResponse.update_termination_protection",
                adds=True,
            ),
            T("moto.cloudformation.responses:CloudFormationResponse.delete_stack", "self"),
        ),
        _call("embedded_aws.services.cloudformation.termination_protection", "patch_termination_protection"),
        fixes_moto="UpdateTerminationProtection is not implemented, and DeleteStack deletes a stack created "
        "with EnableTerminationProtection (AWS: ValidationError, 'Stack [<name>] cannot be deleted while "
        "TerminationProtection is enabled')",
    ),
]


def _profiling_enabled() -> bool:
    from embedded_aws import profiling

    return profiling.ENABLED


REGISTRY = Registry(PATCHES, SUPPORTED_MOTO)
