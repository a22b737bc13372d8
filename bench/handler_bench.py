"""Handler-level figures against moto's server in this process: DynamoDB calls and write units per
order, warm time per message relative to one bare conditional PutItem, and cold start.

Requests are counted inside the server, so every client is seen, including the ones Powertools
and the lab handler create themselves. No IAM enforcement here: it would cost every variant the
same and is exercised by the pipeline figures instead."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench.cold_start import MARKER
from bench.stats import blocked_ratios, read_units, summarize, write_units
from bench.variants import LABELS, ROOT, VARIANTS, BenchContext, handler_of, sqs_event

ORDERS_TABLE = "bench-orders"
IDEMPOTENCY_TABLE = "bench-idempotency"
REGION = "us-east-1"
WRITE_ACTIONS = {"PutItem", "UpdateItem", "DeleteItem"}
READ_ACTIONS = {"GetItem"}


class EmbeddedDynamoDB:
    """moto's threaded server on a free port, with a switchable recorder of DynamoDB requests."""

    def __init__(self) -> None:
        from local.session import free_port

        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.recording: list[dict[str, Any]] | None = None
        self.latency_seconds = 0.0  # each request waits this long first: a network round trip
        self._server: Any = None
        self._patches: Any = None

    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "TABLE_NAME": ORDERS_TABLE,
            "IDEMPOTENCY_TABLE": IDEMPOTENCY_TABLE,
            "AWS_LAMBDA_FUNCTION_NAME": "bench-worker",
        }

    def start(self) -> None:
        from moto.server import ThreadedMotoServer

        self._patch_recorder()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        # Handlers create their clients from the environment, as on Lambda.
        for key in [key for key in os.environ if key.startswith("AWS_")]:
            del os.environ[key]
        os.environ.update(self.env())
        client = self.client()
        for table in (ORDERS_TABLE, IDEMPOTENCY_TABLE):
            client.create_table(
                TableName=table,
                BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            )

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
        if self._patches is not None:
            self._patches.undo()

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "dynamodb",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id="bench",
            aws_secret_access_key="bench",  # noqa: S106  the embedded AWS's throwaway bench key
        )

    def _patch_recorder(self) -> None:
        """The recorder, declared to the patch registry: it checks moto's version and
        `call_action`'s signature before it changes anything, and `undo` takes it out."""
        from embedded_aws.compat.registry import SUPPORTED_MOTO, Patch, Registry, Target

        self._patches = Registry(
            [
                Patch(
                    "bench.dynamodb-recorder",
                    "DynamoDB requests counted inside the server, with the stored item sizes "
                    "before and after each",
                    (Target("moto.dynamodb.responses:DynamoHandler.call_action", ("self",)),),
                    self._record_dynamodb_requests,
                )
            ],
            SUPPORTED_MOTO,
        )
        self._patches.apply(self)

    @staticmethod
    def _record_dynamodb_requests(bench: EmbeddedDynamoDB) -> None:
        from moto.dynamodb.responses import DynamoHandler

        call_action = DynamoHandler.call_action

        def recorded_call_action(handler: Any) -> Any:
            if bench.latency_seconds:
                time.sleep(bench.latency_seconds)  # on the request's own server thread
            if bench.recording is None:
                return call_action(handler)
            params = getattr(handler, "params", None) or {}
            action = handler._get_action()
            before = _stored_size(handler, params, action)
            status, headers, body = call_action(handler)
            after = _stored_size(handler, params, action)
            bench.recording.append(
                {
                    "action": action,
                    "table": params.get("TableName"),
                    "status": status,
                    "error": _error_code(body) if status >= 400 else None,
                    "before": before,
                    "after": after,
                    "consistent": bool(params.get("ConsistentRead")),
                }
            )
            return status, headers, body

        DynamoHandler.call_action = recorded_call_action  # type: ignore[method-assign]  # the recorder wraps moto's

    @contextlib.contextmanager
    def record(self) -> Any:
        self.recording = []
        try:
            yield self.recording
        finally:
            self.recording = None


def _stored_size(handler: Any, params: dict[str, Any], action: str) -> int | None:
    """Size of the item a write or read addresses, as stored now (None if absent)."""
    if action not in WRITE_ACTIONS | READ_ACTIONS:
        return None
    try:
        table = handler.dynamodb_backend.get_table(params["TableName"])
        if "Key" in params:
            key = params["Key"]
        else:
            names = [name for name in (table.hash_key_attr, table.range_key_attr) if name]
            key = {name: params["Item"][name] for name in names}
        item = handler.dynamodb_backend.get_item(params["TableName"], key)
    except Exception:  # noqa: BLE001 - a bad request is counted; its size does not matter
        return None
    return item.size() if item is not None else None


def _error_code(body: Any) -> str | None:
    try:
        return json.loads(body).get("__type", "").split("#")[-1] or None
    except (TypeError, ValueError, AttributeError):
        return None


def tally(requests: list[dict[str, Any]], orders: int) -> dict[str, Any]:
    """DynamoDB calls and units per order from recorded requests."""
    writes = [r for r in requests if r["action"] in WRITE_ACTIONS]
    reads = [r for r in requests if r["action"] in READ_ACTIONS]
    actions: dict[str, int] = {}
    for request in requests:
        name = request["action"] + (f" ({request['error']})" if request["error"] else "")
        actions[name] = actions.get(name, 0) + 1
    return {
        "orders": orders,
        "calls": len(requests) / orders,
        "write_calls": len(writes) / orders,
        "write_units": sum(write_units(r["before"], r["after"]) for r in writes) / orders,
        "read_units": sum(read_units(r["before"], r["consistent"]) for r in reads) / orders,
        "calls_by_action": {name: count / orders for name, count in sorted(actions.items())},
        "tables": sorted({r["table"] for r in requests if r["table"]}),
    }


