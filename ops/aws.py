"""Clients for whichever AWS the operator points at, and AWS errors as one plain line.

By default the standard AWS environment decides (AWS_PROFILE or keys, AWS_REGION,
AWS_ENDPOINT_URL), so the same code reads the embedded AWS or a real account. Short timeouts and
few retries: a live view must report an unreachable endpoint within seconds, not a minute.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, overload

import boto3
import botocore.loaders
import botocore.session
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
)
from botocore.parsers import ResponseParserError

if TYPE_CHECKING:  # boto3's typed stubs: a development dependency only
    from mypy_boto3_cloudformation import CloudFormationClient
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_logs import CloudWatchLogsClient
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sts import STSClient

# The services the operator's commands call.
Service = Literal["cloudformation", "cloudwatch", "dynamodb", "lambda", "logs", "sns", "sqs", "sts"]

CLIENT_CONFIG = Config(connect_timeout=3, read_timeout=10, retries={"mode": "standard", "max_attempts": 2})


@dataclass(frozen=True)
class Endpoint:
    """Where to send requests: None fields fall back to the standard AWS environment."""

    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Endpoint:
        """From AWS_* variables, e.g. `LocalSession.aws_env()`."""
        return cls(
            endpoint_url=env.get("AWS_ENDPOINT_URL") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
            access_key_id=env.get("AWS_ACCESS_KEY_ID") or None,
            secret_access_key=env.get("AWS_SECRET_ACCESS_KEY") or None,
            session_token=env.get("AWS_SESSION_TOKEN") or None,
        )


@cache
def _service_models() -> botocore.loaders.Loader:
    """botocore's loader, shared by every session this process makes: it keeps the service models
    and endpoint data it has parsed, which a new session's own loader would parse again (about a
    tenth of a second per service; the tests make hundreds of Clients in one process)."""
    return botocore.loaders.create_loader()


class Clients:
    """One boto3 session and one client per service, created on first use (thread-safe)."""

    def __init__(self, endpoint: Endpoint | None = None) -> None:
        self.endpoint = endpoint or Endpoint.from_env(os.environ)
        self._lock = threading.Lock()
        self._clients: dict[str, Any] = {}
        self._session: boto3.session.Session | None = None

    def _boto_session(self) -> boto3.session.Session:
        if self._session is None:
            core = botocore.session.Session()
            core.register_component("data_loader", _service_models())
            self._session = boto3.session.Session(
                botocore_session=core,
                aws_access_key_id=self.endpoint.access_key_id,
                aws_secret_access_key=self.endpoint.secret_access_key,
                aws_session_token=self.endpoint.session_token,
                region_name=self.endpoint.region,
            )
        return self._session

    @overload
    def client(self, service: Literal["cloudformation"]) -> CloudFormationClient: ...
    @overload
    def client(self, service: Literal["cloudwatch"]) -> CloudWatchClient: ...
    @overload
    def client(self, service: Literal["dynamodb"]) -> DynamoDBClient: ...
    @overload
    def client(self, service: Literal["lambda"]) -> LambdaClient: ...
    @overload
    def client(self, service: Literal["logs"]) -> CloudWatchLogsClient: ...
    @overload
    def client(self, service: Literal["sns"]) -> SNSClient: ...
    @overload
    def client(self, service: Literal["sqs"]) -> SQSClient: ...
    @overload
    def client(self, service: Literal["sts"]) -> STSClient: ...
    def client(self, service: Service) -> Any:
        with self._lock:  # creating clients from one session is not thread-safe
            if service not in self._clients:
                self._clients[service] = self._boto_session().client(
                    service, endpoint_url=self.endpoint.endpoint_url, config=CLIENT_CONFIG
                )
            return self._clients[service]

    @property
    def region(self) -> str | None:
        return self.endpoint.region or self._boto_session().region_name

    def describe(self) -> str:
        """What the view is looking at, for its header."""
        url = self.endpoint.endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
        return url or f"AWS account ({self.region or 'no region set'})"


def error_line(error: BaseException, endpoint: str | None = None) -> str:
    """One line a user can act on, for any error a boto3 call can raise."""
    where = f" at {endpoint}" if endpoint else ""
    if isinstance(error, EndpointConnectionError):
        return f"cannot reach AWS at {error.kwargs.get('endpoint_url', '?')}: connection failed"
    if isinstance(error, ResponseParserError):
        return f"the endpoint{where} answered, but not like AWS: check AWS_ENDPOINT_URL"
    if isinstance(error, ValueError) and str(error).startswith("Invalid endpoint"):
        return f"{str(error).splitlines()[0]}: AWS_ENDPOINT_URL must be a URL like http://localhost:PORT"
    if isinstance(error, (NoCredentialsError, PartialCredentialsError)):
        return "no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
    if isinstance(error, NoRegionError):
        return "no AWS region: set AWS_REGION"
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        operation = getattr(error, "operation_name", "") or "request"
        message = str(details.get("Message", "")).strip().splitlines()
        return f"{operation}: {details.get('Code', 'error')}: {message[0] if message else ''}".rstrip(": ")
    if isinstance(error, BotoCoreError):
        return str(error).splitlines()[0]
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def stack_missing(error: ClientError) -> bool:
    """CloudFormation answered that the stack does not exist (a ValidationError, as AWS words it)."""
    details = error.response.get("Error", {})
    return details.get("Code") == "ValidationError" and "does not exist" in str(details.get("Message", ""))


# The codes with which AWS answers that a resource does not exist: SQS (its query and JSON
# protocols), DynamoDB, Lambda and CloudWatch Logs alike. Any other failure (denied, throttled,
# unreachable) proves nothing about the resource.
ABSENT_CODES = frozenset(
    {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "ResourceNotFoundException"}
)


def is_absent(error: BaseException) -> bool:
    """AWS answered that the resource does not exist."""
    return isinstance(error, ClientError) and error.response.get("Error", {}).get("Code") in ABSENT_CODES
