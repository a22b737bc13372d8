"""One embedded AWS for a whole test run, shared by every pytest-xdist worker, and stacks deployed
into it from cloud assemblies synthesized by one process (tests/synth_service.py).

The first worker that needs the emulator starts it (and the first to deploy runs `cdk bootstrap`,
once); each worker
holds a lease, a file named after its pid; the last worker to leave stops it, and the emulator
stops itself once no leaseholder is alive (a killed test run leaves nothing running). Each test
module deploys its stack under a prefix of its own, so modules run side by side.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from local.processes import leaseholders_alive, locked
from local.session import LocalSession, free_port
from tests.synth_service import synthesize

# Short local timeouts (keeping the 6x rule) so retries and redrives take seconds, not minutes.
FAST_TIMEOUTS = {"function_timeout_seconds": "2", "visibility_timeout_seconds": "12"}
# Two concurrent invocations per stack unless a test asks for more (the stack's default is 10):
# every sandbox is a cold start, about half a CPU-second (a fresh interpreter importing boto3),
# and the suite is CPU-bound; a full run started 189 of them. Tests about concurrency set
# max_concurrency themselves.
TEST_CONCURRENCY = {"max_concurrency": "2"}


class SharedAWS:
    """The run's embedded AWS, in `root` (a directory every worker of the run sees)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state_dir = root / "aws"
        self.leases = root / "leases"
        self.session = LocalSession(self.state_dir)

    def join(self) -> LocalSession:
        self.root.mkdir(parents=True, exist_ok=True)
        with locked(self.root / "aws.lock"):
            self.leases.mkdir(parents=True, exist_ok=True)
            (self.leases / str(os.getpid())).touch()
            if not self.session.state:
                (self.root / "bootstrapped").unlink(missing_ok=True)
                self.session.start_emulator(free_port(), leases=self.leases)
        return self.session

    def bootstrap_once(self, assembly: Path) -> None:
        """`cdk bootstrap` the first time any worker deploys a stack (modules that deploy
        nothing do not wait for it), reading the caller's synthesized assembly: run in the app's
        directory without one, the CLI would synthesize the app again (a Node and a jsii start,
        13-40 CPU-s) only to bootstrap."""
        with locked(self.root / "aws.lock"):
            marker = self.root / "bootstrapped"
            if not marker.exists():
                self.session.assembly = assembly
                self.session.bootstrap()
                marker.touch()

    def leave(self) -> None:
        with locked(self.root / "aws.lock"):
            (self.leases / str(os.getpid())).unlink(missing_ok=True)
            if not leaseholders_alive(self.leases):
                self.session.stop_emulator()

    def synth(self, context: dict[str, str], outdir: Path, app: Path | None = None) -> Path:
        """The lab's app's cloud assembly for `context` (or another app's: `app`), from the run's
        one synth process (tests/synth_service.py), for `cdk deploy --app <dir>`."""
        return synthesize(self.root, self.leases, context, outdir, app)

    @contextmanager
    def stack(self, context: dict[str, str], workdir: Path) -> Iterator[LocalSession]:
        """The real stack under `context["prefix"]`, deployed with the CDK CLI from an assembly
        synthesized by the run's synth service; deleted afterwards so its pollers stop."""
        session = LocalSession(self.state_dir, context={**TEST_CONCURRENCY, **context})
        assembly = self.synth(session.context, workdir / f"assembly.{session.prefix}")
        self.bootstrap_once(assembly)
        session.deploy(bootstrap=False, assembly=assembly)
        try:
            yield session
        finally:
            session.delete_stack()
