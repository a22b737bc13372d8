"""Every change the embedded AWS makes to moto and werkzeug, in the order `EmbeddedAWS.start`
applies them (`REGISTRY.apply(context)`). Each is declared where it is made, by `@declare` on the
function that makes it (its targets, its reason and, where it works around moto itself, what to
report upstream); this module only sets their order.

Order matters only where a patch reads what another wrote: the added CloudFormation types are
registered before any stack is parsed, and all of it happens before the server listens.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embedded_aws.compat.registry import SUPPORTED_MOTO, Registry, T, Target, declare, declared
from embedded_aws.compat.request_overhead import patch_request_overhead
from embedded_aws.profiling import patch_profiling
from embedded_aws.server.keep_alive import patch_keep_alive
from embedded_aws.server.unimplemented import patch_unimplemented_actions
from embedded_aws.services.awslambda.cloudformation import patch_function_settings, patch_inline_code_update
from embedded_aws.services.awslambda.invoke import patch_lambda_invoke
from embedded_aws.services.awslambda.mappings import (
    patch_event_source_mapping_answers,
    patch_event_source_mapping_rules,
    patch_lambda_user_errors,
)
from embedded_aws.services.cloudformation.change_sets import patch_change_sets, patch_template_summary
from embedded_aws.services.cloudformation.custom_resources import (
    patch_custom_resource_host,
    patch_custom_resource_requests,
)
from embedded_aws.services.cloudformation.resource_failures import patch_resource_failures
from embedded_aws.services.cloudformation.resource_types import patch_resource_types
from embedded_aws.services.cloudformation.stack_delete import patch_stack_delete_of_resources_gone
from embedded_aws.services.cloudformation.templates import patch_json_templates
from embedded_aws.services.cloudformation.termination_protection import patch_termination_protection
from embedded_aws.services.cloudwatch.alarm_state import patch_alarm_states
from embedded_aws.services.cloudwatch.history import patch_alarm_history
from embedded_aws.services.cloudwatch.metric_queries import patch_metric_queries
from embedded_aws.services.dynamodb.answers import patch_dynamodb_answers
from embedded_aws.services.dynamodb.capacity import patch_dynamodb_consumed_capacity
from embedded_aws.services.dynamodb.cloudformation import patch_table_settings
from embedded_aws.services.dynamodb.writes import patch_dynamodb_item_count, patch_dynamodb_write_atomicity
from embedded_aws.services.iam.access_control import (
    patch_access_control,
    patch_iam_action_names,
    patch_signature_of_bodyless_requests,
)
from embedded_aws.services.iam.managed_policy import patch_managed_policy_delete
from embedded_aws.services.iam.queue_access import patch_queue_access
from embedded_aws.services.iam.role_managed_policies import patch_role_managed_policies
from embedded_aws.services.iam.topic_access import patch_topic_access
from embedded_aws.services.logs.emf import patch_emf
from embedded_aws.services.logs.log_group_arn import patch_log_group_arn
from embedded_aws.services.logs.query_definitions import patch_query_definitions
from embedded_aws.services.sns.confirmation import patch_pending_confirmation
from embedded_aws.services.sns.publish import patch_publish_refusals
from embedded_aws.services.sqs.answers import patch_sqs_answers
from embedded_aws.services.sqs.backend import (
    patch_lambda_trigger,
    patch_message_calls,
    patch_queue_attributes,
    patch_retention_check,
    patch_send_attributes,
)
from embedded_aws.services.sqs.batches import patch_batch_answers
from embedded_aws.services.sqs.move_tasks import patch_move_tasks
from embedded_aws.services.ssm.parameter_access import patch_parameter_resource
from embedded_aws.services.sts.assume_role import patch_assume_role, patch_role_session_policies


@dataclass
class Context:
    """What the patches are applied for: the server's port, the Lambda host that runs code, the
    CloudWatch that evaluates alarms, and the optional fault file and profiling directory."""

    port: int
    host: Any  # services/awslambda/invoke.py: FunctionRunner
    cloudwatch: Any  # services/cloudwatch/service.py: LocalCloudWatch
    faults_file: Path | None = None
    state_dir: Path | None = None


@declare(
    "server.global-cors-off",
    "moto's server approves every origin's CORS preflight (docs/security.md)",
    T("moto.settings:DISABLE_GLOBAL_CORS"),
    T("moto.moto_server.werkzeug_app:DISABLE_GLOBAL_CORS"),
)
def patch_global_cors_off() -> None:
    from moto import settings
    from moto.moto_server import werkzeug_app

    # werkzeug_app copied the setting when moto was first imported; it reads its own copy.
    # (It imports the name from moto.settings without re-exporting it, hence the ignore.)
    settings.DISABLE_GLOBAL_CORS = werkzeug_app.DISABLE_GLOBAL_CORS = True  # type: ignore[attr-defined]


@declare(
    "iam.enforced",
    "every request signed by known credentials and allowed by IAM, from the first one "
    "(moto allows unsigned requests until INITIAL_NO_AUTH_ACTION_COUNT have been made)",
    T("moto.settings:INITIAL_NO_AUTH_ACTION_COUNT"),
    # moto's count of requests so far, started again (it is 0 unless moto served before)
    Target("moto.core.authorization:ActionAuthenticatorMixin.request_count", replaced=False),
)
def patch_iam_enforced() -> None:
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin

    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    ActionAuthenticatorMixin.request_count = 0


PATCHES = declared(
    patch_profiling,
    patch_global_cors_off,
    patch_iam_enforced,
    patch_unimplemented_actions,
    # CloudFormation types moto skips with a warning: a deploy "succeeds" without them.
    patch_resource_types,
    patch_managed_policy_delete,
    # CloudWatch and Logs: what moto stores but never does.
    patch_query_definitions,
    patch_alarm_history,
    patch_alarm_states,
    patch_emf,
    patch_metric_queries,
    # Speed, with the same answers (compat/request_overhead.py).
    patch_request_overhead,
    # IAM as AWS evaluates it (services/iam/access_control.py); DynamoDB faults after the check.
    patch_access_control,
    patch_topic_access,
    patch_queue_access,
    patch_publish_refusals,
    patch_pending_confirmation,
    patch_signature_of_bodyless_requests,
    patch_iam_action_names,
    patch_log_group_arn,
    # SQS (services/sqs/).
    patch_lambda_trigger,
    patch_message_calls,
    patch_retention_check,
    patch_send_attributes,
    patch_queue_attributes,
    patch_sqs_answers,
    patch_move_tasks,
    # DynamoDB (services/dynamodb/).
    patch_dynamodb_write_atomicity,
    patch_dynamodb_item_count,
    patch_dynamodb_answers,
    patch_table_settings,
    # Lambda (services/awslambda/).
    patch_lambda_invoke,
    patch_event_source_mapping_rules,
    patch_event_source_mapping_answers,
    patch_lambda_user_errors,
    patch_inline_code_update,
    patch_function_settings,
    # CloudFormation (services/cloudformation/).
    patch_custom_resource_host,
    patch_custom_resource_requests,
    patch_resource_failures,
    patch_json_templates,
    patch_stack_delete_of_resources_gone,
    patch_change_sets,
    patch_template_summary,
    patch_keep_alive,
    # STS (services/sts/).
    patch_assume_role,
    patch_role_session_policies,
    patch_parameter_resource,
    patch_role_managed_policies,
    # SQS answers (services/sqs/batches.py); the batch and FIFO rules are in sqs.message-calls.
    patch_batch_answers,
    # DynamoDB's consumed capacity (services/dynamodb/capacity.py).
    patch_dynamodb_consumed_capacity,
    # CloudFormation's termination protection (services/cloudformation/termination_protection.py).
    patch_termination_protection,
)

REGISTRY = Registry(PATCHES, SUPPORTED_MOTO)
