"""`make up`/`make down` as a user meets them when things go sideways: Ctrl-C in the middle of
`up`, a busy port, `down` with nothing running. Each one line that says what happened and what
to do, and nothing left running that the user does not know of."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess

import pytest

from local.processes import alive
from local.session import free_port, port_in_use, wait_for
from tests.documented import ROOT, clean_env

pytestmark = [pytest.mark.e2e]


def make(target: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", f"make -s {target}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_ctrl_c_during_up_stops_what_it_started(tmp_path):
    """Ctrl-C (SIGINT to the foreground process group) while `make up` deploys: one line saying
    the embedded AWS it started is stopped, no traceback, exit 130, the emulator gone."""
    port = free_port()
    state = tmp_path / "state"
    env = clean_env(tmp_path / "home", PORT=str(port), LOCAL_STATE_DIR=str(state))
    up = subprocess.Popen(
        ["bash", "-c", "make -s up"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    try:

        def deploying() -> bool:
            assert up.stderr is not None  # piped above
            seen.append(up.stderr.readline())
            assert seen[-1], f"make up ended early: {''.join(seen)}"
            return seen[-1].startswith("cdk ")

        wait_for(deploying, timeout=120, what="make up to start the CDK CLI")
        emulator = json.loads((state / "emulator.json").read_text())["pid"]
        os.killpg(up.pid, signal.SIGINT)
        stdout, rest = up.communicate(timeout=120)
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGKILL)
    ours = [line for line in rest.splitlines() if not line.startswith("make")]
    assert ours == ["interrupted: `up` stopped the embedded AWS it had started; nothing is left running"], (
        rest
    )
    assert "Traceback" not in rest and stdout == ""
    assert not alive(emulator) and not port_in_use(port)


def test_busy_port_names_the_make_variable(tmp_path):
    """A port another program holds: refused before anything starts, naming `make up PORT=`."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        env = clean_env(tmp_path / "home", PORT=str(port), LOCAL_STATE_DIR=str(tmp_path / "state"))
        done = make("up", env)
    assert done.returncode != 0 and done.stdout == ""
    assert (
        f"error: port {port} is already in use by another program; pick another port: "
        f"`make up PORT={port + 1}` (python -m local: --port {port + 1})"
    ) in done.stderr


def test_down_with_nothing_running_says_so(tmp_path):
    """`make down` when no local stack runs: exit 0 and says there was nothing to stop."""
    env = clean_env(tmp_path / "home", LOCAL_STATE_DIR=str(tmp_path / "state"))
    done = make("down", env)
    assert done.returncode == 0
    assert done.stderr.splitlines()[-1] == "no local stack is running: nothing to stop"
