"""Every change the embedded AWS makes to moto and werkzeug, in the order `EmbeddedAWS.start`
applies them (`REGISTRY.apply(context)`). Each is declared where it is made, by `@declare` on the
function that makes it (its targets, its reason and, where it works around moto itself, what to
report upstream); this module only sets their order.

The patches are grouped by service, the server's own first. Each attribute a patch replaces belongs
to that patch alone, so the order matters only where one patch calls through what another
installed; all of it happens before the server listens.
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
    # The server, for every service: what it serves, to whom, and how fast.
    patch_profiling,
    patch_global_cors_off,
    patch_iam_enforced,
    patch_unimplemented_actions,
    patch_request_overhead,  # speed, with the same answers
    patch_keep_alive,
    # IAM as AWS evaluates it (services/iam/), STS and SSM; the queue's and the topic's own
    # access checks are with SQS and SNS.
    patch_access_control,
    patch_iam_action_names,
    patch_signature_of_bodyless_requests,
    patch_managed_policy_delete,
    patch_role_managed_policies,
    patch_assume_role,
    patch_role_session_policies,
    patch_parameter_resource,
    # SQS (services/sqs/).
    patch_queue_access,
    patch_lambda_trigger,
    patch_message_calls,
    patch_retention_check,
    patch_send_attributes,
    patch_queue_attributes,
    patch_sqs_answers,
    patch_batch_answers,
    patch_move_tasks,
    # SNS (services/sns/).
    patch_topic_access,
    patch_publish_refusals,
    patch_pending_confirmation,
    # DynamoDB (services/dynamodb/); its injected faults come after the access check.
    patch_dynamodb_write_atomicity,
    patch_dynamodb_item_count,
    patch_dynamodb_answers,
    patch_dynamodb_consumed_capacity,
    patch_table_settings,
    # Lambda (services/awslambda/).
    patch_lambda_invoke,
    patch_event_source_mapping_rules,
    patch_event_source_mapping_answers,
    patch_lambda_user_errors,
    patch_inline_code_update,
    patch_function_settings,
    # CloudWatch and Logs: what moto stores but never does.
    patch_alarm_history,
    patch_alarm_states,
    patch_metric_queries,
    patch_emf,
    patch_query_definitions,
    patch_log_group_arn,
    # CloudFormation (services/cloudformation/): first the types moto skips with a warning (a
    # deploy would "succeed" without them).
    patch_resource_types,
    patch_custom_resource_host,
    patch_custom_resource_requests,
    patch_resource_failures,
    patch_json_templates,
    patch_stack_delete_of_resources_gone,
    patch_change_sets,
    patch_template_summary,
    patch_termination_protection,
)

REGISTRY = Registry(PATCHES, SUPPORTED_MOTO)
