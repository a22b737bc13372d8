"""The custom-resource lifecycle as CloudFormation runs it ("Custom resources", "Custom resource
request objects", "Custom resource response objects" in the CloudFormation User Guide), with no
moto in it: which request a resource gets, what its answer means, and when a stack rolls back.

- A request is sent by invoking the resource's function; the function answers at the response
  URL (`answer`) before its invocation returns. Update and Delete are awaited here: no answer,
  or FAILED, fails the request with the function's reason.
- Every request after Create carries the PhysicalResourceId the function last answered.
- A FAILED answer to Create rolls the stack back once every resource has been created (the
  answer can come while the others are still being created), once per stack.
- A failed Update is raised after the stack's update loop, which would otherwise send it again.

services/cloudformation/custom_resources.py wires this into moto's CustomModel and Stack.
"""

from __future__ import annotations

import enum
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, str]  # (stack id, logical id)


class CustomResourceFailed(Exception):
    """The custom resource's function answered FAILED (or never answered). `status_reason` is
    the resource event's reason in CloudFormation's words (`status_reason` below)."""

    def __init__(
        self,
        message: str,
        logical_id: str = "",
        status_reason: str = "",
        resource_type: str = "",
        physical_id: str = "",
    ) -> None:
        super().__init__(message)
        self.logical_id, self.status_reason = logical_id, status_reason or message
        self.resource_type, self.physical_id = resource_type, physical_id


@dataclass(frozen=True)
class Answer:
    """What a function PUT to its response URL."""

    status: str  # SUCCESS or FAILED
    physical_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    request_id: str | None = None


class AnswerTo(enum.Enum):
    """Whose answer an `Answer` is."""

    REQUEST = "an Update or Delete awaited here"
    CREATE = "a Create (moto's own handler records it)"
    CREATE_THEN_ROLL_BACK = "a FAILED Create of a stack whose resources are all created: roll back now"


class CustomResourceLifecycle:
    def __init__(self, request_id: Callable[[], str] = lambda: str(uuid.uuid4())) -> None:
        self._request_id = request_id
        self._lock = threading.Lock()
        # Requests awaiting their answer. While a stack is deleted moto keeps it in neither of its
        # stack lists, so an answer is matched here, by key, not through the stack.
        self._awaiting: dict[Key, Answer | None] = {}
        self._physical_ids: dict[Key, str] = {}
        self._create_failures: dict[Key, str] = {}
        self._create_request_ids: dict[Key, str] = {}
        self._update_failures: dict[str, CustomResourceFailed] = {}
        self._all_created: set[str] = set()  # stacks whose resources have all been created
        self._rolling_back: set[str] = set()

    def physical_id(self, key: Key, default: str) -> str:
        """The PhysicalResourceId the function last answered, else CloudFormation's default."""
        return self._physical_ids.get(key, default)

    def event(
        self,
        key: Key,
        request_type: str,
        *,
        service_token: str,
        response_url: str,
        resource_type: str,
        default_physical_id: str,
        properties: dict[str, Any],
        **extra: Any,
    ) -> dict[str, Any]:
        """The request object the function receives."""
        stack_id, logical_id = key
        return {
            "RequestType": request_type,
            "ServiceToken": service_token,
            "ResponseURL": response_url,
            "StackId": stack_id,
            "RequestId": self._request_id(),
            "LogicalResourceId": logical_id,
            "ResourceType": resource_type,
            "PhysicalResourceId": self.physical_id(key, default_physical_id),
            "ResourceProperties": properties,
            **extra,
        }

    def send(self, key: Key, event: dict[str, Any], invoke: Callable[[dict[str, Any]], None]) -> Answer:
        """Send an Update or Delete and return its SUCCESS answer; raise CustomResourceFailed
        with the function's reason otherwise."""
        with self._lock:
            self._awaiting[key] = None
        try:
            invoke(event)
        finally:
            with self._lock:
                answer = self._awaiting.pop(key, None)
        if answer is None or answer.status != "SUCCESS":
            reason = "no SUCCESS response" if answer is None else answer.reason or "FAILED"
            raise CustomResourceFailed(
                f"custom resource {key[1]}: {event['RequestType']} failed: {reason}",
                logical_id=key[1],
                status_reason=self.status_reason(answer, event["RequestId"]),
                resource_type=event["ResourceType"],
                physical_id=event["PhysicalResourceId"],
            )
        if answer.physical_id:
            self._physical_ids[key] = answer.physical_id
        return answer

    def answer(self, key: Key, answer: Answer) -> AnswerTo:
        """Take an answer from the response URL and say whose it is."""
        with self._lock:
            if key in self._awaiting:
                self._awaiting[key] = answer
                return AnswerTo.REQUEST
            if answer.physical_id:
                self._physical_ids[key] = answer.physical_id
            if answer.status != "FAILED":
                return AnswerTo.CREATE
            self._create_failures[key] = answer.reason or "FAILED"
            self._create_request_ids[key] = answer.request_id or ""
            return AnswerTo.CREATE_THEN_ROLL_BACK if key[0] in self._all_created else AnswerTo.CREATE

    def all_created(self, stack_id: str, pending: list[Key]) -> bool:
        """Every resource of the stack has been created (`pending`: its custom resources still
        without a SUCCESS); True if one of them failed, so the stack rolls back now."""
        with self._lock:
            self._all_created.add(stack_id)
            return bool(self.failed_creates(pending))

    def failed_creates(self, pending: list[Key]) -> list[tuple[str, str]]:
        """(logical id, reason) of each pending custom resource whose Create failed."""
        return [(key[1], self._create_failures[key]) for key in pending if key in self._create_failures]

    @staticmethod
    def status_reason(answer: Answer | None, request_id: str) -> str:
        """A failed request's resource event reason, as CloudFormation words it ("Received
        response status [FAILED] from custom resource. Message returned: ..." in AWS's events)."""
        if answer is None:
            return (
                "CloudFormation did not receive a response from your Custom Resource. "
                f"Please check your logs for requestId [{request_id}]."
            )
        return (
            "Received response status [FAILED] from custom resource. "
            f"Message returned: {answer.reason or ''} (RequestId: {request_id})"
        )

    def create_failure_reason(self, key: Key) -> str:
        """The resource event reason of a Create answered FAILED."""
        reason = self._create_failures.get(key, "FAILED")
        return self.status_reason(Answer("FAILED", reason=reason), self._create_request_ids.get(key, ""))

    def claim_rollback(self, stack_id: str) -> bool:
        """True the first time a stack is to roll back, False after."""
        with self._lock:
            if stack_id in self._rolling_back:
                return False
            self._rolling_back.add(stack_id)
            return True

    def defer_update_failure(self, stack_id: str, error: CustomResourceFailed) -> None:
        """A failed Update, raised once the stack's update loop is done (`raise_update_failure`)."""
        self._update_failures[stack_id] = error

    def raise_update_failure(self, stack_id: str) -> None:
        error = self._update_failures.pop(stack_id, None)
        if error is not None:
            raise error
