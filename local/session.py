"""Drive a local run from the outside: start the background emulator process, deploy and destroy
the stack with the real CDK CLI, and hand out the environment a user or test needs."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from embedded_aws import ACCOUNT_ID
from local.processes import alive
from local.server import HISTORY_FILE, STATE_FILE, private_dir
from ops.terminal import safe
from stacks.config import CONTEXT_DEFAULTS, DEFAULT_PREFIX, ConfigError, Names, StackConfig

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PORT = 5000
DEFAULT_STATE_DIR = Path(os.environ.get("LOCAL_STATE_DIR") or ROOT / ".local")
# Local stacks go entirely on destroy; otherwise the template is the one an account gets.
LOCAL_CONTEXT = {"removal": "destroy"}
QUIET_NODE = {
    "NODE_NO_WARNINGS": "1",
    "CDK_DISABLE_VERSION_CHECK": "1",
    "CDK_DISABLE_CLI_TELEMETRY": "true",
}

T = TypeVar("T")
_CLIENTS: dict[tuple[str, ...], Any] = {}
_CLIENTS_LOCK = threading.Lock()


class LocalError(RuntimeError):
    """A local run cannot go on; the message says why in one line."""


def parse_context(text: str) -> dict[str, str]:
    """`key=value key2=value2` (make's CONTEXT) as the `-c` values of the local deploy, checked as
    synth checks them, so a bad key or value stops before the emulator starts."""
    context: dict[str, str] = {}
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise LocalError(f"context {text!r} cannot be read: {error}") from None
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise LocalError(f"context {word!r} is not key=value")
        if key not in CONTEXT_DEFAULTS:
            raise LocalError(f"context key {key!r} is unknown: use one of {', '.join(CONTEXT_DEFAULTS)}")
        context[key] = value
    try:
        StackConfig.from_context({**LOCAL_CONTEXT, **context})
    except ConfigError as error:
        raise LocalError(str(error)) from None
    return context


def wait_for(
    check: Callable[[], T], *, timeout: float, interval: float = 0.1, what: str | Callable[[], str]
) -> T:
    """Poll `check` until it returns something truthy, or fail naming `what` after `timeout`
    (a callable `what` is asked then, so the message can say what was last seen)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            described = what() if callable(what) else what
            raise LocalError(f"timed out after {timeout:.0f} s waiting for {described}")
        time.sleep(interval)


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def progress(message: str) -> None:
    """Progress goes to stderr so stdout of `make up` stays paste-ready exports."""
    print(message, file=sys.stderr, flush=True)


def _double_quoted(text: str) -> str:
    """`text` safe inside double quotes in sh (which still expand the $PATH after it)."""
    return "".join("\\" + char if char in '"$`\\' else char for char in text)


class LocalSession:
    """One embedded AWS (a background process) and the stack deployed into it."""

    def __init__(self, state_dir: Path = DEFAULT_STATE_DIR, context: dict[str, str] | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.context = {**LOCAL_CONTEXT, **(context or {})}
        self._process: subprocess.Popen | None = None  # set when this process started it
        # Several stacks (different prefixes) can share one emulator; each keeps its own files.
        self.prefix = self.context.get("prefix", DEFAULT_PREFIX)
        self.outputs_path = self.state_dir / f"outputs.{self.prefix}.json"
        self.assembly: Path | None = None  # a synthesized cloud assembly to deploy, if not the app

    # --- the emulator process -----------------------------------------------------------

    @property
    def state(self) -> dict[str, Any] | None:
        path = self.state_dir / STATE_FILE
        if not path.exists():
            return None
        state = json.loads(path.read_text())
        return state if alive(state["pid"]) else None

    def start_emulator(self, port: int, timeout: float = 60, leases: Path | None = None) -> dict[str, Any]:
        if self.state:
            return self.state
        if port_in_use(port):
            raise LocalError(
                f"port {port} is already in use by another program; pick another port: "
                f"`make up PORT={port + 1}` (python -m local: --port {port + 1})"
            )
        private_dir(self.state_dir)
        (self.state_dir / STATE_FILE).unlink(missing_ok=True)
        log_path = self.state_dir / "emulator.log"
        with open(log_path, "ab") as log_file:
            process = subprocess.Popen(
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

        def ready() -> dict[str, Any] | None:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
                raise LocalError(f"the embedded AWS exited with {process.returncode}: {' | '.join(tail)}")
            return self.state

        state = wait_for(ready, timeout=timeout, what=f"the embedded AWS on port {port}")
        progress(f"embedded AWS up on {state['endpoint']} (pid {state['pid']}, log {log_path})")
        return state

    def stop_emulator(self, timeout: float = 30) -> None:
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

    def require_state(self) -> dict[str, Any]:
        state = self.state
        if not state:
            raise LocalError("the local stack is not running; start it with `make up`")
        return state

    # --- credentials and clients --------------------------------------------------------

    def aws_env(self) -> dict[str, str]:
        """What the AWS CLI, boto3 and the CDK CLI need to talk to the embedded AWS."""
        state = self.require_state()
        return {
            "AWS_ENDPOINT_URL": state["endpoint"],
            "AWS_ACCESS_KEY_ID": state["access_key_id"],
            "AWS_SECRET_ACCESS_KEY": state["secret_access_key"],
            "AWS_REGION": state["region"],
            "AWS_DEFAULT_REGION": state["region"],
        }

    def process_env(self) -> dict[str, str]:
        """This process's environment for a command run against the embedded AWS: its own AWS_*
        variables (a profile, other keys, another endpoint) replaced by `aws_env`."""
        return {
            **{key: value for key, value in os.environ.items() if not key.startswith("AWS_")},
            **self.aws_env(),
        }

    def client(self, service: str) -> Any:
        """A boto3 client for `service` on the running embedded AWS, one per endpoint and keys in
        this process: boto3 clients are thread-safe, and a reused one keeps its connections (a
        poll loop that made a client per check cost a connection and a server thread per check)."""
        env = self.aws_env()
        key = (service, env["AWS_ENDPOINT_URL"], env["AWS_REGION"], env["AWS_ACCESS_KEY_ID"])
        with _CLIENTS_LOCK:
            if key not in _CLIENTS:
                _CLIENTS[key] = self.new_client(service)
            return _CLIENTS[key]

    def new_client(self, service: str, **config: Any) -> Any:
        """A client of its own (its own connections), with the admin keys and any botocore
        `Config` settings: for callers that need several clients at once, or other settings."""
        import boto3
        from botocore.config import Config

        env = self.aws_env()
        return boto3.client(
            service,
            endpoint_url=env["AWS_ENDPOINT_URL"],
            region_name=env["AWS_REGION"],
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            config=Config(**config) if config else None,
        )

    # --- injected faults (local/faults.py) ---------------------------------------------

    def inject_fault(
        self, *, action: str, table: str, code: str, status: int, count: int, message: str | None = None
    ) -> None:
        """The next `count` DynamoDB `action` requests on `table` fail with `code`/`status`."""
        from embedded_aws import FAULTS_FILE, add_fault

        self.require_state()
        add_fault(
            self.state_dir / FAULTS_FILE,
            action=action,
            table=table,
            code=code,
            status=status,
            count=count,
            message=message,
        )

    def slow_down(self, *, action: str, table: str, latency_ms: float) -> None:
        """Every DynamoDB `action` request on `table` waits `latency_ms` first (0: no longer)."""
        from embedded_aws import FAULTS_FILE, add_latency

        self.require_state()
        add_latency(self.state_dir / FAULTS_FILE, action=action, table=table, latency_ms=latency_ms)

    def clear_faults(self, table: str | None = None) -> int:
        from embedded_aws import FAULTS_FILE, clear_faults

        self.require_state()
        return clear_faults(self.state_dir / FAULTS_FILE, table)

    def faults(self) -> list[dict[str, Any]]:
        """The injected fault rules with their `remaining` and `served` counts."""
        from embedded_aws import FAULTS_FILE, read_faults

        return read_faults(self.state_dir / FAULTS_FILE)

    # --- the CDK CLI --------------------------------------------------------------------

    def cdk(self, *args: str, timeout: float = 600) -> str:
        """Run the pinned CDK CLI against the embedded AWS. With an assembly (`deploy(assembly=)`),
        it deploys that cloud assembly instead of synthesizing the app again."""
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("AWS_") and key not in ("CDK_DEFAULT_ACCOUNT", "CDK_DEFAULT_REGION")
        }
        env.update(QUIET_NODE)
        env.update(self.aws_env())
        if self.assembly:
            source = ["--app", str(self.assembly)]
        else:
            context = [item for key, value in self.context.items() for item in ("-c", f"{key}={value}")]
            source = [*context, "--output", str(self.state_dir / f"cdk.out.{self.prefix}")]
        command = ["npx", "--no-install", "cdk", *args, *source, "--ci", "--no-color"]
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            tail = [line for line in result.stderr.strip().splitlines() if line.strip()][-4:]
            raise LocalError(f"cdk {args[0]} failed ({result.returncode}): {' | '.join(tail)}")
        return result.stdout + result.stderr

    def bootstrap(self) -> None:
        progress("cdk bootstrap ...")
        self.cdk("bootstrap", f"aws://{ACCOUNT_ID}/{self.require_state()['region']}")

    def deploy(self, *, bootstrap: bool = True, assembly: Path | None = None) -> dict[str, str]:
        """Deploy the stack (synthesized by the CLI, or the given cloud assembly); its outputs."""
        if assembly is not None:
            self.assembly = assembly
        if bootstrap:
            self.bootstrap()
        progress("cdk deploy ...")
        self.cdk(
            "deploy",
            "--require-approval",
            "never",
            "--outputs-file",
            str(self.outputs_path),
        )
        return self.outputs()

    def destroy(self) -> None:
        progress("cdk destroy ...")
        self.cdk("destroy", "--force")
        self.outputs_path.unlink(missing_ok=True)

    @property
    def stack_name(self) -> str:
        return Names(self.prefix).stack

    def delete_stack(self, timeout: float = 60) -> None:
        """What `cdk destroy` does, through CloudFormation directly (no CLI or synth start-up):
        `make down` and the tests that do not test the CLI's destroy itself. Termination
        protection (removal=retain) is turned off first."""
        from botocore.exceptions import ClientError

        cloudformation = self.client("cloudformation")
        try:  # a removal=retain stack is protected (the operator's step before `cdk destroy`)
            cloudformation.update_termination_protection(
                StackName=self.stack_name, EnableTerminationProtection=False
            )
        except ClientError as error:
            if "does not exist" not in str(error):  # no stack: the delete below is a no-op too
                raise
        cloudformation.delete_stack(StackName=self.stack_name)

        def gone() -> bool:
            try:
                stacks = cloudformation.describe_stacks(StackName=self.stack_name)["Stacks"]
            except ClientError:
                return True
            failed = [stack for stack in stacks if stack["StackStatus"] == "DELETE_FAILED"]
            if failed:
                raise LocalError(
                    f"deleting stack {self.stack_name} failed: {failed[0].get('StackStatusReason', '?')}"
                )
            return all(stack["StackStatus"] == "DELETE_COMPLETE" for stack in stacks)

        wait_for(gone, timeout=timeout, what=f"stack {self.stack_name} to be deleted")
        self.outputs_path.unlink(missing_ok=True)

    def outputs(self) -> dict[str, str]:
        path = self.outputs_path
        if not path.exists():
            raise LocalError("no stack outputs; deploy the stack first (`make up`)")
        stacks = json.loads(path.read_text())
        return next(iter(stacks.values()))

    # --- what the commands do -----------------------------------------------------------

    @property
    def started_here(self) -> bool:
        """True when this process started the running emulator (an interrupted `up` stops it)."""
        state = self.state
        return bool(state and self._process is not None and self._process.pid == state["pid"])

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
        return "; ".join(f"{kind}: {', '.join(names)}" for kind, names in found.items() if names)

    def leftovers(self) -> dict[str, list[str]]:
        """Everything of the stack that still exists after destroy, by service (empty lists = clean)."""
        prefix = self.prefix
        stack_name = f"{prefix}-consumer"
        lambda_api, iam, logs, cloudwatch = (self.client(s) for s in ("lambda", "iam", "logs", "cloudwatch"))
        stacks = self.client("cloudformation").list_stacks()["StackSummaries"]
        return {
            "stacks": [
                s["StackName"]
                for s in stacks
                if s["StackName"] == stack_name and s["StackStatus"] != "DELETE_COMPLETE"
            ],
            "event source mappings": [
                m["UUID"]
                for m in lambda_api.list_event_source_mappings()["EventSourceMappings"]
                if m["FunctionArn"].split(":")[-1].startswith(prefix)
            ],
            "functions": [
                f["FunctionName"]
                for f in lambda_api.list_functions()["Functions"]
                if f["FunctionName"].startswith(prefix)
            ],
            "queues": [
                u for u in self.client("sqs").list_queues(QueueNamePrefix=prefix).get("QueueUrls", [])
            ],
            "tables": [
                t for t in self.client("dynamodb").list_tables()["TableNames"] if t.startswith(prefix)
            ],
            "roles": [
                r["RoleName"] for r in iam.list_roles()["Roles"] if r["RoleName"].startswith(stack_name)
            ],
            "policies": [
                p["PolicyName"]
                for p in iam.list_policies(Scope="Local")["Policies"]
                if p["PolicyName"].startswith(prefix)
            ],
            "log groups": [
                g["logGroupName"]
                for group_prefix in (f"/aws/lambda/{prefix}", f"{prefix}-")
                for g in logs.describe_log_groups(logGroupNamePrefix=group_prefix)["logGroups"]
            ],
            "alarms": [
                a["AlarmName"]
                for a in cloudwatch.describe_alarms(AlarmNamePrefix=f"{prefix}-")["MetricAlarms"]
            ],
            "dashboards": [
                d["DashboardName"]
                for d in cloudwatch.list_dashboards(DashboardNamePrefix=prefix)["DashboardEntries"]
                if d["DashboardName"] == prefix
            ],
            "topics": [
                t["TopicArn"]
                for t in self.client("sns").list_topics()["Topics"]
                if t["TopicArn"].rsplit(":", 1)[-1].startswith(f"{prefix}-")
            ],
            "query definitions": [
                q["name"]
                for q in logs.describe_query_definitions(queryDefinitionNamePrefix=f"{prefix}/")[
                    "queryDefinitions"
                ]
            ],
        }

    def local_queue_url(self, queue_url: str) -> str:
        """Stack outputs carry AWS-style queue URLs; give the user the emulator's own."""
        account, name = queue_url.rstrip("/").split("/")[-2:]
        return f"{self.require_state()['endpoint']}/{account}/{name}"

    def user_env(self) -> dict[str, str]:
        outputs = self.outputs()
        return {
            **self.aws_env(),
            "QUEUE_URL": self.local_queue_url(outputs["QueueUrl"]),
            "DLQ_URL": self.local_queue_url(outputs["DeadLetterQueueUrl"]),
            "ORDERS_TABLE": outputs["OrdersTableName"],
            "REFERENCE_TABLE": outputs["ReferenceTableName"],
            "FUNCTION_NAME": outputs["FunctionName"],
            "LOG_GROUP": outputs["LogGroupName"],
            "OPS_HISTORY": str(self.state_dir / HISTORY_FILE),
        }

    def exports(self) -> str:
        """`export NAME=value` lines, one per line, ready to paste or `eval`. The first puts the
        project's AWS CLI v2 (local/aws_cli.py) first on PATH, so `aws` in the docs is one that
        honours AWS_ENDPOINT_URL for every service."""
        from local.aws_cli import BIN_DIR, aws

        lines = []
        if aws().exists():
            lines.append(f'export PATH="{_double_quoted(str(BIN_DIR))}:$PATH"')
        else:
            progress(
                "warning: the project's AWS CLI v2 is not installed (`make setup` retries); "
                "`aws` in the docs needs a CLI v2 of your own"
            )
        lines += [f"export {key}={shlex.quote(value)}" for key, value in self.user_env().items()]
        return "\n".join(lines)

    def status(self) -> str:
        state = self.state
        if not state:
            return "local stack: not running"
        deployed = self.outputs_path.exists()
        return safe(
            f"local stack: embedded AWS on {state['endpoint']} (pid {state['pid']}), "
            f"stack {'deployed' if deployed else 'not deployed'}"
        )
