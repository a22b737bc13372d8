"""Small functions of a test's own, created through the Lambda API of the shared embedded AWS and
invoked synchronously, for the Lambda host's tests (one AWS rule each). The Invoke API's log tail (LogType=Tail) carries the invocation's INIT_START/START/END/REPORT
lines: the host writes them before it answers."""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from typing import Any

from local.session import LocalSession
from tests.e2e.conftest import function_zip, logs_statement, make_role

PYTHON = "python3.14"  # the runtime the stack declares


def unique(name: str) -> str:
    """A function name no other module (they share the emulator) and no earlier run uses."""
    return f"conf-{name}-{uuid.uuid4().hex[:6]}"


def create_function(
    session: LocalSession,
    name: str,
    source: str | dict[str, str],
    *,
    runtime: str = PYTHON,
    handler: str = "app.handler",
    memory: int = 128,
    timeout: int = 3,
) -> str:
    """A function with a role that may write its own logs; returns its name."""
    role = make_role(session, f"{name}-role", [logs_statement(name)])
    session.client("logs").create_log_group(logGroupName=f"/aws/lambda/{name}")
    session.client("lambda").create_function(
        FunctionName=name,
        Runtime=runtime,
        Role=role,
        Handler=handler,
        Timeout=timeout,
        MemorySize=memory,
        Code={"ZipFile": function_zip(source)},
    )
    return name


@dataclass
class Invocation:
    function_error: str | None
    payload: Any  # the decoded JSON answer
    raw: bytes
    log: list[str]

    @property
    def report(self) -> dict[str, str]:
        """The REPORT line's fields: {"Duration": "12.34 ms", "Max Memory Used": "40 MB", ...}."""
        (line,) = [line for line in self.log if line.startswith("REPORT RequestId:")]
        return dict(field.split(": ", 1) for field in line.split("\t"))

    def lines(self, prefix: str) -> list[str]:
        return [line for line in self.log if line.startswith(prefix)]


def invoke(session: LocalSession, name: str, event: object = None) -> Invocation:
    response = session.client("lambda").invoke(
        FunctionName=name, Payload=json.dumps(event or {}), LogType="Tail"
    )
    raw = response["Payload"].read()
    log = base64.b64decode(response.get("LogResult", "")).decode().split("\n")
    return Invocation(response.get("FunctionError"), json.loads(raw) if raw else None, raw, log)
