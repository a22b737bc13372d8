"""A call missing a member its operation requires is a 400 naming the member, as AWS's request
validation answers it, before the action runs: moto would raise inside it (a KeyError or
TypeError on the absent value, an HTML 500 page) or, worse, act on the absent values and store
what it made. `server/unimplemented.py`'s patch of `call_action` asks it of every request; a
request carrying every member it must is left to moto, a 500 included. Query services answer
`ValidationError`, JSON and REST ones `ValidationException`, with AWS's "Value null at 'name'
failed to satisfy constraint: Member must not be null" wording."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

_QUERY_PROTOCOLS = frozenset({"query", "ec2"})
_READ_PROTOCOLS = _QUERY_PROTOCOLS | {"json", "query-json", "rest-json", "rest-xml"}
# Operations whose model requires no member but that need one of several, with AWS's message when
# none is given (CreateStack's recorded answer, "Either Template URL or Template Body must be
# specified.", 400 ValidationError: the CreateStack API reference's example error).
ONE_OF = {
    ("cloudformation", "GetTemplateSummary"): (
        ("TemplateBody", "TemplateURL", "StackName", "StackSetName"),
        "Either Template URL or Template Body must be specified.",
    ),
}


def json_members(body: Any) -> dict[str, Any]:
    """A JSON request body's members; anything else (an XML or form body, or none) holds none."""
    try:
        document = json.loads(body) if body else {}
    except (TypeError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def provided_names(
    protocol: str, shape: Any, querystring: dict[str, Any], headers: Any, body: Any
) -> set[str]:
    """The top-level members of `shape` the request carries, by their model names, read from the
    wire: for the services whose requests moto does not parse itself (Logs, Lambda, S3)."""
    names = set()
    keys = set(querystring)
    body_keys = set(json_members(body))
    for name, member in shape.members.items():
        wire = member.serialization.get("name", name)
        location = member.serialization.get("location")
        if protocol in _QUERY_PROTOCOLS:
            found = any(key == wire or key.startswith(wire + ".") for key in keys)
        elif location == "uri":
            found = True  # botocore cannot build the URL without it: it never reaches a server
        elif location == "querystring":
            found = wire in keys
        elif location in ("header", "headers"):
            found = location == "headers" or headers.get(wire) is not None
        elif protocol == "rest-xml":
            found = True  # an XML body is not read here (S3 only, which requires no body member)
        else:
            found = wire in body_keys
        if found:
            names.add(name)
    return names


def validation_failure(response: Any) -> str | None:
    """AWS's message for what the request lacks: required members, or one of ONE_OF's (None when
    it lacks nothing, its action is not in the service's model or its protocol is not read here)."""
    from botocore.model import OperationNotFoundError
    from moto.core.responses import get_service_model  # type: ignore[attr-defined]

    service_model = get_service_model(response.boto3_service_name)
    action = response._get_action()
    try:
        shape = service_model.operation_model(action).input_shape
        protocol = response.determine_response_protocol(service_model)
    except (OperationNotFoundError, NotImplementedError):
        return None
    if shape is None or protocol not in _READ_PROTOCOLS:
        return None
    if getattr(response, "automated_parameter_parsing", False):
        # moto parsed this request against the operation's model already (response.params):
        # read that, not the wire again.
        given = {name for name, value in (response.params or {}).items() if value is not None}
    else:
        given = provided_names(protocol, shape, response.querystring or {}, response.headers, response.body)
    if missing := [name for name in shape.required_members if name not in given]:
        return validation_message(missing)
    members, message = ONE_OF.get((response.boto3_service_name, action), ((), ""))
    if members and not given.intersection(members):
        return message
    return None


def validation_message(names: Iterable[str]) -> str:
    """AWS's request-validation wording for absent members (member names in lower camel case)."""
    names = list(names)
    errors = "; ".join(
        f"Value null at '{name[:1].lower() + name[1:]}' failed to satisfy constraint: Member must not be null"
        for name in names
    )
    return f"{len(names)} validation error{'s' if len(names) > 1 else ''} detected: {errors}"


def validation_refusal(response: Any, message: str) -> tuple[int, dict[str, Any], str | bytes]:
    """A 400 in `response`'s protocol with a validation_failure's message (moto's serializer)."""
    from moto.core.exceptions import ServiceException
    from moto.core.responses import ActionResult, get_service_model  # type: ignore[attr-defined]

    protocol = response.determine_response_protocol(get_service_model(response.boto3_service_name))
    code = "ValidationError" if protocol in _QUERY_PROTOCOLS else "ValidationException"
    # Defined outside moto: moto looks an error raised from moto.<service> up in that package's
    # service model, and ServiceException's own module, moto.core, names no service.
    refusal = type("MissingMembers", (ServiceException,), {"__module__": __name__})
    status, headers, body = response.serialized(ActionResult(refusal(code, message)))
    headers["status"] = status
    return status, headers, body
