"""SQS answers where moto's differ from those LocalStack recorded on AWS
(embedded_aws/tests/test_conformance/recordings.py cites each): an empty body and an empty string
attribute are refused, a JSON error carries AWS's type for codes SQS's model does not list and
AWS's status where the model gives none, and a dead letter names the queue it came from."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat import new_objects
from embedded_aws.compat.internals import VALIDATE_MESSAGE
from embedded_aws.compat.registry import T, declare, install, state
from embedded_aws.services.sqs import dead_letters

# Query codes SQS's JSON protocol answers under another type (boto3's QueryErrorCode): neither is
# in botocore's model, so moto answered the query code as the type.
JSON_TYPES = {
    "InvalidParameterValue": "InvalidParameterValueException",
    "MissingParameter": "MissingRequiredParameterException",
}
# Errors whose HTTP status botocore's model leaves out (moto then answers 400).
STATUSES = {"ResourceNotFoundException": 404}


@declare(
    "sqs.answers",
    (
        "an empty body or string attribute refused, AWS's JSON error types and statuses, a dead letter's "
        "DeadLetterQueueSourceArn (as LocalStack recorded AWS)"
    ),
    T(*VALIDATE_MESSAGE),
    T("moto.core.serialize:get_error_model", "exception", "default_service_model"),
    T("moto.sqs.responses:SQSResponse.receive_message", "self"),
    T("moto.sqs.responses:validate_message_attributes", "message_attributes"),
    # botocore's error shape, copied with AWS's JSON type
    state("botocore.model:Shape._shape_model", new_objects.shape),
    state("botocore.model:Shape._shape_resolver", new_objects.shape),
    fixes_moto=(
        "SendMessage accepts an empty body and an empty string attribute; JSON errors "
        "InvalidParameterValue and MissingParameter lack AWS's types (InvalidParameterValueException, "
        "MissingRequiredParameterException); a dead letter's attributes lack DeadLetterQueueSourceArn"
    ),
)
def patch_sqs_answers() -> None:
    from moto.core import serialize
    from moto.core.errors import ErrorShape
    from moto.sqs.exceptions import MissingParameter
    from moto.sqs.models import SQSBackend
    from moto.sqs.responses import SQSResponse

    validate = SQSBackend._validate_message

    def _validate_message(self: Any, queue: Any, message_body: str, *args: Any, **kwargs: Any) -> None:
        if not message_body:
            raise MissingParameter("MessageBody")
        validate(self, queue, message_body, *args, **kwargs)

    # moto's serialize and responses use these names without re-exporting them: hence the ignores.
    error_model = serialize.get_error_model  # type: ignore[attr-defined]

    def get_error_model(exception: Exception, default_service_model: Any) -> Any:
        shape: Any = error_model(exception, default_service_model)  # reads botocore's private fields
        if default_service_model.metadata.get("serviceId") != "SQS" or (
            shape.name not in JSON_TYPES and shape.name not in STATUSES
        ):
            return shape
        model = dict(shape._shape_model)
        model["error"] = {**model.get("error", {}), "code": shape.error_code}
        if shape.name in STATUSES:
            model["error"]["httpStatusCode"] = STATUSES[shape.name]
        return ErrorShape(JSON_TYPES.get(shape.name, shape.name), model, shape._shape_resolver)

    from moto.sqs import responses
    from moto.sqs.exceptions import MessageAttributesInvalid

    validate_attributes = responses.validate_message_attributes  # type: ignore[attr-defined]

    def validate_message_attributes(message_attributes: dict[str, Any]) -> None:
        for name, value in (message_attributes or {}).items():
            data_type = str(value.get("DataType") or "")
            if data_type.split(".")[0] == "String" and value.get("StringValue") == "":
                raise MessageAttributesInvalid(
                    f"Message (user) attribute '{name}' must contain a non-empty value of type 'String'."
                )
        validate_attributes(message_attributes)

    receive = SQSResponse.receive_message

    def receive_message(self: Any) -> Any:
        answer = receive(self)
        names = set(self._get_param("AttributeNames", []) or []) | set(
            self._get_param("MessageSystemAttributeNames", []) or []
        )
        if names & {"All", "DeadLetterQueueSourceArn"}:
            result: Any = answer.result  # the answer's fields, a dict (moto types it object)
            for message in result.get("Messages", []):
                source = dead_letters.source_by_id(message["MessageId"])
                if source is not None:
                    message.setdefault("Attributes", {})["DeadLetterQueueSourceArn"] = source
        return answer

    install(SQSBackend, "_validate_message", _validate_message)
    serialize.get_error_model = get_error_model  # type: ignore[attr-defined]
    install(SQSResponse, "receive_message", receive_message)
    responses.validate_message_attributes = validate_message_attributes  # type: ignore[attr-defined]
