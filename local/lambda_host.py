"""The local Lambda host: runs deployed function code and polls SQS event source mappings the
way the Lambda service does, for whatever functions and mappings the embedded AWS holds.

- Code: the zip the emulator stored at deploy time (the CDK asset), unpacked per code hash, run
  with the function's handler, environment, timeout and its own role's credentials. A new code
  or configuration (`update-function-code`, `update-function-configuration`) is used by the next
  invocation; the sandboxes of the old one are closed.
- Sandboxes: one warm Python process per concurrent invocation, reused (module-level clients are
  created once, as on Lambda); a timed-out sandbox is killed and replaced. A sandbox is retired
  before the role credentials it started with could expire during an invocation.
- Concurrency: a function's reserved concurrency is enforced (Invoke: TooManyRequestsException;
  a mapping: the batch is throttled and retried until its visibility timeout runs out).
- Logs: START / output / END / REPORT to the function's log group, one stream per sandbox,
  written with the function role's credentials. An Invoke API call returns after its logs are
  written; a mapping's invocations queue theirs for a log writer thread, which writes all that
  is queued in one PutLogEvents per stream and only then deletes the messages of those
  invocations (DeleteMessageBatch, with the role's credentials).
- Mappings: pollers per enabled SQS mapping, scaled like the Lambda service (local/esm_scaling.py):
  five at first, more while batches come back full, fewer when receives come back empty, never
  more than MaximumConcurrency, reserved concurrency or the local cap. Each gathers a batch
  (BatchSize, MaximumBatchingWindowInSeconds) with the role's credentials, drops what matches no
  filter (FilterCriteria, local/event_filter.py), invokes the function (in the emulator's process
  directly, as the Lambda service does; no Invoke API call), has successes deleted, honours
  batchItemFailures (ReportBatchItemFailures), and leaves failed messages for the visibility
  timeout so the queue's redrive policy moves poison messages to the dead-letter queue.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from local import event_filter, runtimes
from local.cloudwatch import lambda_metrics
from local.credentials import ROLE_CREDENTIALS_SECONDS, Credentials
from local.esm_scaling import LOCAL_MAX_CONCURRENCY, Scaling, concurrency_limit
from local.profiling import timer

BOOTSTRAP = Path(__file__).resolve().parent / "runtime_bootstrap.py"
FRAME = "\x1e\x1eLAMBDA-RESULT "
# Invocations of one function at once; beyond it an Invoke waits for a sandbox (local/esm_scaling.py).
MAX_SANDBOXES_PER_FUNCTION = LOCAL_MAX_CONCURRENCY
INIT_TIMEOUT_SECONDS = 10  # Lambda's init phase limit, separate from the function timeout
MEMORY_POLL_SECONDS = 0.01  # how often a working sandbox's RSS is checked against MemorySize
MAX_FUNCTION_TIMEOUT_SECONDS = 900
# Role credentials: refreshed once less than half their life remains; a sandbox serves an
# invocation only while its credentials outlive the function timeout plus this margin.
SANDBOX_CREDENTIALS_MARGIN_SECONDS = 60
MAPPING_REFRESH_SECONDS = 0.5
# A poller's long poll. The Lambda service waits up to 20 s; an idle poller then costs one
# request per wait. 5 s keeps idle mappings cheap and a disabled or deleted mapping stops
# polling within seconds (checked between receives).
POLL_WAIT_SECONDS = 5
MAX_RESPONSE_BYTES = 6_291_556  # synchronous invocation response limit
# A batch stops gathering (batching window, batch size > 10) once one more receive of ten
# messages of SQS's maximum size (256 KiB) could take it past the 6 MB invocation payload.
BATCH_GATHER_BYTES = MAX_RESPONSE_BYTES - 10 * 262_144
THROTTLE_RETRY_SECONDS = (0.1, 2.0)  # a throttled batch is retried with backoff, first and longest wait
WRITER_THREADS = 4  # requests of one log-writer round in flight at once
MAX_PENDING_ACKS = 50  # receipt handles queued for deletion before pollers wait

log = logging.getLogger("local.lambda_host")


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    arn: str
    handler: str
    timeout: int
    memory: int
    role_arn: str
    environment: tuple[tuple[str, str], ...]
    code_sha: str
    code_zip: bytes = field(repr=False, compare=False)
    log_group: str = ""
    runtime: str = ""

    @property
    def identity(self) -> tuple:
        """Sandboxes are reused only while code and configuration stay the same."""
        return (self.name, self.code_sha, self.handler, self.timeout, self.memory, self.runtime, self.role_arn,
                self.environment)


@dataclass
class InvocationResult:
    payload: bytes
    function_error: str | None
    log_lines: list[str]
    duration_ms: float

    def log_tail_base64(self) -> str:
        tail = "\n".join(self.log_lines).encode()[-4096:]
        return base64.b64encode(tail).decode()


@dataclass
class SandboxOutcome:
    """What one invocation came to inside its sandbox."""

    frame: dict | None  # {"payload": json text} or {"error": {...}}; None if none came
    output: list[str]  # what the handler printed
    duration_ms: float  # the invocation, without init
    max_memory_mb: int  # the sandbox's peak RSS so far
    init_output: list[str] = field(default_factory=list)  # printed during init (cold start only)
    init_ms: float | None = None  # Init Duration (cold start only)
    # None, or how it ended without a result: timeout, out_of_memory, exited, init_error, unavailable
    ending: str | None = None
    exit_reason: str = ""  # as Lambda words a dead runtime: "exit status 1", "signal: killed"


class Sandbox:
    """One warm process of a function's runtime serving invocations of one function version.

    It runs the runtime's own interpreter (local/runtimes.py) with the package, the runtime's
    boto3 and the standard library only. Memory: the process's peak RSS (VmHWM in /proc, kept
    by the kernel, so a spike between two reads still counts) is read every
    MEMORY_POLL_SECONDS while it works and once more when a phase ends; above the function's
    MemorySize the process is killed, as Lambda's cgroup limit kills it. No root needed.
    RLIMIT_AS is not used: Python maps far more address space than it touches, so a limit
    equal to MemorySize breaks imports.
    """

    def __init__(self, spec: FunctionSpec, code_dir: Path, env: dict[str, str]) -> None:
        self.spec = spec
        self.created = time.monotonic()
        day = time.strftime("%Y/%m/%d", time.gmtime())
        self.log_stream = f"{day}/[$LATEST]{uuid.uuid4().hex}"
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.ready = False
        self.process: subprocess.Popen | None = None
        self.peak_kb = 0
        self._killed_for_memory = False
        try:
            self.runtime: runtimes.Runtime | None = runtimes.resolve(spec.runtime)
        except runtimes.RuntimeUnavailable:
            self.runtime = None
            return
        bin_dir = str(Path(self.runtime.python).parent)
        env = dict(env, AWS_LAMBDA_LOG_STREAM_NAME=self.log_stream, LAMBDA_RUNTIME_DIR=str(self.runtime.packages),
                   PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin")
        self._started = time.perf_counter()
        self.process = subprocess.Popen(
            [*self.runtime.command, str(BOOTSTRAP)],
            cwd=code_dir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, encoding="utf-8", errors="replace", bufsize=1,
        )
        threading.Thread(target=self._pump, daemon=True).start()

    @property
    def runtime_version(self) -> str:
        """For INIT_START and REPORT lines: which Python runs this sandbox."""
        if self.runtime is None:
            return f"{self.spec.runtime or '(none)'} (not available on the local host)"
        return self.runtime.report

    def _pump(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        from local import profiling

        cpu = time.thread_time()
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
            if profiling.ENABLED:
                now = time.thread_time()
                profiling.record("host pump line (cpu)", 0.0, now - cpu)
                cpu = now
        self._lines.put(None)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def max_memory_mb(self) -> int:
        return math.ceil(self.peak_kb / 1024)

    def _over_memory(self) -> bool:
        """Read the process's peak RSS; True (and the process killed) once it exceeds MemorySize."""
        assert self.process is not None
        try:
            if self.process.returncode is not None:  # reaped: its pid may be another process's now
                raise OSError
            with open(f"/proc/{self.process.pid}/status", "rb") as status:
                for line in status:
                    if line.startswith(b"VmHWM:"):
                        self.peak_kb = max(self.peak_kb, int(line.split()[1]))
                        break
        except (OSError, ValueError, IndexError):  # exited, or no /proc (not Linux): nothing to read
            pass
        if self.peak_kb > self.spec.memory * 1024:
            self._killed_for_memory = True
            self.kill()
        return self._killed_for_memory

    def _read_frame(self, deadline: float, output: list[str]) -> tuple[dict | None, str | None]:
        """Collect output lines until the next frame: (frame, None), or (None, how it ended:
        timeout, out_of_memory or exited). The frame may follow output that had no newline."""
        check_at = 0.0
        while True:
            now = time.time()
            if now >= check_at:
                if self._over_memory():
                    output.extend(self._remaining_lines())
                    return None, "out_of_memory"
                check_at = now + MEMORY_POLL_SECONDS
            if now >= deadline:
                self.kill()
                output.extend(self._remaining_lines())
                return None, "timeout"
            try:
                line = self._lines.get(timeout=max(min(deadline, check_at) - now, 0.001))
            except queue.Empty:
                continue
            if line is None:
                return None, "out_of_memory" if self._over_memory() else "exited"
            at = line.find(FRAME)
            if at < 0:
                output.append(line)
                continue
            if at:
                output.append(line[:at])
            if self._over_memory():  # a spike between two reads: Lambda's limit would have killed it
                output.extend(self._remaining_lines())
                return None, "out_of_memory"
            return json.loads(line[at + len(FRAME):]), None

    def _remaining_lines(self) -> list[str]:
        """What a killed process printed before it died: on Lambda those lines are logged too."""
        lines = []
        deadline = time.time() + 2
        while time.time() < deadline:
            try:
                line = self._lines.get(timeout=max(deadline - time.time(), 0.001))
            except queue.Empty:
                break
            if line is None:
                break
            at = line.find(FRAME)
            if at < 0:
                lines.append(line)
            elif at > 0:
                lines.append(line[:at])
        return lines

    def _exit_reason(self) -> str:
        """How Lambda words a runtime that died: "exit status 1", "signal: killed"."""
        assert self.process is not None
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        if code is not None and code < 0:
            names = {signal.SIGKILL: "killed", signal.SIGSEGV: "segmentation fault", signal.SIGABRT: "aborted",
                     signal.SIGTERM: "terminated", signal.SIGBUS: "bus error"}
            return f"signal: {names.get(-code, signal.Signals(-code).name.lower())}"
        return f"exit status {code}"

    def invoke(self, event: Any, request_id: str) -> SandboxOutcome:
        """Run one invocation (and the init phase first, on a cold start)."""
        if self.runtime is None or self.process is None:
            return SandboxOutcome(None, [], 0.0, 0, ending="unavailable")
        init_output: list[str] = []
        init_ms = None
        if not self.ready:
            frame, ending = self._read_frame(time.time() + INIT_TIMEOUT_SECONDS, init_output)
            init_ms = (time.perf_counter() - self._started) * 1000
            if frame is None or "init_error" in frame:
                if frame is not None:
                    ending = "init_error"
                return SandboxOutcome(frame, [], 0.0, self.max_memory_mb, init_output, init_ms, ending,
                                      self._exit_reason() if ending == "exited" else "")
            self.ready = True
        started = time.perf_counter()
        deadline = time.time() + self.spec.timeout
        request = {"event": event, "request_id": request_id, "function_arn": self.spec.arn, "deadline": deadline}
        output: list[str] = []
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            frame, ending = self._read_frame(deadline, output)
        except (BrokenPipeError, OSError):
            frame, ending = None, "exited"
        duration_ms = (time.perf_counter() - started) * 1000
        return SandboxOutcome(frame, output, duration_ms, self.max_memory_mb, init_output, init_ms, ending,
                              self._exit_reason() if ending == "exited" else "")

    def kill(self) -> None:
        if self.process is None:
            return
        if self.alive:
            self.process.kill()
        self.process.wait()

    def close(self) -> None:
        if self.alive and self.process is not None and self.process.stdin:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.kill()


