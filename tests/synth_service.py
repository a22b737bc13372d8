"""One process synthesizes the cloud assembly of every stack a test run deploys.

A process's first synth pays for jsii's start (its Node runtime loading aws-cdk-lib): 4-6
CPU-seconds, where a later synth in the same process takes about one. The end-to-end modules run
in every xdist worker and each deploys a stack of its own, so every worker paid that start, eight
of them on two cores at the same moment, when the long modules all begin. Instead the first
worker that needs an assembly starts this service, and every worker asks it over a Unix socket in
the run's shared directory (private to the user: nothing a browser can reach). It answers one
request at a time, and exits once no leaseholder of the run's embedded AWS is alive, as the
emulator does (tests/shared_aws.py).

    python -m tests.synth_service <the run's shared directory> <its leases directory>

The modules that need the synthesized objects themselves (tests/infra) synthesize in their own
process, all in one worker (the `jsii` mark, conftest.py).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from local.polling import wait_for
from local.processes import leaseholders_alive, locked

ROOT = Path(__file__).resolve().parent.parent
SOCKET, LOCK, LOG = "synth.sock", "synth.lock", "synth.log"
# A request waits behind the ones before it: at the start of a run every worker asks at once.
ANSWER_TIMEOUT = 300
IDLE_CHECK_SECONDS = 1.0


def _answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _start(root: Path, leases: Path) -> None:
    with open(root / LOG, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.synth_service", str(root), str(leases)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a worker's Ctrl-C or exit does not end the others' synths
        )

    def ready() -> bool:
        if process.poll() is not None:
            tail = (root / LOG).read_text(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"the synth service exited with {process.returncode}: {' | '.join(tail)}")
        return _answers(root / SOCKET)

    wait_for(ready, timeout=120, what="the synth service")


def synthesize(
    root: Path, leases: Path, context: dict[str, str], outdir: Path, app: Path | None = None
) -> Path:
    """The cloud assembly of the lab's app (or of another app, `app`: its app.py) with `context`
    (cdk.json's first), written to `outdir` by the run's synth service, started here if it is not
    running yet (it exits once no process holds a lease in `leases`)."""
    with locked(root / LOCK):
        if not _answers(root / SOCKET):
            _start(root, leases)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(ANSWER_TIMEOUT)
        connection.connect(str(root / SOCKET))
        request = {"context": context, "outdir": str(outdir), **({"app": str(app)} if app else {})}
        connection.sendall(json.dumps(request).encode() + b"\n")
        answer: dict[str, Any] = json.loads(connection.makefile("rb").readline() or b"{}")
    if "outdir" not in answer:
        raise RuntimeError(f"synth of {context} failed: {answer.get('error', 'no answer')}")
    return outdir


def _answer(request: bytes) -> dict[str, Any]:
    from tests.conftest import synth_app, synth_assembly

    try:
        asked = json.loads(request)
        if "app" in asked:
            outdir = synth_app(Path(asked["app"]), asked["context"], Path(asked["outdir"]))
        else:
            outdir = synth_assembly(asked["context"], Path(asked["outdir"]))
    except Exception as error:  # noqa: BLE001  any failure is the asker's to report
        return {"error": f"{type(error).__name__}: {error}"}
    return {"outdir": str(outdir)}


def serve(root: Path, leases: Path) -> None:
    import aws_cdk  # noqa: F401  loaded before the socket answers, not on the first request

    path = root / SOCKET
    path.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(64)  # every worker of a run may ask at once
        server.settimeout(IDLE_CHECK_SECONDS)
        while True:
            try:
                connection, _ = server.accept()
            except TimeoutError:
                if not leaseholders_alive(leases):
                    break
                continue
            with connection:
                connection.settimeout(ANSWER_TIMEOUT)
                request = connection.makefile("rb").readline()
                if request:  # empty: a probe that only connected
                    connection.sendall(json.dumps(_answer(request)).encode() + b"\n")
    path.unlink(missing_ok=True)


if __name__ == "__main__":
    serve(Path(sys.argv[1]), Path(sys.argv[2]))
