"""An action moto has no method for answered as AWS answers a call it does not know: a 400 with an
AWS error code in the service's protocol, instead of moto's HTML 500 page (its NotImplementedError
reaches werkzeug). Query services say InvalidAction, JSON and REST ones UnknownOperationException.
An implemented action that fails with a server error on a call missing a required member is
answered as AWS's request validation answers it (server/missing_members.py)."""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape

from embedded_aws.compat.internals import GET_ACTION
from embedded_aws.compat.registry import T, declare, install
from embedded_aws.server.missing_members import validation_failure, validation_refusal

_QUERY_PROTOCOLS = frozenset({"query", "ec2"})  # moto's query-json (SQS over JSON) is JSON


def refusal_code(protocol: str) -> str:
    """The error code AWS gives an unknown action in a service of this protocol."""
    return "InvalidAction" if protocol in _QUERY_PROTOCOLS else "UnknownOperationException"


@declare(
    "server.unimplemented-actions",
    "an action moto does not implement, or a call missing a member its operation requires, is a "
    "400 in the protocol's shape, never an HTML 500 page",
    T("moto.core.responses:BaseResponse.call_action", "self"),
    GET_ACTION,
    fixes_moto="BaseResponse.call_action raises NotImplementedError for an action it has no method "
    "for; the server turns it into an HTML 500 page instead of an AWS error (InvalidAction / "
    "UnknownOperationException, 400); many actions read a required parameter unchecked (a KeyError or "
    "TypeError on None) and answer a 500 where AWS validates the request first and answers 400",
)
def patch_unimplemented_actions() -> None:
    from moto.core.common_types import TYPE_RESPONSE
    from moto.core.responses import BaseResponse, get_service_model  # type: ignore[attr-defined]

    original = BaseResponse.call_action

    def call_action(self: Any) -> TYPE_RESPONSE:
        # Before the action, as AWS validates: moto runs some actions on absent members and stores
        # what they make (CreateRole without a name or a trust policy made a role that broke every
        # later GetAccountAuthorizationDetails).
        if message := validation_failure(self):
            return validation_refusal(self, message)
        try:
            return original(self)
        except NotImplementedError:
            protocol = self.determine_response_protocol(get_service_model(self.boto3_service_name))
            return refusal(protocol, f"{self._get_action()} is not implemented by the local emulator")

    install(BaseResponse, "call_action", call_action)


def refusal(protocol: str, message: str) -> tuple[int, dict[str, str], str]:
    """A 400 refusing an unknown action, in the body and headers of `protocol`."""
    code = refusal_code(protocol)
    if protocol in _QUERY_PROTOCOLS or protocol == "rest-xml":
        error = f"<Error><Type>Sender</Type><Code>{code}</Code><Message>{escape(message)}</Message></Error>"
        body = (
            error
            if protocol == "rest-xml"
            else f"<ErrorResponse>{error}<RequestId>0</RequestId></ErrorResponse>"
        )
        return 400, {"Content-Type": "text/xml", "status": "400"}, body
    headers = {"Content-Type": "application/x-amz-json-1.1", "x-amzn-ErrorType": code, "status": "400"}
    return 400, headers, json.dumps({"__type": code, "message": message})
