"""The local-run driver (local/session.py): `down` stops everything whatever fails, and says
what is left of the stack."""

from __future__ import annotations

import pytest

from local.session import LocalError, LocalSession


def session_with(tmp_path, *, delete_fails: bool, left: dict):
    stopped = []

    class Stub(LocalSession):
        state = {"pid": 1, "port": 1}  # noqa: RUF012 - one stub per test

        def delete_stack(self, timeout=60):
            if delete_fails:
                raise LocalError("deleting stack labex-q05-consumer failed: queue busy")

        def leftovers(self):
            return left

        def stop_emulator(self, timeout=30):
            stopped.append(True)

    session = Stub(tmp_path)
    session.outputs_path.write_text("{}")
    return session, stopped


def test_down_stops_everything_even_when_the_delete_fails(tmp_path):
    """A failed delete still stops the emulator, then says what failed and what was left."""
    session, stopped = session_with(
        tmp_path, delete_fails=True, left={"queues": ["http://localhost:1/123456789012/p-jobs"], "tables": []}
    )
    with pytest.raises(LocalError) as raised:
        session.down()
    assert stopped == [True]
    assert str(raised.value) == (
        "deleting stack labex-q05-consumer failed: queue busy; still there when the emulator "
        "stopped: queues: http://localhost:1/123456789012/p-jobs; everything stopped anyway"
    )


def test_down_says_nothing_of_the_stack_is_left(tmp_path, capsys):
    """A clean delete ends in one line saying nothing of the stack is left."""
    session, stopped = session_with(tmp_path, delete_fails=False, left={"queues": [], "tables": []})
    session.down()
    assert stopped == [True]
    assert capsys.readouterr().err.splitlines()[-1] == (
        "local stack down: stack deleted (nothing of it left), embedded AWS stopped"
    )


def test_exports_eval_in_sh_to_the_project_cli_and_the_stack_names(tmp_path, monkeypatch):
    """`eval "$(make up)"` in sh puts the project's CLI first on PATH, even from a directory whose
    name holds quotes and `$`, and sets each variable to exactly its value."""
    import subprocess

    from local import aws_cli
    from local.exports import env_exports, path_export

    bin_dir = tmp_path / 'odd "$HOME` dir'
    bin_dir.mkdir()
    (bin_dir / "aws").touch()
    monkeypatch.setattr(aws_cli, "BIN_DIR", bin_dir)
    monkeypatch.setattr(aws_cli, "aws", lambda: bin_dir / "aws")
    text = "\n".join([*path_export(), *env_exports({"QUEUE_URL": "http://h:1/1/q's $x"})])
    script = 'eval "$1"; printf "%s\\n%s" "${PATH%%:*}" "$QUEUE_URL"'
    done = subprocess.run(["sh", "-c", script, "sh", text], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [str(bin_dir), "http://h:1/1/q's $x"]


def test_exports_warn_when_the_project_cli_is_missing(tmp_path, monkeypatch, capsys):
    """Without the project's AWS CLI v2 there is no PATH line, and stderr says why in one line."""
    from local import aws_cli
    from local.exports import path_export

    monkeypatch.setattr(aws_cli, "aws", lambda: tmp_path / "aws")
    assert path_export() == []
    assert capsys.readouterr().err.startswith("warning: the project's AWS CLI v2 is not installed")


def test_user_env_points_the_queue_urls_at_the_emulator():
    """Stack outputs carry AWS-style queue URLs; the user's variables name the emulator's own."""
    from pathlib import Path

    from local.exports import user_env

    aws_env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:5000", "AWS_REGION": "us-east-1"}
    outputs = {
        "QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/p-jobs",
        "DeadLetterQueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/p-dlq/",
        "OrdersTableName": "p-orders",
        "ReferenceTableName": "p-reference",
        "FunctionName": "p-worker",
        "LogGroupName": "/aws/lambda/p-worker",
    }
    env = user_env(aws_env, outputs, Path("/s/ops-history.sqlite3"))
    assert env["QUEUE_URL"] == "http://127.0.0.1:5000/123456789012/p-jobs"
    assert env["DLQ_URL"] == "http://127.0.0.1:5000/123456789012/p-dlq"
    assert env["OPS_HISTORY"] == "/s/ops-history.sqlite3"
    assert env["AWS_REGION"] == "us-east-1"


def test_without_an_emulator_status_interrupted_and_down_say_nothing_runs(tmp_path, capsys):
    """With no emulator in the state directory each command says so in one line and starts nothing."""
    session = LocalSession(tmp_path)
    assert session.status() == "local stack: not running"
    assert session.interrupted("`up`") == "interrupted: nothing is left running"
    session.down()
    assert capsys.readouterr().err == "no local stack is running: nothing to stop\n"
    with pytest.raises(LocalError, match=r"^the local stack is not running; start it with `make up`$"):
        session.aws_env()


def test_a_session_keeps_its_prefix_files_apart_and_deploys_with_removal_destroy(tmp_path):
    """Stacks of different prefixes share one emulator but not their outputs; a local deploy
    destroys everything on delete unless the context says otherwise."""
    default, other = LocalSession(tmp_path), LocalSession(tmp_path, {"prefix": "p2", "removal": "retain"})
    assert default.context == {"removal": "destroy"}
    assert other.context == {"removal": "retain", "prefix": "p2"}
    assert (other.stack_name, other.outputs_path.name) == ("p2-consumer", "outputs.p2.json")
    assert default.outputs_path != other.outputs_path


def test_a_cli_ended_by_ctrl_c_is_an_interruption_not_a_failed_deploy(tmp_path, monkeypatch):
    """Ctrl-C reaches the whole process group: when the CDK CLI dies of it before this process
    sees its own SIGINT, `up` still reports an interruption (and cleans up), not a failed step."""
    import local.deploy
    from local.emulator_process import EmulatorProcess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cdk").write_text("#!/bin/sh\nkill -INT $$\n")
    (bin_dir / "cdk").chmod(0o755)
    monkeypatch.setattr(local.deploy, "NODE_BIN", bin_dir)
    emulator = EmulatorProcess(tmp_path / "state")
    monkeypatch.setattr(emulator, "aws_env", dict)
    deployment = local.deploy.StackDeployment(emulator=emulator, context={})
    with pytest.raises(KeyboardInterrupt):
        deployment.cdk("bootstrap")
