"""CloudWatch Logs Insights saved queries: a store, and the PutQueryDefinition,
DescribeQueryDefinitions and DeleteQueryDefinition APIs moto lacks (also what the
`AWS::Logs::QueryDefinition` resource type creates). IAM authorizes them like every Logs
action of the embedded AWS (`logs:PutQueryDefinition` ..., on resource `*`).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from embedded_aws.compat.internals import GET_PARAM
from embedded_aws.compat.registry import T, declare

MAX_RESULTS = 1000


@dataclass
class QueryDefinition:
    id: str
    name: str
    query_string: str
    log_group_names: list[str] = field(default_factory=list)
    language: str = "CWLI"
    parameters: list[dict[str, Any]] = field(default_factory=list)
    last_modified: int = 0

    def as_api(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "queryLanguage": self.language,
            "queryDefinitionId": self.id,
            "name": self.name,
            "queryString": self.query_string,
            "lastModified": self.last_modified,
            "logGroupNames": self.log_group_names,
        }
        if self.parameters:
            shown["parameters"] = self.parameters
        return shown


class NotFound(KeyError):
    pass


class QueryDefinitions:
    """Per account and region, as AWS keeps them."""

    def __init__(self) -> None:
        self._definitions: dict[tuple[str, str], dict[str, QueryDefinition]] = {}
        self._lock = threading.Lock()

    def put(
        self,
        account_id: str,
        region: str,
        *,
        name: str,
        query_string: str,
        log_group_names: list[str] | None = None,
        language: str | None = None,
        parameters: list[dict[str, Any]] | None = None,
        definition_id: str | None = None,
    ) -> str:
        with self._lock:
            definitions = self._definitions.setdefault((account_id, region), {})
            if definition_id is not None and definition_id not in definitions:
                raise NotFound(definition_id)
            definition_id = definition_id or str(uuid.uuid4())
            definitions[definition_id] = QueryDefinition(
                definition_id,
                name,
                query_string,
                list(log_group_names or []),
                language or "CWLI",
                list(parameters or []),
                int(time.time() * 1000),
            )
            return definition_id

    def describe(
        self, account_id: str, region: str, prefix: str | None = None, language: str | None = None
    ) -> list[QueryDefinition]:
        with self._lock:
            found = list(self._definitions.get((account_id, region), {}).values())
        return sorted(
            (
                d
                for d in found
                if (not prefix or d.name.startswith(prefix)) and (not language or d.language == language)
            ),
            key=lambda d: (d.name, d.id),
        )

    def delete(self, account_id: str, region: str, definition_id: str) -> None:
        with self._lock:
            if self._definitions.get((account_id, region), {}).pop(definition_id, None) is None:
                raise NotFound(definition_id)


STORE = QueryDefinitions()


@declare(
    "logs.query-definitions",
    "PutQueryDefinition, DescribeQueryDefinitions, DeleteQueryDefinition",
    T("moto.logs.responses:LogsResponse.put_query_definition", adds=True),
    T("moto.logs.responses:LogsResponse.describe_query_definitions", adds=True),
    T("moto.logs.responses:LogsResponse.delete_query_definition", adds=True),
    GET_PARAM,
    fixes_moto="Logs has no query definition APIs",
)
def patch_query_definitions(store: QueryDefinitions = STORE) -> None:
    """Add the three APIs to moto's Logs responses."""
    from moto.logs.exceptions import InvalidParameterException, ResourceNotFoundException
    from moto.logs.responses import LogsResponse

    def not_found(definition_id: str) -> ResourceNotFoundException:
        return ResourceNotFoundException(f"The query definition {definition_id} does not exist.")

    def text(response: Any, name: str, limit: int) -> str:
        value = response._get_param(name)
        if not isinstance(value, str) or not 1 <= len(value) <= limit:
            raise InvalidParameterException(
                constraint=f"Minimum length of 1. Maximum length of {limit}.", parameter=name, value=value
            )
        return value

    def put_query_definition(self: Any) -> str:
        definition_id = self._get_param("queryDefinitionId")
        try:
            definition_id = store.put(
                self.current_account,
                self.region,
                name=text(self, "name", 255),
                query_string=text(self, "queryString", 10000),
                log_group_names=self._get_param("logGroupNames"),
                language=self._get_param("queryLanguage"),
                parameters=self._get_param("parameters"),
                definition_id=definition_id,
            )
        except NotFound:
            raise not_found(definition_id) from None
        return json.dumps({"queryDefinitionId": definition_id})

    def describe_query_definitions(self: Any) -> str:
        limit = int(self._get_param("maxResults") or MAX_RESULTS)
        if not 1 <= limit <= MAX_RESULTS:
            raise InvalidParameterException(
                constraint=f"Member must be between 1 and {MAX_RESULTS}", parameter="maxResults", value=limit
            )
        token = self._get_param("nextToken")
        offset = int(token) if token and token.isdigit() else 0
        found = store.describe(
            self.current_account,
            self.region,
            self._get_param("queryDefinitionNamePrefix"),
            self._get_param("queryLanguage"),
        )
        page = found[offset : offset + limit]
        result: dict[str, Any] = {"queryDefinitions": [d.as_api() for d in page]}
        if offset + limit < len(found):
            result["nextToken"] = str(offset + limit)
        return json.dumps(result)

    def delete_query_definition(self: Any) -> str:
        definition_id = self._get_param("queryDefinitionId")
        try:
            store.delete(self.current_account, self.region, definition_id)
        except NotFound:
            raise not_found(definition_id) from None
        return json.dumps({"success": True})

    # Actions moto lacks, added (hence the ignores).
    LogsResponse.put_query_definition = put_query_definition  # type: ignore[attr-defined]
    LogsResponse.describe_query_definitions = describe_query_definitions  # type: ignore[attr-defined]
    LogsResponse.delete_query_definition = delete_query_definition  # type: ignore[attr-defined]
