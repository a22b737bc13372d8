"""What reaches a running embedded AWS from its state: the AWS_* environment a command needs, and
boto3 clients with the admin keys."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

_CLIENTS: dict[tuple[str, ...], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def aws_env(state: dict[str, Any]) -> dict[str, str]:
    """What the AWS CLI, boto3 and the CDK CLI need to talk to the embedded AWS."""
    return {
        "AWS_ENDPOINT_URL": state["endpoint"],
        "AWS_ACCESS_KEY_ID": state["access_key_id"],
        "AWS_SECRET_ACCESS_KEY": state["secret_access_key"],
        "AWS_REGION": state["region"],
        "AWS_DEFAULT_REGION": state["region"],
    }


def environment_without_aws(*also: str) -> dict[str, str]:
    """This process's environment less its own AWS_* variables (a profile, other keys, another
    endpoint) and the names in `also`."""
    return {key: value for key, value in os.environ.items() if not key.startswith("AWS_") and key not in also}


def shared_client(env: dict[str, str], service: str) -> Any:
    """A boto3 client for `service` at `env` (an `aws_env`), one per endpoint and keys in this
    process: boto3 clients are thread-safe, and a reused one keeps its connections (a poll loop
    that made a client per check cost a connection and a server thread per check)."""
    key = (service, env["AWS_ENDPOINT_URL"], env["AWS_REGION"], env["AWS_ACCESS_KEY_ID"])
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            _CLIENTS[key] = new_client(env, service)
        return _CLIENTS[key]


def new_client(env: dict[str, str], service: str, **config: Any) -> Any:
    """A client of its own (its own connections) at `env`, with any botocore `Config` settings."""
    import boto3
    from botocore.config import Config

    # The service is chosen at run time; boto3's stubs type one client per literal service name.
    make_client: Callable[..., Any] = boto3.client
    return make_client(
        service,
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=env["AWS_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        config=Config(**config) if config else None,
    )
