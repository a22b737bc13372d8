"""Drive a local run from the outside: `LocalSession` composes the emulator process, its fault
rules and one stack's deployment, and runs the commands (`up`, `down`, `status`) from them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from local.clients import environment_without_aws, new_client
from local.context import LOCAL_CONTEXT, parse_context
from local.deploy import QUIET_NODE, StackDeployment
from local.emulator_main import HISTORY_FILE
from local.emulator_process import DEFAULT_PORT, EmulatorProcess
from local.exports import env_exports, local_queue_url, path_export, user_env
from local.faults import InjectedFaults
from local.leftovers import describe_leftovers, find_leftovers
from local.paths import DEFAULT_STATE_DIR, ROOT
from local.polling import wait_for
from local.ports import free_port, port_in_use
from local.reporting import LocalError, progress
from ops.terminal import safe

# Where callers (tests, bench, ops's docs) have always found these.
__all__ = [
    "DEFAULT_PORT",
    "DEFAULT_STATE_DIR",
    "LOCAL_CONTEXT",
    "QUIET_NODE",
    "ROOT",
    "LocalError",
    "LocalSession",
    "free_port",
    "parse_context",
    "port_in_use",
    "progress",
    "wait_for",
]


class LocalSession:
    """One embedded AWS (a background process) and the stack deployed into it."""

    def __init__(self, state_dir: Path = DEFAULT_STATE_DIR, context: dict[str, str] | None = None) -> None:
        self.emulator = EmulatorProcess(Path(state_dir))
        self.injected_faults = InjectedFaults(self.emulator)
        self.deployment = StackDeployment(
            emulator=self.emulator, context={**LOCAL_CONTEXT, **(context or {})}
        )

    # --- what the parts hold ----------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        return self.emulator.state_dir

    @property
    def context(self) -> dict[str, str]:
        return self.deployment.context

    @property
    def prefix(self) -> str:
        return self.deployment.prefix

    @property
    def outputs_path(self) -> Path:
        return self.deployment.outputs_path

    @property
    def assembly(self) -> Path | None:
        return self.deployment.assembly

    @assembly.setter
    def assembly(self, path: Path | None) -> None:
        self.deployment.assembly = path

    @property
    def stack_name(self) -> str:
        return self.deployment.stack_name

    # --- the emulator process (local/emulator_process.py) -----------------------------------

    @property
    def state(self) -> dict[str, Any] | None:
        return self.emulator.state

    @property
    def started_here(self) -> bool:
        """True when this process started the running emulator (an interrupted `up` stops it)."""
        return self.emulator.started_here

    def start_emulator(self, port: int, timeout: float = 60, leases: Path | None = None) -> dict[str, Any]:
        return self.emulator.start(port, timeout, leases)

    def stop_emulator(self, timeout: float = 30) -> None:
        self.emulator.stop(timeout)

    def require_state(self) -> dict[str, Any]:
        return self.emulator.require_state()

    # --- credentials and clients (local/clients.py) -----------------------------------------

    def aws_env(self) -> dict[str, str]:
        """What the AWS CLI, boto3 and the CDK CLI need to talk to the embedded AWS."""
        return self.emulator.aws_env()

    def process_env(self) -> dict[str, str]:
        """This process's environment for a command run against the embedded AWS: its own AWS_*
        variables (a profile, other keys, another endpoint) replaced by `aws_env`."""
        return {**environment_without_aws(), **self.aws_env()}

    def client(self, service: str) -> Any:
        """A boto3 client for `service` on the running embedded AWS, shared in this process."""
        return self.emulator.client(service)

    def new_client(self, service: str, **config: Any) -> Any:
        """A client of its own (its own connections), with the admin keys and any botocore
        `Config` settings: for callers that need several clients at once, or other settings."""
        return new_client(self.aws_env(), service, **config)

    # --- injected faults (local/faults.py) --------------------------------------------------

    def inject_fault(
        self, *, action: str, table: str, code: str, status: int, count: int, message: str | None = None
    ) -> None:
        """The next `count` DynamoDB `action` requests on `table` fail with `code`/`status`."""
        self.injected_faults.inject(
            action=action, table=table, code=code, status=status, count=count, message=message
        )

    def slow_down(self, *, action: str, table: str, latency_ms: float) -> None:
        """Every DynamoDB `action` request on `table` waits `latency_ms` first (0: no longer)."""
        self.injected_faults.slow_down(action=action, table=table, latency_ms=latency_ms)

    def clear_faults(self, table: str | None = None) -> int:
        return self.injected_faults.clear(table)

    def faults(self) -> list[dict[str, Any]]:
        """The injected fault rules with their `remaining` and `served` counts."""
        return self.injected_faults.rules()

    # --- the stack (local/deploy.py) --------------------------------------------------------

    def cdk(self, *args: str, timeout: float = 600) -> str:
        return self.deployment.cdk(*args, timeout=timeout)

    def bootstrap(self) -> None:
        self.deployment.bootstrap()

    def deploy(self, *, bootstrap: bool = True, assembly: Path | None = None) -> dict[str, str]:
        """Deploy the stack (synthesized by the CLI, or the given cloud assembly); its outputs."""
        return self.deployment.deploy(bootstrap=bootstrap, assembly=assembly)

    def destroy(self) -> None:
        self.deployment.destroy()

    def delete_stack(self, timeout: float = 60) -> None:
        """What `cdk destroy` does, through CloudFormation directly (local/deploy.py)."""
        self.deployment.delete_stack(timeout)

    def outputs(self) -> dict[str, str]:
        return self.deployment.outputs()

    def leftovers(self) -> dict[str, list[str]]:
        """Everything of the stack that still exists after destroy, by service (empty lists = clean)."""
        return find_leftovers(self.client, self.prefix)

    # --- what the user gets (local/exports.py) ----------------------------------------------

    def local_queue_url(self, queue_url: str) -> str:
        """Stack outputs carry AWS-style queue URLs; give the user the emulator's own."""
        return local_queue_url(self.require_state()["endpoint"], queue_url)

    def user_env(self) -> dict[str, str]:
        outputs = self.outputs()
        return user_env(self.aws_env(), outputs, self.state_dir / HISTORY_FILE)

    def exports(self) -> str:
        """`export NAME=value` lines, one per line, ready to paste or `eval`; the first puts the
        project's AWS CLI v2 first on PATH."""
        return "\n".join([*path_export(), *env_exports(self.user_env())])

    # --- what the commands do ---------------------------------------------------------------

    def up(self, port: int | None = None) -> dict[str, str]:
        """Start the emulator and deploy, or reuse what runs: a running stack is reused as it is
        (no second deploy); asking for another port than the running one is refused."""
        state = self.state
        if state:
            running = int(state["endpoint"].rsplit(":", 1)[-1])
            if port is not None and port != running:
                raise LocalError(
                    f"a local stack already runs on port {running}; to move it to {port}: "
                    f"`make down`, then `make up PORT={port}`"
                )
            if self.outputs_path.exists():
                progress(
                    f"reusing the local stack already running on {state['endpoint']} "
                    f"(to deploy changes: `make down`, then `make up`)"
                )
                self._announce_view(state)
                return self.outputs()
            progress(f"reusing the embedded AWS already running on {state['endpoint']}")
        state = self.start_emulator(DEFAULT_PORT if port is None else port)
        outputs = self.deploy()
        self._announce_view(state)
        return outputs

    @staticmethod
    def _announce_view(state: dict[str, Any]) -> None:
        if state.get("view_url"):
            progress(f"live view: {state['view_url']}")

    def interrupted(self, command: str) -> str:
        """What an interrupted `up`/`demo` leaves, in one line: it stops an emulator it started
        itself (its state is in memory, so nothing half-deployed survives), and names one it
        found running."""
        if self.started_here:
            self.stop_emulator()
            return f"interrupted: {command} stopped the embedded AWS it had started; nothing is left running"
        state = self.state
        if not state:
            return "interrupted: nothing is left running"
        deployed = "deployed" if self.outputs_path.exists() else "possibly half-deployed"
        return (
            f"interrupted: the embedded AWS on {state['endpoint']} is still running (stack {deployed}); "
            f"`make down` stops it"
        )

    def down(self) -> None:
        """Delete the stack, say whether anything of it is left, and stop everything, even when
        the delete fails: the emulator keeps its state in memory, so once it stops nothing of the
        stack remains either way. The stack is deleted through CloudFormation, as `cdk destroy`
        does, without the CLI's synth (make demo runs the CLI's destroy)."""
        if not self.state:
            progress("no local stack is running: nothing to stop")
            return
        failure, left = None, ""
        deployed = self.outputs_path.exists()
        if deployed:
            progress("deleting the stack ...")
            try:
                self.delete_stack()
            except LocalError as error:
                failure = str(error)
            left = self._remaining()
        self.stop_emulator()
        if not deployed:
            progress("local stack down: embedded AWS stopped (no stack was deployed)")
        elif failure:
            raise LocalError(
                f"{failure}; still there when the emulator stopped: {left or 'nothing'}; "
                f"everything stopped anyway"
            )
        else:
            progress(
                f"local stack down: stack deleted ({f'left: {left}' if left else 'nothing of it left'}), "
                f"embedded AWS stopped"
            )

    def _remaining(self) -> str:
        try:
            found = self.leftovers()
        except Exception as error:  # noqa: BLE001 - a report, not a second failure
            return f"(could not list: {error})"
        return describe_leftovers(found)

    def status(self) -> str:
        state = self.state
        if not state:
            return "local stack: not running"
        deployed = self.outputs_path.exists()
        return safe(
            f"local stack: embedded AWS on {state['endpoint']} (pid {state['pid']}), "
            f"stack {'deployed' if deployed else 'not deployed'}"
        )
