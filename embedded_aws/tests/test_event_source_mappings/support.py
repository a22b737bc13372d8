"""Helpers of the SQS event source mapping and Invoke conformance tests (test_esm_*, test_invoke_*):
small functions the local Lambda host has never seen, each with its own queue, DLQ and role,
built through the Lambda API like tests/e2e/test_lambda_host.py does, in the run's shared
embedded AWS."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from local.session import LocalSession, wait_for
from ops import observe
from tests.e2e.conftest import ACCOUNT, REGION, Pipeline, function_zip, pipeline

# Prints one RECORDS line per invocation (the records it got, its pid and when it ran) and
# sleeps SLEEP seconds if the environment says so; `fail` in a body fails that record.
RECORDER = """
import json, os, time

def handler(event, context):
    started = time.time()
    time.sleep(float(os.environ.get("SLEEP", "0")))
    records = event.get("Records", [])
    print("RECORDS " + json.dumps({"records": records, "pid": os.getpid(), "version": VERSION,
                                   "start": started, "end": time.time()}))
    return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records if r["body"].startswith("fail")]}
"""


def recorder(version: str = "1") -> str:
    return f"VERSION = {version!r}\n" + RECORDER


def unique(stem: str) -> str:
    """A name no other test of the run uses (the emulator is shared)."""
    return f"{stem}-{uuid.uuid4().hex[:6]}"


def make(session: LocalSession, stem: str, *, source: str | None = None, **kwargs) -> Pipeline:
    return pipeline(session, unique(stem), source=source or recorder(), **kwargs)


def queue_arn(p: Pipeline) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{p.name}"


def invocations(session: LocalSession, name: str) -> list[dict]:
    """The RECORDS lines of a function's log group, oldest first."""
    events = observe.log_events(session.client("logs"), f"/aws/lambda/{name}")
    return [
        json.loads(e["message"][len("RECORDS ") :]) for e in events if e["message"].startswith("RECORDS ")
    ]


def bodies(session: LocalSession, name: str) -> list[str]:
    return [r["body"] for i in invocations(session, name) for r in i["records"]]


def wait_for_bodies(session: LocalSession, name: str, count: int, timeout: float = 30) -> list[dict]:
    wait_for(
        lambda: len(bodies(session, name)) >= count,
        timeout=timeout,
        what=f"{count} record(s) handled by {name}",
    )
    return invocations(session, name)


def counters(session: LocalSession, p: Pipeline) -> dict[str, int]:
    return observe.queue_counters(session.client("sqs"), p.queue_url)


def drained(session: LocalSession, p: Pipeline) -> bool:
    c = counters(session, p)
    return c["visible"] == 0 and c["in_flight"] == 0


def emulator_log(session: LocalSession) -> str:
    return (Path(session.state_dir) / "emulator.log").read_text(errors="replace")


def wait_until_stopped_polling(session: LocalSession, mapping_id: str, timeout: float = 20) -> None:
    """The host logs when the last poller of a stopped mapping has ended (nothing of it receives
    any more)."""
    wait_for(
        lambda: f"mapping {mapping_id}: stopped polling" in emulator_log(session),
        timeout=timeout,
        what=f"the pollers of mapping {mapping_id} to stop",
    )


def new_code(session: LocalSession, name: str, source: str) -> None:
    session.client("lambda").update_function_code(FunctionName=name, ZipFile=function_zip(source))