_CLIENT_LOCK = threading.Lock()


class _LogWriter:
    """Writes queued log events, then queued SQS acknowledgements, in a background thread.

    Each round takes everything queued so far: one CreateLogStream for a new stream and one
    PutLogEvents per stream (however many invocations it holds), then DeleteMessageBatch
    calls of up to ten receipt handles per queue and client. While a round runs, the next one
    fills up, so rounds grow with the load instead of costing a request per invocation. An
    acknowledgement is only ever sent after the logs queued before it, so once a message is
    deleted the log lines of the invocation that handled it are readable, as before.
    """

    MAX_EVENTS = 10_000  # PutLogEvents limits: 10,000 events, 1,048,576 bytes (+26 per event)
    MAX_BYTES = 1_000_000

    def __init__(self, host: "LambdaHost") -> None:
        self.host = host
        self._cond = threading.Condition()
        self._events: dict[tuple[str, str, str, str], list[dict]] = {}  # (role, function, group, stream)
        self._acks: list[tuple[Any, str, list[str]]] = []
        self._created: set[tuple[str, str]] = set()
        self._round = threading.Lock()  # one writer at a time keeps each stream in order
        self._thread: threading.Thread | None = None
        self._pool: Any = None
        self._pending_handles = 0
        self._stopped = False

    def add(self, spec: FunctionSpec, stream: str, events: list[dict], *, wake: bool = True) -> None:
        """Queue events for a stream; `wake=False` when the caller flushes itself right after."""
        with self._cond:
            self._events.setdefault((spec.role_arn, spec.name, spec.log_group, stream), []).extend(events)
            if wake:
                self._wake()

    def _wake(self) -> None:
        """Under self._cond: start the writer thread if needed and let it run a round."""
        if self._thread is None and not self._stopped:
            self._thread = threading.Thread(target=self._loop, name="log-writer", daemon=True)
            self._thread.start()
        self._cond.notify_all()

    def ack(self, sqs: Any, queue_url: str, receipt_handles: list[str]) -> None:
        """Queue a delete; a poller waits here while MAX_PENDING_ACKS handles are queued, so
        deletes never fall far behind (messages would pile up in flight)."""
        with self._cond:
            while self._pending_handles >= MAX_PENDING_ACKS and not self._stopped:
                self._cond.wait(1)
            self._pending_handles += len(receipt_handles)
            self._acks.append((sqs, queue_url, receipt_handles))
            self._wake()

    def flush(self) -> None:
        """Write everything queued now, from the calling thread."""
        with self._round:
            with self._cond:
                events, acks = self._events, self._acks
                self._events, self._acks = {}, []
            self._write(events, acks)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.flush()
        if self._pool is not None:
            self._pool.shutdown(wait=False)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not (self._events or self._acks) and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
            try:
                self.flush()
            except Exception as error:  # noqa: BLE001 - the writer must outlive a bad round
                log.warning("log writer: %s", error)

    def _write(self, events: dict[tuple[str, str, str, str], list[dict]],
               acks: list[tuple[Any, str, list[str]]]) -> None:
        """All log streams of the round (in parallel), then all its deletes (in parallel)."""
        self._parallel([lambda key=key, batch=batch: self._put_logs(*key, batch) for key, batch in events.items()])
        grouped: dict[tuple[int, str], tuple[Any, list[str]]] = {}
        for sqs, queue_url, handles in acks:
            grouped.setdefault((id(sqs), queue_url), (sqs, []))[1].extend(handles)
        self._parallel([
            lambda sqs=sqs, queue_url=queue_url, chunk=handles[start:start + 10]: self._delete(sqs, queue_url, chunk)
            for (_, queue_url), (sqs, handles) in grouped.items() for start in range(0, len(handles), 10)
        ])
        with self._cond:
            self._pending_handles -= sum(len(handles) for _, _, handles in acks)
            self._cond.notify_all()

    def _parallel(self, calls: list[Callable[[], None]]) -> None:
        if len(calls) <= 1:
            for call in calls:
                call()
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=WRITER_THREADS, thread_name_prefix="log-writer")
        for future in [self._pool.submit(call) for call in calls]:
            future.result()

    def _put_logs(self, role_arn: str, name: str, group: str, stream: str, batch: list[dict]) -> None:
        from botocore.exceptions import ClientError

        host = self.host
        with timer("writer put logs"):
            logs = host.client("logs", host.credentials(role_arn))
            try:
                if (group, stream) not in self._created:
                    logs.create_log_stream(logGroupName=group, logStreamName=stream)
                    self._created.add((group, stream))
                for chunk in self._chunks(batch):
                    logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=chunk)
            except ClientError as error:
                log.warning("logs of %s not written to %s: %s", name, group, error)

    @staticmethod
    def _delete(sqs: Any, queue_url: str, handles: list[str]) -> None:
        entries = [{"Id": str(n), "ReceiptHandle": handle} for n, handle in enumerate(handles)]
        try:
            with timer("writer delete"):
                failed = sqs.delete_message_batch(QueueUrl=queue_url, Entries=entries).get("Failed")
            if failed:
                log.warning("deleting from %s: %s", queue_url, failed[0])
        except Exception as error:  # noqa: BLE001 - left in flight, as after a failed delete
            log.warning("deleting from %s failed: %s", queue_url, error)

    @classmethod
    def _chunks(cls, events: list[dict]) -> list[list[dict]]:
        chunks: list[list[dict]] = [[]]
        size = 0
        for event in events:
            cost = len(event["message"].encode()) + 26
            if chunks[-1] and (len(chunks[-1]) >= cls.MAX_EVENTS or size + cost > cls.MAX_BYTES):
                chunks.append([])
                size = 0
            chunks[-1].append(event)
            size += cost
        return chunks


