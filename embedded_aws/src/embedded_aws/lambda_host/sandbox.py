"""One execution environment of the local Lambda host (lambda_host/host.py): a function's code
and configuration (FunctionSpec), the warm process of its runtime that serves its invocations one
at a time (Sandbox: Lambda's init phase limit, the function timeout and MemorySize enforced),
and what an invocation comes to (SandboxOutcome inside the sandbox, InvocationResult for the
caller, Throttled when reserved concurrency kept it from running).
"""

from __future__ import annotations

import base64
import json
import math
import queue
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embedded_aws.lambda_host import runtimes

BOOTSTRAP = Path(__file__).resolve().parent / "runtime_bootstrap.py"
FRAME = "\x1e\x1eLAMBDA-RESULT "
INIT_TIMEOUT_SECONDS = 10  # Lambda's init phase limit, separate from the function timeout
MEMORY_POLL_SECONDS = 0.01  # how often a working sandbox's RSS is checked against MemorySize


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
    def identity(self) -> tuple[Any, ...]:
        """Sandboxes are reused only while code and configuration stay the same."""
        return (
            self.name,
            self.code_sha,
            self.handler,
            self.timeout,
            self.memory,
            self.runtime,
            self.role_arn,
            self.environment,
        )


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

    frame: dict[str, Any] | None  # {"payload": json text} or {"error": {...}}; None if none came
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

    It runs the runtime's own interpreter (lambda_host/runtimes.py) with the package, the runtime's
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
        self.process: subprocess.Popen[str] | None = None
        self.peak_kb = 0
        self._killed_for_memory = False
        try:
            self.runtime: runtimes.Runtime | None = runtimes.resolve(spec.runtime)
        except runtimes.RuntimeUnavailable:
            self.runtime = None
            return
        bin_dir = str(Path(self.runtime.python).parent)
        env = dict(
            env,
            AWS_LAMBDA_LOG_STREAM_NAME=self.log_stream,
            LAMBDA_RUNTIME_DIR=str(self.runtime.packages),
            PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        )
        self._started = time.perf_counter()
        self.process = subprocess.Popen(  # noqa: S603  the runtime's interpreter on our bootstrap script, no shell
            [*self.runtime.command, str(BOOTSTRAP)],
            cwd=code_dir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        threading.Thread(target=self._pump, daemon=True).start()

    @property
    def runtime_version(self) -> str:
        """For INIT_START and REPORT lines: which Python runs this sandbox."""
        if self.runtime is None:
            return f"{self.spec.runtime or '(none)'} (not available on the local host)"
        return self.runtime.report

    def _pump(self) -> None:
        assert self.process is not None and self.process.stdout is not None  # noqa: S101  started before any read; narrows the type
        from embedded_aws import profiling

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
        assert self.process is not None  # noqa: S101  started before any read; narrows the type
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

    def _read_frame(self, deadline: float, output: list[str]) -> tuple[dict[str, Any] | None, str | None]:
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
            return json.loads(line[at + len(FRAME) :]), None

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
        assert self.process is not None  # noqa: S101  started before it can exit; narrows the type
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        if code is not None and code < 0:
            names = {
                signal.SIGKILL: "killed",
                signal.SIGSEGV: "segmentation fault",
                signal.SIGABRT: "aborted",
                signal.SIGTERM: "terminated",
                signal.SIGBUS: "bus error",
            }
            number = signal.Signals(-code)
            return f"signal: {names.get(number, number.name.lower())}"
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
                return SandboxOutcome(
                    frame,
                    [],
                    0.0,
                    self.max_memory_mb,
                    init_output,
                    init_ms,
                    ending,
                    self._exit_reason() if ending == "exited" else "",
                )
            self.ready = True
        started = time.perf_counter()
        deadline = time.time() + self.spec.timeout
        request = {
            "event": event,
            "request_id": request_id,
            "function_arn": self.spec.arn,
            "deadline": deadline,
        }
        output: list[str] = []
        assert self.process.stdin is not None  # noqa: S101  started with stdin=PIPE; narrows the type
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            frame, ending = self._read_frame(deadline, output)
        except (BrokenPipeError, OSError):
            frame, ending = None, "exited"
        duration_ms = (time.perf_counter() - started) * 1000
        return SandboxOutcome(
            frame,
            output,
            duration_ms,
            self.max_memory_mb,
            init_output,
            init_ms,
            ending,
            self._exit_reason() if ending == "exited" else "",
        )

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


class Throttled(Exception):
    """The function's reserved concurrency is in use: the invocation did not run."""
