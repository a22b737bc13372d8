"""moto's private methods and object state that more than one patch reads or writes, declared
once here and listed by each patch that uses them (a patch's other reads sit in its own
`@declare`). The registry checks each: a method's parameters on its class, an attribute moto's
`__init__` sets on an object made new for the check (new_objects.py)."""

from __future__ import annotations

from embedded_aws.compat import new_objects
from embedded_aws.compat.registry import reads, state, states

# SQS: a queue's messages as a list, and the condition a long poll waits on (moto's sends
# notify it).
QUEUE_MESSAGES = state("moto.sqs.models:Queue._messages", new_objects.queue)
QUEUE_MESSAGES_LOCK = state("moto.sqs.models:Queue._messages_lock", new_objects.queue)

# SQS's check of a message to send, with its parameters: sqs.answers replaces it, and the FIFO
# duplicate check (sqs.message-calls) calls it as a send would.
VALIDATE_MESSAGE = (
    "moto.sqs.models:SQSBackend._validate_message",
    "self",
    "queue",
    "message_body",
    "delay_seconds",
    "deduplication_id",
    "group_id",
    "validate_group_id",
)

# A request's parameters and action, as moto's responses read them.
GET_PARAM = reads("moto.core.responses:BaseResponse._get_param", "self", "param_name", "if_none")
GET_BOOL_PARAM = reads("moto.core.responses:BaseResponse._get_bool_param", "self", "param_name", "if_none")
GET_ACTION = reads("moto.core.responses:BaseResponse._get_action", "self")

# CloudFormation: a stack's resources by logical id (the parsed models and their template JSON),
# its events and outputs.
PARSED_RESOURCES = state(
    "moto.cloudformation.parsing:ResourceMap._parsed_resources", new_objects.resource_map
)
RESOURCE_JSON = state("moto.cloudformation.parsing:ResourceMap._resource_json_map", new_objects.resource_map)
DELETE_RESOURCE = reads(
    "moto.cloudformation.parsing:ResourceMap._delete_resource", "self", "parsed_resource", "resource_json"
)
ADD_STACK_EVENT = reads(
    "moto.cloudformation.models:Stack._add_stack_event",
    "self",
    "resource_status",
    "resource_status_reason",
    "resource_properties",
)
PARSE_TEMPLATE = reads("moto.cloudformation.models:Stack._parse_template", "self")
CREATE_OUTPUT_MAP = reads("moto.cloudformation.models:Stack._create_output_map", "self")
STACK_FROM_S3_URL = reads(
    "moto.cloudformation.responses:CloudFormationResponse._get_stack_from_s3_url", "self", "template_url"
)

# IAM: the action a request is checked for (service:Action) and the access key that signed it.
REQUEST_ACTION = state("moto.iam.access_control:IAMRequestBase._action", new_objects.iam_request)
REQUEST_ACCESS_KEY = state("moto.iam.access_control:IAMRequestBase._access_key", new_objects.iam_request)

# CloudFormation's stacks, events and change sets, as the change-set, failure and custom-resource
# patches update them; the change sets' answers moto lacks are added to its objects.
STACK_STATE = states(
    "moto.cloudformation.models:Stack",
    new_objects.stack,
    *("status", "template", "description", "parameters", "output_map"),
)
EVENT_TIMESTAMP = state("moto.cloudformation.models:Event.timestamp", new_objects.stack_event)
CHANGE_SET_STATE = states(
    "moto.cloudformation.models:ChangeSet",
    new_objects.change_set,
    "status",
    "execution_status",
    "status_reason",
)

# An AWS error answered in a JSON protocol: its HTTP status and body.
ERROR_CODE = state("moto.core.exceptions:JsonRESTError.code", new_objects.json_error)
ERROR_DESCRIPTION = state("moto.core.exceptions:JsonRESTError.description", new_objects.json_error)
