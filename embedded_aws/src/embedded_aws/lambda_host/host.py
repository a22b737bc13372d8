"""The local Lambda host: runs deployed function code and polls SQS event source mappings the
way the Lambda service does, for whatever functions and mappings the embedded AWS holds.

This module holds LambdaHost: the pool of sandboxes, role credentials, invocations and the
supervisor of the mappings' pollers. The parts it uses are in their own modules:
lambda_host/sandbox.py (one sandbox and what an invocation comes to), lambda_host/logs.py (the log
writer, which also deletes a mapping's messages) and lambda_host/event_source_mappings/poller.py (the pollers).

- Code: the zip the emulator stored at deploy time (the CDK asset), unpacked per code hash, run
  with the function's handler, environment, timeout and its own role's credentials. A new code
  or configuration (`update-function-code`, `update-function-configuration`) is used by the next
  invocation; the sandboxes of the old one are closed.
- Sandboxes: one warm Python process per concurrent invocation, reused (module-level clients are
  created once, as on Lambda); a timed-out sandbox is killed and replaced. A sandbox is retired
  before the role credentials it started with could expire during an invocation.
- Concurrency: a function's reserved concurrency is enforced (Invoke: TooManyRequestsException;
  a mapping: the batch is throttled and retried until its visibility timeout runs out).
- Logs: START / output / END / REPORT to the function's log group, one stream per sandbox. An
  Invoke API call returns after its logs are written; a mapping's messages are deleted only
  after the logs of the invocation that handled them (lambda_host/logs.py).
- Mappings: every MAPPING_REFRESH_SECONDS the supervisor starts a poller per enabled SQS mapping
  (lambda_host/event_source_mappings/poller.py), hands running ones the mapping's current settings and stops those of
  mappings disabled or deleted.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import os
import shutil
import threading
import time
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from embedded_aws.credentials import ROLE_CREDENTIALS_SECONDS, Credentials
from embedded_aws.lambda_host.event_source_mappings.poller import (
    MAPPING_REFRESH_SECONDS,
    MappingPoller,
    function_not_found,
)
from embedded_aws.lambda_host.event_source_mappings.scaling import LOCAL_MAX_CONCURRENCY
from embedded_aws.lambda_host.logs import LogWriter
from embedded_aws.lambda_host.sandbox import (
    FunctionSpec,
    InvocationResult,
    Sandbox,
    SandboxOutcome,
    Throttled,
)
from embedded_aws.profiling import timer
from embedded_aws.services.awslambda import metrics as lambda_metrics

# Invocations of one function at once; beyond it an Invoke waits for a sandbox (lambda_host/event_source_mappings/scaling.py).
MAX_SANDBOXES_PER_FUNCTION = LOCAL_MAX_CONCURRENCY
MAX_FUNCTION_TIMEOUT_SECONDS = 900
# Role credentials: refreshed once less than half their life remains; a sandbox serves an
# invocation only while its credentials outlive the function timeout plus this margin.
SANDBOX_CREDENTIALS_MARGIN_SECONDS = 60

log = logging.getLogger("embedded_aws.lambda_host")

_CLIENT_LOCK = threading.Lock()


def credentials_need_refresh(expires_at: float, now: float, lifetime: float) -> bool:
    """Role credentials are fetched again once less than half their life remains, so whatever
    uses them next (a poller's receive, a new sandbox) has at least that long."""
    return expires_at - now < lifetime / 2


def sandbox_may_serve(
    expires_at: float, now: float, timeout: float, margin: float = SANDBOX_CREDENTIALS_MARGIN_SECONDS
) -> bool:
    """A sandbox keeps the credentials it started with (as on Lambda): it may take another
    invocation only if they outlive the longest that invocation can run, plus a margin."""
    return expires_at - now > timeout + margin


class LambdaHost:
    """Runs functions for the embedded AWS and polls its SQS event source mappings."""

    def __init__(
        self,
        *,
        endpoint: str,
        region: str,
        workdir: Path,
        role_credentials: Callable[[str, str], Credentials],
        service_credentials: Callable[[], Credentials],
        stored_function: Callable[[str], Any],
        credentials_lifetime: float = ROLE_CREDENTIALS_SECONDS,
        sandbox_margin: float = SANDBOX_CREDENTIALS_MARGIN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.endpoint = endpoint
        # The emulator's stored function (moto's LambdaFunction) for an ARN: a mapping's poller
        # invokes it as the Lambda service does, without a signed Invoke API call to itself.
        self.stored_function = stored_function
        self.region = region
        self.workdir = workdir
        self._role_credentials = role_credentials
        self._service_credentials = service_credentials
        # The lifetime STS gives role credentials (injectable, so expiry can be tested quickly).
        self._credentials_lifetime = credentials_lifetime
        self._sandbox_margin = sandbox_margin
        self._clock = clock
        self._idle: dict[tuple[Any, ...], list[Sandbox]] = {}
        self._busy: dict[str, int] = {}  # sandboxes in use, per function name
        self._running: dict[str, int] = {}  # invocations admitted, per function name
        self._current: dict[str, tuple[Any, ...]] = {}  # the newest identity seen, per function name
        self._expiry: dict[Sandbox, float] = {}  # when each sandbox's credentials expire
        self._lock = threading.Condition()
        self._credentials: dict[str, tuple[Credentials, float]] = {}  # role -> (credentials, expiry)
        self._stop = threading.Event()
        self._pollers: dict[str, MappingPoller] = {}
        self._clients: dict[tuple[str, Credentials], Any] = {}
        self._writer = LogWriter(self)

    # --- functions ----------------------------------------------------------------------

    @staticmethod
    def spec_from_moto(fn: Any) -> FunctionSpec:
        """Read a function as the emulator stored it (code bytes from the deployed asset)."""
        logging_config = getattr(fn, "logging_config", None) or {}
        return FunctionSpec(
            name=fn.function_name,
            arn=fn.function_arn,
            handler=fn.handler,
            timeout=int(fn.timeout),
            memory=int(fn.memory_size),
            role_arn=fn.role,
            environment=tuple(sorted((fn.environment_vars or {}).items())),
            # moto hashed the package when it was stored; hashing it again per invocation is waste.
            code_sha=base64.b64decode(fn.code_sha_256).hex(),
            code_zip=fn.code_bytes,
            log_group=logging_config.get("LogGroup") or f"/aws/lambda/{fn.function_name}",
            runtime=fn.run_time or "",
        )

    def client(self, service: str, credentials: Credentials) -> Any:
        """A cached client per service and credentials. Creating one costs tens of milliseconds
        and is not thread-safe on boto3's default session, so it happens once, under a lock."""
        import boto3
        from botocore.config import Config

        with _CLIENT_LOCK:
            key = (service, credentials)
            if key not in self._clients:
                # A synchronous Invoke lasts as long as the function (up to 900 s): boto3's
                # default 60 s read timeout would cut it, and then retry it.
                config = (
                    Config(read_timeout=MAX_FUNCTION_TIMEOUT_SECONDS + 60, retries={"max_attempts": 0})
                    if service == "lambda"
                    else None
                )
                # boto3-stubs types client() per literal service name; this one is any name.
                self._clients[key] = boto3.client(  # type: ignore[call-overload]
                    service,
                    region_name=self.region,
                    endpoint_url=self.endpoint,
                    config=config,
                    **credentials.as_client_kwargs(),
                )
            return self._clients[key]

    def credentials(self, role_arn: str) -> Credentials:
        return self._role_credentials_entry(role_arn)[0]

    def _role_credentials_entry(self, role_arn: str) -> tuple[Credentials, float]:
        """(credentials, when they expire) for a role, fetched again well before expiry."""
        with self._lock:
            cached = self._credentials.get(role_arn)
            if cached and not credentials_need_refresh(cached[1], self._clock(), self._credentials_lifetime):
                return cached
        issued = self._clock()  # STS counts the lifetime from about now: plan with the earlier time
        entry = (self._role_credentials(role_arn, "local-lambda-host"), issued + self._credentials_lifetime)
        with self._lock:
            self._credentials[role_arn] = entry
        return entry

    def _code_dir(self, spec: FunctionSpec) -> Path:
        target = self.workdir / "code" / f"{spec.name}-{spec.code_sha[:16]}"
        if not target.exists():
            staging = target.with_name(target.name + f".{uuid.uuid4().hex}")
            with zipfile.ZipFile(io.BytesIO(spec.code_zip)) as archive:
                archive.extractall(staging)
            try:
                staging.rename(target)
            except OSError:  # another thread unpacked it first
                shutil.rmtree(staging, ignore_errors=True)
        return target

    def _sandbox_env(self, spec: FunctionSpec, credentials: Credentials) -> dict[str, str]:
        """The variables Lambda defines for a function ("Using Lambda environment variables"),
        with local values; the sandbox adds PATH and LAMBDA_RUNTIME_DIR of its runtime. Nothing
        of the host's own environment is passed on."""
        env = {
            "LANG": "C.UTF-8",
            "TZ": ":UTC",
            "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_LAMBDA_FUNCTION_NAME": spec.name,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
            "AWS_LAMBDA_LOG_GROUP_NAME": spec.log_group,
            "AWS_EXECUTION_ENV": f"AWS_Lambda_{spec.runtime}",
            "_HANDLER": spec.handler,
        }
        if os.environ.get("LOCAL_SANDBOX_PROFILE"):
            env["LOCAL_SANDBOX_PROFILE"] = os.environ["LOCAL_SANDBOX_PROFILE"]
        env["LAMBDA_TASK_ROOT"] = str(self._code_dir(spec))
        env.update(dict(spec.environment))
        env.update(credentials.as_env())
        return env

    def _acquire(self, spec: FunctionSpec) -> Sandbox:
        """A warm sandbox of exactly this code and configuration, or a new one. The first time a
        new identity of a function is seen (update-function-code, update-function-configuration),
        the idle sandboxes of its older ones are closed; busy ones are closed when released."""
        key, name = spec.identity, spec.name
        retired: list[Sandbox] = []
        try:
            with self._lock:
                if self._current.get(name) != key:
                    self._current[name] = key
                    retired += self._take_idle(
                        lambda sandbox: sandbox.spec.name == name and sandbox.spec.identity != key
                    )
                while True:
                    idle = self._idle.get(key, [])
                    while idle:
                        sandbox = idle.pop()
                        if sandbox.alive and self._may_serve(sandbox):
                            self._busy[name] = self._busy.get(name, 0) + 1
                            return sandbox
                        retired.append(sandbox)
                    if self._busy.get(name, 0) < MAX_SANDBOXES_PER_FUNCTION:
                        self._busy[name] = self._busy.get(name, 0) + 1
                        break
                    self._lock.wait(timeout=1)
        finally:
            self._close(retired)
        try:
            credentials, expires_at = self._role_credentials_entry(spec.role_arn)
            env = self._sandbox_env(spec, credentials)
            sandbox = Sandbox(spec, Path(env["LAMBDA_TASK_ROOT"]), env)
            with self._lock:
                self._expiry[sandbox] = expires_at
            return sandbox
        except BaseException:
            with self._lock:
                self._busy[name] -= 1
                self._lock.notify_all()
            raise

    def _may_serve(self, sandbox: Sandbox) -> bool:
        """Under self._lock: the sandbox's credentials outlast one more invocation."""
        expires_at = self._expiry.get(sandbox, float("inf"))
        return sandbox_may_serve(expires_at, self._clock(), sandbox.spec.timeout, self._sandbox_margin)

    def _take_idle(self, retire: Callable[[Sandbox], bool]) -> list[Sandbox]:
        """Under self._lock: remove the idle sandboxes `retire` picks; the caller closes them."""
        taken = []
        for key, idle in list(self._idle.items()):
            keep = [sandbox for sandbox in idle if not retire(sandbox)]
            taken += [sandbox for sandbox in idle if retire(sandbox)]
            if keep:
                self._idle[key] = keep
            else:
                del self._idle[key]
        return taken

    def _close(self, sandboxes: list[Sandbox]) -> None:
        """Close retired sandboxes in the background: an invocation does not wait for them."""
        if not sandboxes:
            return
        with self._lock:
            for sandbox in sandboxes:
                self._expiry.pop(sandbox, None)

        def close_all() -> None:
            for sandbox in sandboxes:
                sandbox.close()

        threading.Thread(target=close_all, name="sandbox-close", daemon=True).start()

    def _release(self, sandbox: Sandbox) -> None:
        spec = sandbox.spec
        with self._lock:
            self._busy[spec.name] -= 1
            keep = (
                sandbox.alive
                and not self._stop.is_set()
                and self._current.get(spec.name) == spec.identity
                and self._may_serve(sandbox)
            )
            if keep:
                self._idle.setdefault(spec.identity, []).append(sandbox)
            self._lock.notify_all()
        if not keep:
            self._close([sandbox])

    def retire_stale_sandboxes(self) -> None:
        """Close idle sandboxes nobody will use again: of a function that was deleted or changed
        since (seen in the emulator's store), or whose credentials would not last another
        invocation. Called by the mapping supervisor, so they go even if no invocation comes."""
        with self._lock:
            specs = {idle[0].spec.arn: idle[0].spec for idle in self._idle.values() if idle}
        live: dict[str, tuple[Any, ...] | None] = {}
        for arn, spec in specs.items():
            try:
                live[arn] = self.spec_from_moto(self.stored_function(arn)).identity
            except Exception as error:  # noqa: BLE001 - only "not found" retires; anything else keeps
                live[arn] = None if function_not_found(error) else spec.identity
        with self._lock:
            for arn, identity in live.items():
                if identity is not None:
                    self._current[specs[arn].name] = identity
            retired = self._take_idle(
                lambda sandbox: (
                    live.get(sandbox.spec.arn, sandbox.spec.identity) != sandbox.spec.identity
                    or not self._may_serve(sandbox)
                )
            )
        self._close(retired)

    def invoke(
        self,
        spec: FunctionSpec,
        event: Any,
        *,
        defer_logs: bool = False,
        reserved_concurrency: int | None = None,
    ) -> InvocationResult:
        """Run one invocation. Its log events are written before this returns, unless
        `defer_logs`: then they are queued for the log writer, which writes them (one
        PutLogEvents per stream for everything queued) before any acknowledgement queued after.
        With `reserved_concurrency` (the function's, if set) and that many invocations of the
        function running, raises Throttled and records a throttle instead."""
        name = spec.name
        with self._lock:
            running = self._running.get(name, 0)
            if reserved_concurrency is not None and running >= int(reserved_concurrency):
                throttled = True
            else:
                throttled = False
                self._running[name] = running + 1
        if throttled:
            lambda_metrics.record_throttle(name, region=self.region)
            raise Throttled(f"{name}: reserved concurrency {reserved_concurrency} in use")
        request_id = str(uuid.uuid4())
        try:
            with timer("host acquire"):
                sandbox = self._acquire(spec)
            try:
                # The sandbox is held until its logs are written: its stream is its own.
                return self._run(sandbox, request_id, event, defer_logs)
            finally:
                self._release(sandbox)
        finally:
            with self._lock:
                self._running[name] -= 1

    def _run(
        self, sandbox: Sandbox, request_id: str, event: Any, defer_logs: bool = False
    ) -> InvocationResult:
        spec = sandbox.spec
        with timer("host sandbox round trip"):
            result = sandbox.invoke(event, request_id)
        output = result.output
        status = error_type = None  # the REPORT line's Status and Error Type, when the runtime did not answer
        frame: dict[str, Any] = result.frame or {}
        error: dict[str, Any] | None = frame.get("error") or frame.get("init_error")
        if result.ending == "timeout":
            status = "timeout"
            message = f"Task timed out after {spec.timeout:.2f} seconds"
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            output.append(f"{stamp} {request_id} {message}")
            # The log line has the time and id before the message, the payload AWS's error form
            # (LocalStack's recording, test_conformance: invoke.timeout).
            error = {
                "errorMessage": f"RequestId: {request_id} Error: {message}",
                "errorType": "Sandbox.Timedout",
            }
        elif result.ending in ("out_of_memory", "exited", "unavailable"):
            status = "error"
            if result.ending == "unavailable":
                error_type = "Runtime.InvalidEntrypoint"
                reason = f"the local Lambda host runs Python runtimes only, not {spec.runtime or '(none)'}"
            else:
                error_type = (
                    "Runtime.OutOfMemory" if result.ending == "out_of_memory" else "Runtime.ExitError"
                )
                reason = "Runtime exited with error: " + (
                    "signal: killed" if result.ending == "out_of_memory" else result.exit_reason
                )
            error = {"errorType": error_type, "errorMessage": f"RequestId: {request_id} Error: {reason}"}
            output += [error["errorMessage"], error_type]
        elif result.ending == "init_error" and error is not None:  # the sandbox ends so only with one
            status, error_type = "error", error["errorType"]
        if error is not None:
            payload, function_error = json.dumps(error).encode(), "Unhandled"
        else:
            payload, function_error = frame["payload"].encode(), None
        with timer("host write logs"):
            lines = self._write_logs(sandbox, request_id, result, status, error_type, defer_logs)
        lambda_metrics.record_invocation(
            spec.name, result.duration_ms, function_error is not None, region=self.region
        )
        return InvocationResult(payload, function_error, lines, result.duration_ms)

    def _write_logs(
        self,
        sandbox: Sandbox,
        request_id: str,
        result: SandboxOutcome,
        status: str | None,
        error_type: str | None,
        defer: bool = False,
    ) -> list[str]:
        """Queue the invocation's log events for its sandbox's stream; unless `defer`, write
        everything queued now. Written with the function role's own credentials: a role
        without log permissions loses its logs, as on AWS (noted in the host's own log).

        The lines Lambda writes: INIT_START and the init's output on a cold start (with
        INIT_REPORT if init failed), START, output, END, and REPORT with Duration (without
        init), Billed Duration (with init, as billed since August 2025), Memory Size, Max Memory
        Used (the sandbox's peak RSS; MemorySize when it ran out), Init Duration on a cold
        start, Status and Error Type when the runtime did not answer. One local addition ends
        the REPORT line: `Runtime Version`, the Python that ran it (Lambda names it in
        INIT_START only), with a marked note when an interpreter of another version stood in."""
        spec = sandbox.spec
        now = int(time.time() * 1000)
        lines = []
        if result.init_ms is not None:
            lines.append(f"INIT_START Runtime Version: {sandbox.runtime_version}")
            lines += result.init_output
            if result.ending == "init_error":
                lines.append(
                    f"INIT_REPORT Init Duration: {result.init_ms:.2f} ms\tPhase: init\tStatus: error"
                    f"\tError Type: {error_type}"
                )
        memory = spec.memory if result.ending == "out_of_memory" else result.max_memory_mb
        billed = math.ceil(result.duration_ms + (result.init_ms or 0.0))
        report = (
            f"REPORT RequestId: {request_id}\tDuration: {result.duration_ms:.2f} ms\tBilled Duration: {billed} ms"
            f"\tMemory Size: {spec.memory} MB\tMax Memory Used: {memory} MB"
        )
        if result.init_ms is not None:
            report += f"\tInit Duration: {result.init_ms:.2f} ms"
        if status:
            report += f"\tStatus: {status}" + (f"\tError Type: {error_type}" if error_type else "")
        report += f"\tRuntime Version: {sandbox.runtime_version}"
        lines += [
            f"START RequestId: {request_id} Version: $LATEST",
            *result.output,
            f"END RequestId: {request_id}",
            report,
        ]
        self._writer.add(
            spec, sandbox.log_stream, [{"timestamp": now, "message": line} for line in lines], wake=defer
        )
        if not defer:
            self._writer.flush()
        return lines

    def acknowledge(self, sqs: Any, queue_url: str, receipt_handles: list[str]) -> None:
        """Delete messages once the logs queued before them are written (see lambda_host/logs.py)."""
        self._writer.ack(sqs, queue_url, receipt_handles)

    # --- event source mappings ----------------------------------------------------------

    def start_polling(self) -> None:
        threading.Thread(target=self._supervise, name="mapping-supervisor", daemon=True).start()

    def _supervise(self) -> None:
        """Every MAPPING_REFRESH_SECONDS: start pollers for enabled SQS mappings, hand running ones
        the mapping's current settings (batch size, window, filters, scaling, response types),
        stop those of mappings disabled or deleted or whose function was deleted, and close idle
        sandboxes nobody will use again."""
        while not self._stop.is_set():
            try:
                lambda_api = self.client("lambda", self._service_credentials())
                mappings = []
                for page in lambda_api.get_paginator("list_event_source_mappings").paginate():
                    mappings.extend(page["EventSourceMappings"])
                wanted = {
                    m["UUID"]: m
                    for m in mappings
                    if m.get("State") == "Enabled"
                    and ":sqs:" in m.get("EventSourceArn", "")
                    and self._function_exists(m["FunctionArn"])
                }
                for mapping_id in list(self._pollers):
                    if mapping_id not in wanted:
                        self._pollers.pop(mapping_id).stop()
                for mapping_id, mapping in wanted.items():
                    poller = self._pollers.get(mapping_id)
                    if poller is None or not poller.alive:
                        poller = MappingPoller(self, mapping)
                        self._pollers[mapping_id] = poller
                        poller.start()
                    else:
                        poller.update(mapping)
                self.retire_stale_sandboxes()
            except Exception as error:  # noqa: BLE001 - the supervisor must outlive a bad read
                log.warning("reading event source mappings failed: %s", error)
            self._stop.wait(MAPPING_REFRESH_SECONDS)

    def _function_exists(self, function_arn: str) -> bool:
        """A mapping whose function was deleted is not polled (its messages stay in the queue)."""
        try:
            self.stored_function(function_arn)
        except Exception as error:  # noqa: BLE001 - only "not found" counts
            return not function_not_found(error)
        return True

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()
        for poller in list(self._pollers.values()):
            poller.stop()
        self._writer.stop()
        with self._lock:
            sandboxes = [s for idle in self._idle.values() for s in idle]
            self._idle.clear()
            self._expiry.clear()
        for sandbox in sandboxes:
            sandbox.close()
