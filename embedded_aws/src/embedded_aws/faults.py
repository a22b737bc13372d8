"""Injected DynamoDB faults for the embedded AWS, driven from another process through a file.

`<state dir>/faults.json` holds rules of two kinds:

- errors: the next `remaining` requests of `action` on `table` fail with `code` and HTTP
  `status`, answered with DynamoDB's JSON error shape, so an SDK sees what a throttled (400
  ProvisionedThroughputExceededException / ThrottlingException) or failing (500
  InternalServerError, 503 ServiceUnavailable) DynamoDB would send. Each failed request moves
  one from `remaining` to `served`, so a test can count how many attempts met the fault.
- latency: every request of `action` on `table` waits `latency_ms` before it is served, until
  the rule is cleared: the network round trip a local call does not have. Requests wait side by
  side, as on a network (the wait is outside the emulator's write lock).

The check runs right after the request is authorized: a denied request is answered as denied and
uses up no fault. Writers on both sides take an exclusive lock on `faults.json.lock`, so a test
injecting a rule never loses a count the emulator wrote. Only for local runs and tests.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FAULTS_FILE = "faults.json"
_ERROR_PREFIX = "com.amazonaws.dynamodb.v20120810#"


@contextmanager
def _locked(path: Path) -> Iterator[list[dict[str, Any]]]:
    """The rules, read under an exclusive lock and written back (atomically) when changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rules = json.loads(path.read_text())["faults"] if path.exists() else []
        before = json.dumps(rules)
        yield rules
        if json.dumps(rules) != before:
            temporary = path.with_name(path.name + ".tmp")
            temporary.write_text(json.dumps({"faults": rules}, indent=2))
            os.replace(temporary, path)


def _latency(rule: dict[str, Any]) -> bool:
    return "latency_ms" in rule


def add_fault(
    path: Path, *, action: str, table: str, code: str, status: int, count: int, message: str | None = None
) -> None:
    """Make the next `count` `action` requests on `table` fail; replaces any error rule for the pair."""
    if count < 0 or not 400 <= status <= 599:
        raise ValueError(f"fault count must be >= 0 and status 4xx/5xx, got count={count} status={status}")
    with _locked(path) as rules:
        rules[:] = [r for r in rules if _latency(r) or (r["action"], r["table"]) != (action, table)]
        rules.append(
            {
                "action": action,
                "table": table,
                "code": code,
                "status": status,
                "message": message or f"{code} (injected by embedded_aws/faults.py)",
                "remaining": count,
                "served": 0,
            }
        )


MAX_LATENCY_MS = 10_000


def add_latency(path: Path, *, action: str, table: str, latency_ms: float) -> None:
    """Make every `action` request on `table` wait `latency_ms` first; replaces any latency rule
    for the pair (0 removes it)."""
    if not 0 <= latency_ms <= MAX_LATENCY_MS:
        raise ValueError(f"latency must be 0..{MAX_LATENCY_MS} ms, got {latency_ms:g}")
    with _locked(path) as rules:
        rules[:] = [r for r in rules if not _latency(r) or (r["action"], r["table"]) != (action, table)]
        if latency_ms:
            rules.append({"action": action, "table": table, "latency_ms": latency_ms})


def clear_faults(path: Path, table: str | None = None) -> int:
    """Remove every rule (of `table` only, if given); how many were removed."""
    with _locked(path) as rules:
        kept = [r for r in rules if table is not None and r["table"] != table]
        removed = len(rules) - len(kept)
        rules[:] = kept
    return removed


def read_faults(path: Path) -> list[dict[str, Any]]:
    with _locked(path) as rules:
        return [dict(rule) for rule in rules]


@dataclass(frozen=True)
class _Armed:
    errors: frozenset[tuple[str, str]]  # (action, table) pairs with error faults left
    latency_ms: dict[tuple[str, str], float]


_active: dict[Path, tuple[tuple[int, int], _Armed]] = {}
_NOTHING = _Armed(frozenset(), {})


def _armed(path: Path) -> _Armed:
    """What the rules ask of requests, re-read only when the file changed: every DynamoDB
    request asks, and most must not pay for a lock and a JSON read."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return _NOTHING
    version = (stat.st_mtime_ns, stat.st_size)
    cached = _active.get(path)
    if cached is None or cached[0] != version:
        with _locked(path) as rules:
            armed = _Armed(
                frozenset((r["action"], r["table"]) for r in rules if not _latency(r) and r["remaining"] > 0),
                {(r["action"], r["table"]): float(r["latency_ms"]) for r in rules if _latency(r)},
            )
        cached = _active[path] = (version, armed)
    return cached[1]


def latency_of(path: Path, action: str, tables: list[str]) -> float:
    """Seconds this request waits before it is served (the longest of its tables' rules)."""
    waits = _armed(path).latency_ms
    return max((waits.get((action, table), 0.0) for table in tables), default=0.0) / 1000


def take_fault(path: Path, action: str, tables: list[str]) -> dict[str, Any] | None:
    """The error rule this request meets, with one fault used up; None when the request goes through."""
    if not any((action, table) in _armed(path).errors for table in tables):
        return None
    with _locked(path) as rules:
        for rule in rules:
            if (
                not _latency(rule)
                and rule["action"] == action
                and rule["table"] in tables
                and rule["remaining"] > 0
            ):
                rule["remaining"] -= 1
                rule["served"] += 1
                return dict(rule)
    return None


def raise_injected_fault(handler: Any, path: Path) -> None:
    """Fail this authorized DynamoDB request (moto's DynamoHandler) if a rule in `path` says so;
    called by the access check (services/iam/access_control.py) once the request is allowed."""
    from moto.core.exceptions import JsonRESTError

    from embedded_aws.services.dynamodb import metrics as dynamodb_metrics

    params = getattr(handler, "body", None)
    params = params if isinstance(params, dict) else {}
    tables = [params["TableName"]] if "TableName" in params else list(params.get("RequestItems") or {})
    wait = latency_of(path, handler._get_action(), tables)
    if wait:
        time.sleep(wait)  # the simulated network round trip, on this request's own thread
    rule = take_fault(path, handler._get_action(), tables)
    if rule:
        dynamodb_metrics.record_fault(
            rule["action"], [rule["table"]], rule["code"], handler.current_account, handler.region
        )
        # moto answers an error raised here as the response (it is an HTTPException).
        error = JsonRESTError(_ERROR_PREFIX + rule["code"], rule["message"])
        error.code = rule["status"]
        raise error
