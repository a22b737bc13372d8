"""The product's main job, end to end: `python -m local up` deploys the real stack with the
pinned CDK CLI into the embedded AWS, the lab scenario runs through the local Lambda host, and
destroy leaves nothing of the stack."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from local import aws_cli
from local.processes import alive
from local.scenario import run_lab_scenario
from local.session import ROOT, LocalSession, free_port, port_in_use
from stacks.lambda_code import package_files

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(75)]


def local_cli(*args: str, state_dir) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "local", *args, "--state-dir", str(state_dir)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """The stack deployed by `python -m local up`, torn down by `python -m local down`."""
    state_dir = tmp_path_factory.mktemp("stack")
    up = local_cli("up", "--port", str(free_port()), state_dir=state_dir)
    try:
        assert up.returncode == 0, up.stderr
        yield LocalSession(state_dir), up.stdout, up.stderr
    finally:
        down = local_cli("down", state_dir=state_dir)
        assert down.returncode == 0, down.stderr


def test_up_prints_paste_ready_exports(stack):
    """stdout of `up` is only `export NAME=value` lines, naming everything a user needs."""
    session, stdout, _ = stack
    lines = stdout.strip().splitlines()
    assert all(re.fullmatch(r"export [A-Z_]+=\S+", line) for line in lines), lines
    exported = dict(line[len("export "):].split("=", 1) for line in lines)
    assert exported["AWS_ENDPOINT_URL"] == session.state["endpoint"]
    assert exported["QUEUE_URL"].endswith("/labex-q05-jobs")
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "ORDERS_TABLE",
            "REFERENCE_TABLE", "FUNCTION_NAME", "LOG_GROUP", "DLQ_URL"} <= exported.keys()


def test_lab_scenario_figures(stack):
    """Mapping labex-q05-jobs -> labex-q05-worker, batch 1, Enabled; four executions, two
    accepted writes, two conditional rejections, both copies acknowledged as duplicates; the
    scan shows dedup-order/4/1100 and other-order/1/350; queues empty; reference unchanged."""
    session, _, _ = stack
    checks = run_lab_scenario(session)
    failed = [(c.name, c.expected, c.actual) for c in checks if not c.ok]
    assert failed == []
    assert len(checks) == 11


def test_the_worker_uploaded_by_hand_runs_at_the_next_delivery(stack, tmp_path):
    """As the lab does: the worker, changed to print one more line, zipped and uploaded with
    `aws lambda update-function-code --zip-file fileb://...` (AWS CLI v1, against the embedded
    AWS); the next order sent to the jobs queue is handled by that code (the line is in the
    function's log group) and stored as before."""
    import io
    import zipfile

    from local.session import wait_for
    from ops import observe

    session, _, _ = stack
    outputs = session.outputs()
    source = (ROOT / "lambda" / "worker" / "app.py").read_text() + (
        "\n\n_deployed_handler = handler\n\n\n"
        "def handler(event, context):\n"
        "    print('HAND-UPLOADED worker')\n"
        "    return _deployed_handler(event, context)\n")
    package = tmp_path / "worker.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", source)
        for name, text in package_files("worker").items():
            if name != "app.py":
                archive.writestr(name, text)
    package.write_bytes(buffer.getvalue())
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **session.aws_env()}
    upload = subprocess.run(
        [str(aws_cli.aws()), "lambda", "update-function-code", "--function-name",
         outputs["FunctionName"], "--zip-file", f"fileb://{package}"],
        capture_output=True, text=True, env=env, timeout=120)
    assert upload.returncode == 0, upload.stderr
    session.client("sqs").send_message(QueueUrl=session.local_queue_url(outputs["QueueUrl"]),
                                       MessageBody='{"id": "hand-uploaded", "quantity": 1}')
    logs = session.client("logs")

    def hand_uploaded_ran() -> bool:
        return any("HAND-UPLOADED worker" in e["message"] for e in observe.log_events(logs, outputs["LogGroupName"]))

    wait_for(hand_uploaded_ran, timeout=30, what="the hand-uploaded worker's line in the log group")
    dynamodb = session.client("dynamodb")
    wait_for(lambda: "Item" in dynamodb.get_item(TableName=outputs["OrdersTableName"], Key={"id": {"S": "hand-uploaded"}}),
             timeout=30, what="the order stored")


def test_make_up_serves_a_view_from_the_emulator_process(stack):
    """`make up` prints the URL of a view the emulator process serves, with its token; with the
    token it reads the stack, without it nothing is answered."""
    session, _, stderr = stack
    url = session.state["view_url"]
    assert f"live view: {url}" in stderr
    match = re.fullmatch(r"(http://localhost:\d+/)\?token=([\w-]{32,})", url)
    assert match, url
    base, token = match.groups()
    request = urllib.request.Request(base + "api/snapshot", headers={"X-View-Token": token})
    with urllib.request.urlopen(request, timeout=30) as response:
        snapshot = json.load(response)
    assert snapshot["error"] is None
    assert snapshot["target"]["names_from"] == "stack labex-q05-consumer outputs"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(base + "api/snapshot", timeout=30)
    assert refused.value.code == 403
    view = local_cli("view", state_dir=session.state_dir)  # what `make view` runs
    assert view.returncode == 0 and f"live view: {url}" in view.stderr


def test_destroy_leaves_nothing_and_a_second_deploy_works(stack):
    """After `cdk destroy` with removal=destroy, no stack, mapping, function, queue, table, role,
    policy or log group of the stack remains; deploying again afterwards succeeds."""
    session, _, _ = stack
    session.destroy()
    remaining = session.leftovers()
    assert remaining == {key: [] for key in remaining}
    outputs = session.deploy(bootstrap=False)  # the bootstrap stack is not part of it and stays
    assert outputs["FunctionName"] == "labex-q05-worker"
    reference = session.client("dynamodb").get_item(TableName="labex-q05-reference", Key={"id": {"S": "reference"}})
    assert reference["Item"]["note"] == {"S": "keep unchanged"}


def test_the_labs_clean_up_by_hand_then_down_leaves_nothing_running(stack):
    """The lab's own clean-up (delete the mapping, the jobs queue, both orders and the log group
    by hand), then `python -m local down`: the stack deletes as on AWS (a resource already gone
    counts as deleted), the embedded AWS and its Lambda host stop, and the port is free."""
    session, _, _ = stack
    env = session.user_env()
    lambda_api = session.client("lambda")
    for mapping in lambda_api.list_event_source_mappings(FunctionName=env["FUNCTION_NAME"])["EventSourceMappings"]:
        lambda_api.delete_event_source_mapping(UUID=mapping["UUID"])
    session.client("sqs").delete_queue(QueueUrl=env["QUEUE_URL"])
    for order_id in ("dedup-order", "other-order"):
        session.client("dynamodb").delete_item(TableName=env["ORDERS_TABLE"], Key={"id": {"S": order_id}})
    session.client("logs").delete_log_group(logGroupName=env["LOG_GROUP"])
    state = session.require_state()

    down = local_cli("down", state_dir=session.state_dir)
    assert down.returncode == 0, down.stderr
    assert "local stack down" in down.stderr and "failed" not in down.stderr
    assert session.state is None and not alive(state["pid"])
    assert not port_in_use(state["port"])
