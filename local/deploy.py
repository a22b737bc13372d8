"""One stack in the embedded AWS: deployed and destroyed with the pinned CDK CLI (synthesizing the
app, or from a cloud assembly), or deleted through CloudFormation directly; its outputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from embedded_aws import ACCOUNT_ID
from local.clients import environment_without_aws
from local.emulator_process import EmulatorProcess
from local.paths import NODE_BIN, ROOT
from local.polling import wait_for
from local.reporting import LocalError, progress
from stacks.config import DEFAULT_PREFIX, Names

QUIET_NODE = {
    "NODE_NO_WARNINGS": "1",
    "CDK_DISABLE_VERSION_CHECK": "1",
    "CDK_DISABLE_CLI_TELEMETRY": "true",
}


class StackDeployment:
    """The stack of one prefix: several stacks (different prefixes) can share one emulator, and
    each keeps its own outputs file and cloud assembly in the state directory."""

    def __init__(self, *, emulator: EmulatorProcess, context: dict[str, str]) -> None:
        self.emulator = emulator
        self.context = context
        self.prefix = context.get("prefix", DEFAULT_PREFIX)
        self.outputs_path = emulator.state_dir / f"outputs.{self.prefix}.json"
        self.assembly: Path | None = None  # a synthesized cloud assembly to deploy, if not the app

    @property
    def stack_name(self) -> str:
        return Names(self.prefix).stack

    @property
    def deployed(self) -> bool:
        """This driver deployed the stack and has not deleted it (its outputs file is there)."""
        return self.outputs_path.exists()

    def cdk(self, *args: str, timeout: float = 600) -> str:
        """Run the pinned CDK CLI against the embedded AWS. With an assembly (`deploy(assembly=)`),
        it deploys that cloud assembly instead of synthesizing the app again."""
        env = environment_without_aws("CDK_DEFAULT_ACCOUNT", "CDK_DEFAULT_REGION")
        env.update(QUIET_NODE)
        env.update(self.emulator.aws_env())
        if self.assembly:
            source = ["--app", str(self.assembly)]
        else:
            context = [item for key, value in self.context.items() for item in ("-c", f"{key}={value}")]
            source = [*context, "--output", str(self.emulator.state_dir / f"cdk.out.{self.prefix}")]
        # The CDK CLI pinned in package.json, on package.json's Node first on PATH, as `npx cdk`
        # runs it, without npx's own Node start (a third of a CPU-second a call); argv, no shell.
        env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
        command = [str(NODE_BIN / "cdk"), *args, *source, "--ci", "--no-color"]
        result = subprocess.run(  # noqa: S603
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
        if result.returncode == -signal.SIGINT:
            # Ctrl-C reached the CLI too, and it may end before this process sees its own SIGINT.
            raise KeyboardInterrupt
        if result.returncode != 0:
            tail = [line for line in result.stderr.strip().splitlines() if line.strip()][-4:]
            raise LocalError(f"cdk {args[0]} failed ({result.returncode}): {' | '.join(tail)}")
        return result.stdout + result.stderr

    def bootstrap(self) -> None:
        progress("cdk bootstrap ...")
        self.cdk("bootstrap", f"aws://{ACCOUNT_ID}/{self.emulator.require_state()['region']}")

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

    def delete_stack(self, timeout: float = 60) -> None:
        """What `cdk destroy` does, through CloudFormation directly (no CLI or synth start-up):
        `make down` and the tests that do not test the CLI's destroy itself. Termination
        protection (removal=retain) is turned off first."""
        from botocore.exceptions import ClientError

        cloudformation = self.emulator.client("cloudformation")
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
        """The stack's outputs, as `cdk deploy` wrote them."""
        path = self.outputs_path
        if not path.exists():
            raise LocalError("no stack outputs; deploy the stack first (`make up`)")
        stacks: dict[str, dict[str, str]] = json.loads(path.read_text())
        return next(iter(stacks.values()))
