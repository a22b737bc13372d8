"""What `make up` prints for the user: `export` lines for the stack's names and the emulator's
endpoint and keys, ready to paste or `eval`."""

from __future__ import annotations

import shlex
from pathlib import Path

from local.reporting import progress


def local_queue_url(endpoint: str, queue_url: str) -> str:
    """Stack outputs carry AWS-style queue URLs; give the user the emulator's own."""
    account, name = queue_url.rstrip("/").split("/")[-2:]
    return f"{endpoint}/{account}/{name}"


def user_env(aws_env: dict[str, str], outputs: dict[str, str], history: Path) -> dict[str, str]:
    """The emulator's `aws_env` and the deployed stack's names, as the docs' commands spell them."""
    endpoint = aws_env["AWS_ENDPOINT_URL"]
    return {
        **aws_env,
        "QUEUE_URL": local_queue_url(endpoint, outputs["QueueUrl"]),
        "DLQ_URL": local_queue_url(endpoint, outputs["DeadLetterQueueUrl"]),
        "ORDERS_TABLE": outputs["OrdersTableName"],
        "REFERENCE_TABLE": outputs["ReferenceTableName"],
        "FUNCTION_NAME": outputs["FunctionName"],
        "LOG_GROUP": outputs["LogGroupName"],
        "OPS_HISTORY": str(history),
    }


def path_export() -> list[str]:
    """The line that puts the project's AWS CLI v2 (local/aws_cli.py) first on PATH, so `aws` in the
    docs is one that honours AWS_ENDPOINT_URL for every service; none, with a warning, if it is
    not installed."""
    from local.aws_cli import BIN_DIR, aws  # its installer's imports are not needed otherwise

    if aws().exists():
        return [f'export PATH="{_double_quoted(str(BIN_DIR))}:$PATH"']
    progress(
        "warning: the project's AWS CLI v2 is not installed (`make setup` retries); "
        "`aws` in the docs needs a CLI v2 of your own"
    )
    return []


def env_exports(env: dict[str, str]) -> list[str]:
    """`export NAME=value` for each variable, quoted for sh."""
    return [f"export {key}={shlex.quote(value)}" for key, value in env.items()]


def _double_quoted(text: str) -> str:
    """`text` safe inside double quotes in sh (which still expand the $PATH after it)."""
    return "".join("\\" + char if char in '"$`\\' else char for char in text)