class Throttled(Exception):
    """The function's reserved concurrency is in use: the invocation did not run."""


def function_not_found(error: BaseException) -> bool:
    """The function an ARN names does not exist (moto's 404, or the Lambda API's answer)."""
    code = getattr(error, "code", None)
    if code == 404:
        return True
    response = getattr(error, "response", None)
    return isinstance(response, dict) and response.get("Error", {}).get("Code") == "ResourceNotFoundException"


def credentials_need_refresh(expires_at: float, now: float, lifetime: float) -> bool:
    """Role credentials are fetched again once less than half their life remains, so whatever
    uses them next (a poller's receive, a new sandbox) has at least that long."""
    return expires_at - now < lifetime / 2


def sandbox_may_serve(expires_at: float, now: float, timeout: float,
                      margin: float = SANDBOX_CREDENTIALS_MARGIN_SECONDS) -> bool:
    """A sandbox keeps the credentials it started with (as on Lambda): it may take another
    invocation only if they outlive the longest that invocation can run, plus a margin."""
    return expires_at - now > timeout + margin


class LambdaHost:
    """Runs functions for the embedded AWS and polls its SQS event source mappings."""

    def __init__(self, *, endpoint: str, region: str, workdir: Path,
                 role_credentials: Callable[[str, str], Credentials],
                 service_credentials: Callable[[], Credentials],
                 local_function: Callable[[str], Any] | None = None,
                 credentials_lifetime: float = ROLE_CREDENTIALS_SECONDS,
                 sandbox_margin: float = SANDBOX_CREDENTIALS_MARGIN_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.endpoint = endpoint
        # In the emulator's process: the stored function for an ARN, so a mapping's poller
        # invokes it as the Lambda service does, without a signed Invoke API call to itself.
        self.local_function = local_function
        self.region = region
        self.workdir = workdir
        self._role_credentials = role_credentials
        self._service_credentials = service_credentials
        # The lifetime STS gives role credentials (injectable, so expiry can be tested quickly).
        self._credentials_lifetime = credentials_lifetime
        self._sandbox_margin = sandbox_margin
        self._clock = clock
        self._idle: dict[tuple, list[Sandbox]] = {}
        self._busy: dict[str, int] = {}  # sandboxes in use, per function name
        self._running: dict[str, int] = {}  # invocations admitted, per function name
        self._current: dict[str, tuple] = {}  # the newest identity seen, per function name
        self._expiry: dict[Sandbox, float] = {}  # when each sandbox's credentials expire
        self._lock = threading.Condition()
        self._credentials: dict[str, tuple[Credentials, float]] = {}  # role -> (credentials, expiry)
        self._stop = threading.Event()
        self._pollers: dict[str, MappingPoller] = {}
        self._clients: dict[tuple[str, Credentials], Any] = {}
        self._writer = _LogWriter(self)

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
                config = Config(read_timeout=MAX_FUNCTION_TIMEOUT_SECONDS + 60,
                                retries={"max_attempts": 0}) if service == "lambda" else None
                self._clients[key] = boto3.client(service, region_name=self.region, endpoint_url=self.endpoint,
                                                  config=config, **credentials.as_client_kwargs())
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
                    retired += self._take_idle(lambda sandbox: sandbox.spec.name == name and sandbox.spec.identity != key)
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
            keep = (sandbox.alive and not self._stop.is_set() and self._current.get(spec.name) == spec.identity
                    and self._may_serve(sandbox))
            if keep:
                self._idle.setdefault(spec.identity, []).append(sandbox)
            self._lock.notify_all()
        if not keep:
            self._close([sandbox])

    def retire_stale_sandboxes(self) -> None:
        """Close idle sandboxes nobody will use again: of a function that was deleted or changed
        since (seen in the emulator's store), or whose credentials would not last another
        invocation. Called by the mapping supervisor, so they go even if no invocation comes."""
        if self.local_function is None:
            return
        with self._lock:
            specs = {idle[0].spec.arn: idle[0].spec for idle in self._idle.values() if idle}
        live: dict[str, tuple | None] = {}
        for arn, spec in specs.items():
            try:
                live[arn] = self.spec_from_moto(self.local_function(arn)).identity
            except Exception as error:  # noqa: BLE001 - only "not found" retires; anything else keeps
                live[arn] = None if function_not_found(error) else spec.identity
        with self._lock:
            for arn, identity in live.items():
                if identity is not None:
                    self._current[specs[arn].name] = identity
            retired = self._take_idle(lambda sandbox: live.get(sandbox.spec.arn, sandbox.spec.identity)
                                      != sandbox.spec.identity or not self._may_serve(sandbox))
        self._close(retired)

    def invoke(self, spec: FunctionSpec, event: Any, *, defer_logs: bool = False,
               reserved_concurrency: int | None = None) -> InvocationResult:
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

    def _run(self, sandbox: Sandbox, request_id: str, event: Any, defer_logs: bool = False) -> InvocationResult:
        spec = sandbox.spec
        with timer("host sandbox round trip"):
            result = sandbox.invoke(event, request_id)
        output = result.output
        status = error_type = None  # the REPORT line's Status and Error Type, when the runtime did not answer
        error = (result.frame or {}).get("error") or (result.frame or {}).get("init_error")
        if result.ending == "timeout":
            status = "timeout"
            message = f"Task timed out after {spec.timeout:.2f} seconds"
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            output.append(f"{stamp} {request_id} {message}")
            error = {"errorMessage": f"{stamp} {request_id} {message}", "errorType": "Sandbox.Timedout"}
        elif result.ending in ("out_of_memory", "exited", "unavailable"):
            status = "error"
            if result.ending == "unavailable":
                error_type = "Runtime.InvalidEntrypoint"
                reason = f"the local Lambda host runs Python runtimes only, not {spec.runtime or '(none)'}"
            else:
                error_type = "Runtime.OutOfMemory" if result.ending == "out_of_memory" else "Runtime.ExitError"
                reason = "Runtime exited with error: " + (
                    "signal: killed" if result.ending == "out_of_memory" else result.exit_reason)
            error = {"errorType": error_type, "errorMessage": f"RequestId: {request_id} Error: {reason}"}
            output += [error["errorMessage"], error_type]
        elif result.ending == "init_error":
            status, error_type = "error", error["errorType"]
        if error is not None:
            payload, function_error = json.dumps(error).encode(), "Unhandled"
        else:
            payload, function_error = result.frame["payload"].encode(), None
        with timer("host write logs"):
            lines = self._write_logs(sandbox, request_id, result, status, error_type, defer_logs)
        lambda_metrics.record_invocation(spec.name, result.duration_ms, function_error is not None, region=self.region)
        return InvocationResult(payload, function_error, lines, result.duration_ms)

    def _write_logs(self, sandbox: Sandbox, request_id: str, result: SandboxOutcome, status: str | None,
                    error_type: str | None, defer: bool = False) -> list[str]:
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
                lines.append(f"INIT_REPORT Init Duration: {result.init_ms:.2f} ms\tPhase: init\tStatus: error"
                             f"\tError Type: {error_type}")
        memory = spec.memory if result.ending == "out_of_memory" else result.max_memory_mb
        billed = math.ceil(result.duration_ms + (result.init_ms or 0.0))
        report = (f"REPORT RequestId: {request_id}\tDuration: {result.duration_ms:.2f} ms\tBilled Duration: {billed} ms"
                  f"\tMemory Size: {spec.memory} MB\tMax Memory Used: {memory} MB")
        if result.init_ms is not None:
            report += f"\tInit Duration: {result.init_ms:.2f} ms"
        if status:
            report += f"\tStatus: {status}" + (f"\tError Type: {error_type}" if error_type else "")
        report += f"\tRuntime Version: {sandbox.runtime_version}"
        lines += [f"START RequestId: {request_id} Version: $LATEST", *result.output, f"END RequestId: {request_id}", report]
        self._writer.add(spec, sandbox.log_stream, [{"timestamp": now, "message": line} for line in lines], wake=defer)
        if not defer:
            self._writer.flush()
        return lines

    def acknowledge(self, sqs: Any, queue_url: str, receipt_handles: list[str]) -> None:
        """Delete messages once the logs queued before them are written (see _LogWriter)."""
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
                wanted = {m["UUID"]: m for m in mappings
                          if m.get("State") == "Enabled" and ":sqs:" in m.get("EventSourceArn", "")
                          and self._function_exists(m["FunctionArn"])}
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
        """A mapping whose function was deleted is not polled (its messages stay in the queue).
        Known only in the emulator's process; elsewhere the poller finds out when it invokes."""
        if self.local_function is None:
            return True
        try:
            self.local_function(function_arn)
        except Exception as error:  # noqa: BLE001 - only "not found" counts
            return not function_not_found(error)
        return True

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


def sqs_record(message: dict, queue_arn: str, region: str) -> dict:
    """An SQS message as the Lambda service hands it to a function (the example event of "Using
    Lambda with Amazon SQS"): a message attribute has `stringValue` or `binaryValue` (whichever
    it has), both list fields, empty, and `dataType`; `md5OfMessageAttributes` is null when the
    message has none."""
    attributes = message.get("Attributes", {})
    message_attributes = {}
    for name, value in message.get("MessageAttributes", {}).items():
        attribute: dict[str, Any] = {}
        if "StringValue" in value:
            attribute["stringValue"] = value["StringValue"]
        if "BinaryValue" in value:
            attribute["binaryValue"] = base64.b64encode(value["BinaryValue"]).decode()
        attribute["stringListValues"] = value.get("StringListValues", [])
        attribute["binaryListValues"] = value.get("BinaryListValues", [])
        attribute["dataType"] = value["DataType"]
        message_attributes[name] = attribute
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {key: attributes[key] for key in (
            "ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp",
            "SequenceNumber", "MessageGroupId", "MessageDeduplicationId", "AWSTraceHeader",
        ) if key in attributes},
        "messageAttributes": message_attributes,
        "md5OfMessageAttributes": message.get("MD5OfMessageAttributes"),
        "md5OfBody": message.get("MD5OfBody"),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


def acknowledged_ids(message_ids: list[str], function_error: str | None, payload: bytes,
                     report_batch_item_failures: bool) -> set[str]:
    """Which messages of a batch the Lambda service deletes after an invocation.

    A function error fails the whole batch. With ReportBatchItemFailures, the listed ids stay;
    a malformed response (not an object, an id that is empty or not in the batch) fails the
    whole batch, as the Lambda service does.
    """
    if function_error:
        return set()
    if not report_batch_item_failures:
        return set(message_ids)
    try:
        response = json.loads(payload) if payload and payload.strip() else None
    except ValueError:
        return set()
    if response is None:
        return set(message_ids)
    if not isinstance(response, dict):
        return set()
    failures = response.get("batchItemFailures")
    if failures is None:
        return set(message_ids)
    if not isinstance(failures, list):
        return set()
    failed = set()
    for failure in failures:
        identifier = failure.get("itemIdentifier") if isinstance(failure, dict) else None
        if not isinstance(identifier, str) or identifier not in message_ids:
            return set()
        failed.add(identifier)
    return set(message_ids) - failed


@dataclass(frozen=True)
class MappedFunction:
    """What a poller needs of its mapping's function, read again before every batch: a new role
    or reserved concurrency takes effect at the next batch."""

    role_arn: str
    reserved_concurrency: int | None
    timeout: int


def reserved_concurrency_of(fn: Any) -> int | None:
    """moto's stored ReservedConcurrentExecutions (None when not set)."""
    value = getattr(fn, "reserved_concurrency", None)
    return None if value is None or value == "" else int(value)


class MappingPoller:
    """Polls one SQS event source mapping until it is disabled or deleted, or its function is.

    Like the Lambda service, several batches are in flight at once, one per poller thread,
    scaled by local/esm_scaling.py from what the receives return and within the mapping's
    MaximumConcurrency and the function's reserved concurrency. Everything is read live: the
    supervisor hands the poller the mapping's current settings every MAPPING_REFRESH_SECONDS,
    and the function (role, reserved concurrency, code) is read before every batch.
    """

    VISIBILITY_REFRESH_SECONDS = 30

    def __init__(self, host: LambdaHost, mapping: dict) -> None:
        self.host = host
        self.mapping = mapping
        self.scaling = Scaling()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()
        self._serial = 0
        self._live = 0  # poller threads running
        self._filters: tuple[str, list[dict]] | None = None  # (FilterCriteria as JSON, patterns)
        self._visibility: tuple[float, float] | None = None  # (read at, queue visibility timeout)
        self._api_function: tuple[str, float, MappedFunction] | None = None  # outside the emulator

    @property
    def alive(self) -> bool:
        return any(thread.is_alive() for thread in self._threads)

    def start(self) -> None:
        log.info("mapping %s: polling %s for %s", self.mapping["UUID"], self.mapping["EventSourceArn"],
                 self.mapping["FunctionArn"])
        self._grow()

    def update(self, mapping: dict) -> None:
        """The mapping's current settings; a raised limit starts pollers up to its floor."""
        self.mapping = mapping
        self._grow()

    def stop(self) -> None:
        """No new receive starts; a batch already received is finished."""
        self._stop.set()

    def _stopped(self) -> bool:
        return self._stop.is_set() or self.host._stop.is_set()

    def _limit(self, function: MappedFunction | None) -> int:
        maximum = (self.mapping.get("ScalingConfig") or {}).get("MaximumConcurrency")
        return concurrency_limit(maximum, function.reserved_concurrency if function else None)

    def _grow(self) -> None:
        try:
            function = self._function()
        except Exception:  # noqa: BLE001 - the limit without the function's part
            function = None
        for _ in range(self.scaling.start(self._limit(function))):
            self._spawn()

    def _spawn(self) -> None:
        with self._threads_lock:
            self._serial += 1
            thread = threading.Thread(target=self._run, name=f"poller-{self.mapping['UUID'][:8]}-{self._serial}",
                                      daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            self._live += 1
        thread.start()

    def _run(self) -> None:
        retired = False
        try:
            while not self._stopped():
                try:
                    retired = self._poll_once()
                except Exception as error:  # noqa: BLE001 - keep polling, as the service does
                    log.warning("mapping %s: %s", self.mapping["UUID"], error)
                    self._stop.wait(1)
                if retired:
                    return
        finally:
            if not retired:
                self.scaling.stopped()
            with self._threads_lock:
                self._live -= 1
                last = self._live == 0 and self._stop.is_set()
            if last:  # what tests and operators wait for: nothing of this mapping receives any more
                log.info("mapping %s: stopped polling", self.mapping["UUID"])

    def _function(self) -> MappedFunction | None:
        """The mapping's function as it is now; None if it was deleted."""
        host, arn = self.host, self.mapping["FunctionArn"]
        if host.local_function is not None:
            try:
                fn = host.local_function(arn)
            except Exception as error:
                if function_not_found(error):
                    return None
                raise
            return MappedFunction(fn.role, reserved_concurrency_of(fn), int(fn.timeout))
        cached, now = self._api_function, time.monotonic()
        if cached and cached[0] == arn and now - cached[1] < MAPPING_REFRESH_SECONDS:
            return cached[2]
        try:
            response = host.client("lambda", host._service_credentials()).get_function(FunctionName=arn)
        except Exception as error:
            if function_not_found(error):
                return None
            raise
        reserved = (response.get("Concurrency") or {}).get("ReservedConcurrentExecutions")
        function = MappedFunction(response["Configuration"]["Role"], reserved, int(response["Configuration"]["Timeout"]))
        self._api_function = (arn, now, function)
        return function

    def _patterns(self, mapping: dict) -> list[dict]:
        """The mapping's filter patterns, compiled again whenever FilterCriteria changes."""
        criteria = mapping.get("FilterCriteria")
        key = json.dumps(criteria, sort_keys=True) if criteria else ""
        cached = self._filters
        if cached is None or cached[0] != key:
            cached = (key, event_filter.compile_filters(criteria))
            self._filters = cached
        return cached[1]

    def _poll_once(self) -> bool:
        """Gather one batch and process it; True if this poller retires (scaling back)."""
        host, mapping = self.host, self.mapping
        function = self._function()
        if function is None:  # deleted: the supervisor stops this mapping's pollers
            self._stop.wait(1)
            return False
        self._patterns(mapping)  # a FilterCriteria that cannot be evaluated: receive nothing
        sqs = host.client("sqs", host.credentials(function.role_arn))
        queue_arn = mapping["EventSourceArn"]
        _, _, _, region, account, queue_name = queue_arn.split(":")
        # Built from the ARN, as the service does: the role needs no sqs:GetQueueUrl.
        queue_url = f"{host.endpoint}/{account}/{queue_name}"
        batch_size = int(mapping.get("BatchSize") or 10)
        received, kept, first_at = self._gather(sqs, queue_url, queue_arn, region, mapping, function, batch_size)
        if not received:
            return self.scaling.retire(True, self._limit(function))
        if self.scaling.after_receive(received, batch_size, self._limit(function), time.monotonic()):
            self._spawn()
        if kept:
            self._process(sqs, queue_url, self.mapping, kept, first_at)
        return self.scaling.retire(False, self._limit(self._function() or function))

    def _gather(self, sqs: Any, queue_url: str, queue_arn: str, region: str, mapping: dict,
                function: MappedFunction, batch_size: int) -> tuple[int, list[tuple[dict, dict]], float]:
        """One batch: a long poll for the first messages, then, with a batching window, more
        receives until the batch is full, the window (counted from the first receive that
        returned messages) has passed or the payload nears 6 MB. A message that matches no
        filter (the mapping's filters when it is received) is deleted at once and does not count
        towards the batch. With a window, if window + function timeout exceed the queue's
        visibility timeout, messages are received with a visibility timeout of window + function
        timeout + 30 s, as the Lambda service does (with-sqs.html).
        Returns (messages received, [(message, record)] to invoke with, when the first came)."""
        window = int(mapping.get("MaximumBatchingWindowInSeconds") or 0)
        visibility: dict[str, int] = {}
        if window and window + function.timeout > self._visibility_timeout(sqs, queue_url):
            visibility["VisibilityTimeout"] = window + function.timeout + 30
        received, size = 0, 0
        kept: list[tuple[dict, dict]] = []
        deadline: float | None = None
        first_at = time.monotonic()
        while True:
            if deadline is None:
                wait = POLL_WAIT_SECONDS
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                wait = min(int(remaining), 20)  # whole seconds; under one second, short polls
            with timer("poller receive"):
                messages = sqs.receive_message(
                    QueueUrl=queue_url, MaxNumberOfMessages=min(10, batch_size - len(kept)),
                    WaitTimeSeconds=wait, AttributeNames=["All"], MessageAttributeNames=["All"], **visibility,
                ).get("Messages", [])
            received += len(messages)
            patterns = self._patterns(self.mapping) if messages else []
            dropped = []
            for message in messages:
                record = sqs_record(message, queue_arn, region)
                if event_filter.record_matches(record, patterns):
                    kept.append((message, record))
                    size += len(message["Body"]) + 1024
                else:
                    dropped.append(message["ReceiptHandle"])
            if dropped:  # the Lambda service deletes what no filter matches, without invoking
                self.host.acknowledge(sqs, queue_url, dropped)
            if deadline is None:
                if not messages or window <= 0:
                    break
                first_at = time.monotonic()
                deadline = first_at + window
            if len(kept) >= batch_size or size >= BATCH_GATHER_BYTES or self._stopped():
                break
            if not messages and wait == 0:
                self._stop.wait(min(0.2, max(deadline - time.monotonic(), 0)))
        return received, kept, first_at

    def _process(self, sqs: Any, queue_url: str, mapping: dict, kept: list[tuple[dict, dict]],
                 received_at: float) -> None:
        """Invoke with the batch and have what succeeded deleted (after its logs are written)."""
        event = {"Records": [record for _, record in kept]}
        with timer("poller invoke"):
            outcome = self._invoke_admitted(sqs, queue_url, mapping["FunctionArn"], event, received_at)
        if outcome is None:
            return  # throttled throughout: the messages come back after the visibility timeout
        function_error, payload = outcome
        ids = [message["MessageId"] for message, _ in kept]
        done = acknowledged_ids(ids, function_error, payload,
                                "ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or []))
        handles = [message["ReceiptHandle"] for message, _ in kept if message["MessageId"] in done]
        if handles:
            # Deleted by the log writer once this invocation's logs are written.
            self.host.acknowledge(sqs, queue_url, handles)

    def _invoke_admitted(self, sqs: Any, queue_url: str, function_arn: str, event: dict,
                         received_at: float) -> tuple[str | None, bytes] | None:
        """Invoke; while the function's reserved concurrency is in use (a throttle, recorded as
        one), back off and try again until the messages' visibility timeout would run out, then
        give up on the batch (services-sqs-errorhandling.html: throttled messages return to the
        queue, and the receive counts towards maxReceiveCount). None if it never ran."""
        delay, longest = THROTTLE_RETRY_SECONDS
        give_up_at: float | None = None
        while True:
            try:
                return self._invoke(function_arn, event)
            except Throttled:
                if give_up_at is None:
                    give_up_at = received_at + self._visibility_timeout(sqs, queue_url)
                if self._stopped() or time.monotonic() + delay >= give_up_at:
                    return None
                self._stop.wait(delay)
                delay = min(delay * 2, longest)

    def _visibility_timeout(self, sqs: Any, queue_url: str) -> float:
        """The queue's visibility timeout (sqs:GetQueueAttributes, which the Lambda service's
        role needs too); 0 (no retry) if it cannot be read."""
        now, cached = time.monotonic(), self._visibility
        if cached and now - cached[0] < self.VISIBILITY_REFRESH_SECONDS:
            return cached[1]
        try:
            seconds = float(sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["VisibilityTimeout"])
                             ["Attributes"]["VisibilityTimeout"])
        except Exception as error:  # noqa: BLE001 - no retry rather than no progress
            log.warning("mapping %s: visibility timeout unknown: %s", self.mapping["UUID"], error)
            seconds = 0.0
        self._visibility = (now, seconds)
        return seconds

    def _invoke(self, function_arn: str, event: dict) -> tuple[str | None, bytes]:
        """(FunctionError, payload) of a synchronous invocation; raises Throttled. In the
        emulator's process the stored function runs directly, as the Lambda service invokes a
        mapping's function (no caller to authorize), with the code and configuration it has
        now; otherwise through the Invoke API."""
        host = self.host
        if host.local_function is not None:
            fn = host.local_function(function_arn)
            result = host.invoke(host.spec_from_moto(fn), event, defer_logs=True,
                                 reserved_concurrency=reserved_concurrency_of(fn))
            if len(result.payload) > MAX_RESPONSE_BYTES:
                return "Unhandled", json.dumps({
                    "errorMessage": f"Response payload size exceeded maximum allowed payload size ({MAX_RESPONSE_BYTES} bytes).",
                    "errorType": "Function.ResponseSizeTooLarge"}).encode()
            return result.function_error, result.payload
        from botocore.exceptions import ClientError

        lambda_api = host.client("lambda", host._service_credentials())
        try:
            response = lambda_api.invoke(FunctionName=function_arn, Payload=json.dumps(event).encode())
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "TooManyRequestsException":
                raise Throttled(str(error)) from None
            raise
        return response.get("FunctionError"), response["Payload"].read()
