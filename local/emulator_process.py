"""The embedded AWS as a background process (`python -m local serve`): start it, find it through
the state file it writes, stop it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from local.clients import aws_env, shared_client
from local.emulator_main import STATE_FILE, private_dir
from local.paths import ROOT
from local.polling import wait_for
from local.ports import port_in_use
from local.processes import alive
from local.reporting import LocalError, progress

DEFAULT_PORT = 5000


class EmulatorProcess:
    """The emulator of one state directory: started by this object, or found running there."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._process: subprocess.Popen[bytes] | None = None  # set when this process started it

    @property
    def state(self) -> dict[str, Any] | None:
        """The running emulator's state file (endpoint, admin keys, pid), or None if none runs."""
        path = self.state_dir / STATE_FILE
        if not path.exists():
            return None
        state: dict[str, Any] = json.loads(path.read_text())
        return state if alive(state["pid"]) else None

    def require_state(self) -> dict[str, Any]:
        state = self.state
        if not state:
            raise LocalError("the local stack is not running; start it with `make up`")
        return state

    def aws_env(self) -> dict[str, str]:
        """What the AWS CLI, boto3 and the CDK CLI need to talk to the running emulator."""
        return aws_env(self.require_state())

    def client(self, service: str) -> Any:
        """The shared boto3 client for `service` on the running emulator (local/clients.py)."""
        return shared_client(self.aws_env(), service)

    @property
    def started_here(self) -> bool:
        """True when this process started the running emulator (an interrupted `up` stops it)."""
        state = self.state
        return bool(state and self._process is not None and self._process.pid == state["pid"])

    def start(self, port: int, timeout: float = 60, leases: Path | None = None) -> dict[str, Any]:
        """Start the emulator on `port` and wait until it has written its state (reuse a running one)."""
        if running := self.state:
            return running
        if port_in_use(port):
            raise LocalError(
                f"port {port} is already in use by another program; pick another port: "
                f"`make up PORT={port + 1}` (python -m local: --port {port + 1})"
            )
        private_dir(self.state_dir)
        (self.state_dir / STATE_FILE).unlink(missing_ok=True)
        log_path = self.state_dir / "emulator.log"
        with open(log_path, "ab") as log_file:
            process = subprocess.Popen(  # noqa: S603  this Python running our own module, no shell
                [
                    sys.executable,
                    "-m",
                    "local",
                    "serve",
                    "--port",
                    str(port),
                    "--state-dir",
                    str(self.state_dir),
                    *(["--leases", str(leases)] if leases else []),
                ],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # survives the `make up` that started it
            )
        self._process = process

        def ready() -> dict[str, Any]:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
                raise LocalError(f"the embedded AWS exited with {process.returncode}: {' | '.join(tail)}")
            return self.state or {}

        state = wait_for(ready, timeout=timeout, what=f"the embedded AWS on port {port}")
        progress(f"embedded AWS up on {state['endpoint']} (pid {state['pid']}, log {log_path})")
        return state

    def stop(self, timeout: float = 30) -> None:
        """Signal the running emulator and wait until it has gone (nothing to do if none runs)."""
        state = self.state
        if not state:
            return
        os.kill(state["pid"], signal.SIGTERM)
        if self._process is not None and self._process.pid == state["pid"]:
            try:
                self._process.wait(timeout=timeout)  # our child: reap it, or it lingers as a zombie
            except subprocess.TimeoutExpired:
                raise LocalError(
                    f"the embedded AWS (pid {state['pid']}) did not stop within {timeout:.0f} s"
                ) from None
        else:
            wait_for(lambda: not alive(state["pid"]), timeout=timeout, what="the embedded AWS to stop")
        (self.state_dir / STATE_FILE).unlink(missing_ok=True)