def bare_put(client: Any, order_id: str) -> None:
    """The reference: one conditional PutItem of the same item, ConditionalCheckFailed tolerated."""
    from botocore.exceptions import ClientError

    try:
        client.put_item(
            TableName=ORDERS_TABLE,
            Item={"id": {"S": order_id}, "quantity": {"N": "3"}, "total_cents": {"N": "850"}},
            ConditionExpression="attribute_not_exists(id)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise


def _run_handler(variant: str, order_id: str) -> None:
    result = handler_of(variant)(sqs_event(order_id), BenchContext())
    if result["batchItemFailures"]:
        raise RuntimeError(f"{LABELS[variant]} failed order {order_id}: {result}")


def count_writes(db: EmbeddedDynamoDB, orders: int) -> dict[str, Any]:
    """Calls and write units per order, first delivery and duplicate, for every variant."""
    client = db.client()
    found: dict[str, Any] = {}
    actions: dict[str, Callable[[str], None]] = {"bare": lambda order_id: bare_put(client, order_id)}
    actions.update({variant: functools.partial(_run_handler, variant) for variant in VARIANTS})
    for name, act in actions.items():
        ids = [f"count-{name}-{uuid.uuid4().hex[:8]}" for _ in range(orders)]
        act(ids[0] + "-warm")  # imports, client creation and credentials happen outside the count
        result = {}
        for delivery in ("first", "duplicate"):
            with db.record() as requests:
                for order_id in ids:
                    act(order_id)
            result[delivery] = tally(requests, orders)
        found[name] = result
    return found


def overhead(db: EmbeddedDynamoDB, rounds: int, warmup: int, blocks: int) -> dict[str, Any]:
    """Warm time per message of each variant and of one bare conditional PutItem, interleaved
    round by round (the order rotates), first delivery and duplicate."""
    client = db.client()
    names = ["bare", *VARIANTS]
    act: dict[str, Callable[[str], None]] = {"bare": lambda order_id: bare_put(client, order_id)}
    act.update({variant: functools.partial(_run_handler, variant) for variant in VARIANTS})
    times: dict[str, dict[str, list[float]]] = {name: {"first": [], "duplicate": []} for name in names}
    for round_number in range(warmup + rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            order_id = f"warm-{name}-{round_number}-{uuid.uuid4().hex[:6]}"
            for delivery in ("first", "duplicate"):
                started = time.perf_counter()
                act[name](order_id)
                elapsed = (time.perf_counter() - started) * 1000
                if round_number >= warmup:
                    times[name][delivery].append(elapsed)
    found: dict[str, Any] = {}
    for name in names:
        found[name] = {}
        for delivery in ("first", "duplicate"):
            samples, reference = times[name][delivery], times["bare"][delivery]
            ratios = blocked_ratios(samples, reference, blocks)
            found[name][delivery] = {
                "ms": summarize(samples, "ms"),
                "ratio_to_bare_put": statistics.median(samples) / statistics.median(reference),
                "ratio_blocks": summarize(ratios, "x"),
            }
    return found


def cold_starts(db: EmbeddedDynamoDB, runs: int) -> dict[str, Any]:
    """Process start to first result of each variant, over `runs` fresh processes each (after one
    unmeasured process per variant, so compiled bytecode and the OS file cache are warm)."""
    names = ["bare", *VARIANTS]
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(db.env())
    env["PYTHONPATH"] = str(ROOT)
    times: dict[str, list[float]] = {name: [] for name in names}
    for run in range(runs + 1):
        shift = run % len(names)  # rotate, so no variant always follows the same one
        for name in names[shift:] + names[:shift]:
            elapsed = _one_cold_start(name, f"cold-{name}-{uuid.uuid4().hex[:8]}", env)
            if run > 0:
                times[name].append(elapsed)
    return {name: summarize(samples, "ms") for name, samples in times.items()}


def _one_cold_start(variant: str, order_id: str, env: dict[str, str], timeout: float = 60) -> float:
    command = [sys.executable, "-m", "bench.cold_start", variant, order_id]
    started = time.perf_counter()
    process = subprocess.Popen(  # noqa: S603  this Python running bench.cold_start, no shell
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stderr is not None  # noqa: S101  both are PIPEs; narrows the type
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    try:
        for line in process.stdout:
            if line.startswith(MARKER):
                elapsed = (time.perf_counter() - started) * 1000
                result = json.loads(line[len(MARKER) :])
                if result.get("batchItemFailures"):
                    raise RuntimeError(f"cold start of {variant} failed its message: {result}")
                break
        else:
            error = process.stderr.read().strip().splitlines()
            raise RuntimeError(
                f"cold start of {variant} printed no result: {error[-1] if error else 'no output'}"
            )
        process.stdout.read()
        process.wait()
    finally:
        timer.cancel()
    return elapsed


def run(
    *, orders: int, rounds: int, warmup: int, blocks: int, cold_runs: int, progress: Callable[[str], None]
) -> dict[str, Any]:
    db = EmbeddedDynamoDB()
    db.start()
    try:
        with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
            # The handlers log three lines a record to stdout; on Lambda that is CloudWatch.
            progress(f"handlers: counting DynamoDB calls and write units ({orders} orders each)")
            writes = count_writes(db, orders)
            progress(f"handlers: warm time per message, {rounds} interleaved rounds")
            warm = overhead(db, rounds, warmup, blocks)
        progress(f"handlers: cold start, {cold_runs} fresh processes each")
        cold = cold_starts(db, cold_runs)
    finally:
        db.stop()
    return {
        "endpoint": "moto server in the benchmark process (no IAM enforcement)",
        "writes": writes,
        "warm": warm,
        "cold_start": cold,
    }
