"""The product's main job as a user meets it, end to end, on one stack: the README's own
`eval "$(make -s up)"` deploys the real stack with the pinned CDK CLI into the embedded AWS; the
lab's acceptance scenario runs through the local Lambda host on the fresh stack; then the rest of
the README's "Try it locally" block and every docs block that runs against a local stack, exactly
as written, in a clean shell whose PATH holds only the system's Python and Node (no global AWS
CLI, pytest or pyenv); last the lab's clean-up by hand and the README's `make down`. The port and
the state folder come from `PORT` and `LOCAL_STATE_DIR`, so the run cannot meet a user's stack.
(`make demo`, the README's first command, is run as written by .ci/run.)"""

from __future__ import annotations

import itertools
import json
import re
import signal
import subprocess
import urllib.request

import pytest

from local import aws_cli
from local.processes import alive
from local.scenario import run_lab_scenario
from local.session import LocalSession, free_port, port_in_use, wait_for
from ops import observe
from tests.documented import (
    ROOT,
    Ran,
    bare_path_premise,
    block_starting,
    clean_env,
    read_env_dump,
    run_in_one_shell,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(150)]
ME = "tests/e2e/test_documented_commands.py"
TRUST_LAMBDA = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
)


def by_command(ran: list[Ran]) -> dict[str, Ran]:
    return {r.command: r for r in ran}


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    """The README block up to its `make down`, then every docs block that runs against a local
    stack, in one shell; the environment it ended with; the README's `make down` at the end."""
    tmp = tmp_path_factory.mktemp("docs")
    (tmp / "aws-config").write_text("[profile ops]\nregion = us-east-1\n")  # the operator's own profile
    port = free_port()
    env = clean_env(
        tmp / "home",
        PORT=str(port),
        LOCAL_STATE_DIR=str(tmp / "state"),
        AWS_CONFIG_FILE=str(tmp / "aws-config"),
    )
    bare_path_premise(env)
    readme = block_starting("README.md", 'eval "$(make -s up)"', ME)
    assert readme.commands[-1].startswith("make down")
    local = block_starting("docs/local.md", "aws logs", ME)
    faults = block_starting("docs/local.md", ".venv/bin/python -m local faults", ME)
    attach = block_starting("docs/operations.md", "aws iam attach-role-policy", ME)
    view = block_starting("docs/operations.md", "make view", ME)
    profile = block_starting("docs/operations.md", "AWS_PROFILE=ops", ME)
    dlq = block_starting("docs/operations.md", ".venv/bin/python -m ops dlq", ME)
    prove = block_starting("docs/operations.md", ".venv/bin/python -m ops prove-alarms", ME)
    # The role the operations page attaches its policy to: the operator's, not in any doc.
    given = [
        f"aws iam create-role --role-name OnCall --assume-role-policy-document '{TRUST_LAMBDA}' > /dev/null"
    ]
    long_running = [c for c in profile.commands if " ops view" in c]
    commands = [
        *readme.commands[:-1],
        *local.commands,
        *faults.commands,
        *given,
        *attach.commands,
        *view.commands,
        *[c for c in profile.commands if c not in long_running],
        *dlq.commands,
        *prove.commands,
    ]
    up_line, *commands = commands
    (up,) = run_in_one_shell([up_line], env, env_dump=tmp / "env-up")
    session = LocalSession(tmp / "state")
    try:
        assert up.rc == 0 and session.state, up.output
        lab = run_lab_scenario(session)  # on the fresh stack, before anything else sends an order
        ran = run_in_one_shell(commands, read_env_dump(tmp / "env-up"), env_dump=tmp / "env")
        yield {
            "ran": {up_line: up, **by_command(ran)},
            "env": read_env_dump(tmp / "env"),
            "port": port,
            "long_running": long_running,
            "readme": readme,
            "tmp": tmp,
            "session": session,
            "lab": lab,
        }
    finally:
        if session.state:  # the last test runs the README's `make down`; this only tidies up after a failure
            session.down()


def test_every_command_exits_zero(shell, figure):
    """Each command of the README block and of the docs blocks succeeds as written."""
    failed = {r.command: r.output[-800:] for r in shell["ran"].values() if r.rc != 0}
    assert failed == {}
    ran = sorted(shell["ran"].values(), key=lambda r: r.ended)
    took = [
        (later.ended - earlier.ended, later.command.split("  #")[0][:40])
        for earlier, later in itertools.pairwise(ran)
    ]
    figure(
        "documented commands",
        f"{len(ran)} run as written; slowest after make up: "
        + ", ".join(f"{name} {seconds:.1f} s" for seconds, name in sorted(took, reverse=True)[:4]),
    )


def test_lab_scenario_figures(shell):
    """Mapping labex-q05-jobs -> labex-q05-worker, batch 1, Enabled; four executions, two
    accepted writes, two conditional rejections, both copies acknowledged as duplicates; the
    scan shows dedup-order/4/1100 and other-order/1/350; queues empty; reference unchanged."""
    checks = shell["lab"]
    failed = [(c.name, c.expected, c.actual) for c in checks if not c.ok]
    assert failed == []
    assert len(checks) == 12


def test_up_sets_the_environment_the_docs_use(shell):
    """`eval "$(make -s up)"` puts the project's AWS CLI v2 first on PATH and exports the
    endpoint, keys and names; nothing but progress goes to stderr."""
    env = shell["env"]
    assert env["PATH"].split(":")[0] == str(ROOT / ".tools" / "bin")
    assert env["AWS_ENDPOINT_URL"] == f"http://localhost:{shell['port']}"
    assert env["QUEUE_URL"].endswith("/labex-q05-jobs") and env["ORDERS_TABLE"] == "labex-q05-orders"
    up = shell["ran"][shell["readme"].commands[0]]
    assert "cdk deploy" in up.output and "live view: http://localhost:" in up.output
    assert "export " not in up.output  # the exports went to eval, not to the terminal


def test_the_readme_order_reaches_the_table(shell):
    """The README's send-message is accepted by the emulator; its scan lists the orders table
    with the order (stored by the lab's run just before: the README's copy is a duplicate)."""
    ran, env = shell["ran"], shell["env"]
    send = next(r for c, r in ran.items() if c.startswith("aws sqs send-message"))
    assert re.search(r'"MessageId": "[0-9a-f-]{36}"', send.output), send.output
    scan = json.loads(next(r for c, r in ran.items() if c.startswith("aws dynamodb scan")).output)
    assert {"id": {"S": "dedup-order"}, "quantity": {"N": "4"}, "total_cents": {"N": "1100"}} in scan["Items"]

    def stored() -> bool:
        done = subprocess.run(
            [
                "aws",
                "dynamodb",
                "get-item",
                "--table-name",
                env["ORDERS_TABLE"],
                "--key",
                '{"id": {"S": "dedup-order"}}',
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        return '"1100"' in done.stdout

    wait_for(stored, timeout=30, what="the README's order in the orders table")


def test_status_view_and_docs_commands_print_what_the_docs_say(shell):
    """ops status shows the queue and mapping; make view prints the tokened URL; the local.md
    lines show the RESULT line and the mapping, and its faults lines list the two rules they set
    and clear them; the DLQ lines report an empty DLQ; the profile
    line answers JSON; the operator policy got attached."""
    ran, env = shell["ran"], shell["env"]
    status = next(r for c, r in ran.items() if c.startswith(".venv/bin/python -m ops status ")).output
    assert "labex-q05-jobs" in status and "labex-q05-worker" in status
    view = next(r for c, r in ran.items() if c.startswith("make view"))
    assert re.search(r"live view: http://localhost:\d+/\?token=\S{20,}", view.output), view.output
    mappings = json.loads(
        next(r for c, r in ran.items() if c.startswith("aws lambda list-event-source-mappings")).output
    )
    assert [(m["BatchSize"], m["State"]) for m in mappings["EventSourceMappings"]] == [(1, "Enabled")]
    queue = json.loads(next(r for c, r in ran.items() if c.startswith("aws sqs get-queue-attributes")).output)
    assert queue["Attributes"]["VisibilityTimeout"] == "30"
    profile_json = json.loads(next(r for c, r in ran.items() if c.startswith("AWS_PROFILE=ops")).output)
    assert [(m["source"], m["state"]) for m in profile_json["mappings"]] == [("labex-q05-jobs", "Enabled")]
    faults = next(r for c, r in ran.items() if c.startswith(".venv/bin/python -m local faults list")).output
    assert faults.splitlines() == [
        "PutItem on labex-q05-orders: each waits 5 ms",
        (
            "PutItem on labex-q05-orders: 12 more fail with 400 "
            "ProvisionedThroughputExceededException (0 served)"
        ),
    ], faults
    assert (
        next(
            r for c, r in ran.items() if c.startswith(".venv/bin/python -m local faults clear")
        ).output.strip()
        == "cleared 2 rule(s)"
    )
    dlq_list = next(r for c, r in ran.items() if c.startswith(".venv/bin/python -m ops dlq list")).output
    assert "0 message(s)" in dlq_list, dlq_list
    proved = next(r for c, r in ran.items() if c.startswith(".venv/bin/python -m ops prove-alarms")).output
    # An alarm the lab left in ALARM is not set again: its own transition's record is judged.
    standing = r"(?:in ALARM since \S+, not set by this run; its own transition: )?"
    delivered = rf"^delivered +labex-q05-\S+ +{standing}arn:aws:sns:\S+:labex-q05-alarms$"
    assert len(re.findall(delivered, proved, re.MULTILINE)) == 10, proved
    assert "error: no confirmed subscriber on arn:aws:sns:" in proved, proved
    attached = subprocess.run(
        ["aws", "iam", "list-attached-role-policies", "--role-name", "OnCall"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert "labex-q05-operator" in attached.stdout, attached.stderr


def test_ops_view_line_serves_until_ctrl_c(shell):
    """The operations page's `ops view` line prints a URL that serves the page with its token,
    and Ctrl-C (SIGINT) stops it cleanly, without a traceback."""
    (line,) = shell["long_running"]
    view = subprocess.Popen(
        ["bash", "-c", line],
        cwd=ROOT,
        env=shell["env"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        printed: list[str] = []

        def url() -> str | None:
            assert view.stdout is not None  # piped above
            printed.append(view.stdout.readline())
            found = re.search(r"http://\S+token=\S+", printed[-1])
            assert printed[-1] or found, f"ops view ended: {''.join(printed)}"
            return found[0] if found else None

        address = wait_for(url, timeout=60, what="the view's URL")
        assert address is not None  # wait_for returns only a truthy answer
        with urllib.request.urlopen(address, timeout=10) as page:
            assert page.status == 200 and "<html" in page.read().decode().lower()
    finally:
        view.send_signal(signal.SIGINT)
        rest, _ = view.communicate(timeout=30)
    assert view.returncode in (0, 130) and "Traceback" not in rest, rest


def test_second_up_reuses_and_another_port_is_refused(shell):
    """`make -s up` again reuses the running stack (no second deploy) and prints the same
    exports; `make up PORT=...` naming another port is refused with one line saying how."""
    env = shell["env"]
    again = subprocess.run(
        ["bash", "-c", "make -s up"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    assert "reusing the local stack already running" in again.stderr and "cdk deploy" not in again.stderr
    assert f"export QUEUE_URL={env['QUEUE_URL']}" in again.stdout
    lines = (
        again.stdout.strip().splitlines()
    )  # paste-ready: export lines only, naming everything a user needs
    assert all(re.fullmatch(r"export [A-Z_]+=\S+", line) for line in lines), lines
    exported = {line[len("export ") :].split("=", 1)[0] for line in lines}
    assert {
        "PATH",
        "AWS_ENDPOINT_URL",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_REGION",
        "QUEUE_URL",
        "DLQ_URL",
        "ORDERS_TABLE",
        "REFERENCE_TABLE",
        "FUNCTION_NAME",
        "LOG_GROUP",
        "OPS_HISTORY",
    } <= exported
    other = free_port()
    moved = subprocess.run(
        ["bash", "-c", f"make -s up PORT={other}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert moved.returncode != 0 and moved.stdout == ""
    assert (
        f"error: a local stack already runs on port {shell['port']}; to move it to {other}: `make down`, "
        f"then `make up PORT={other}`" in moved.stderr
    )


def test_quick_loop_as_the_readme_spells_it(shell):
    """`make quick` typed in the clean shell runs the project's pytest with its venv (narrowed to
    one file by PYTEST_ADDOPTS, so the suite does not run itself)."""
    readme = (ROOT / "README.md").read_text()
    assert "`make quick` is the quick loop" in readme
    env = {
        **shell["env"],
        "PYTEST_ADDOPTS": "-p no:cacheprovider tests/unit/test_terminal.py",
        "QUICK_WORKERS": "0",
    }
    done = subprocess.run(
        ["bash", "-c", "make quick"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout), done.stdout[-1000:]


def test_make_up_serves_a_view_from_the_emulator_process(shell):
    """`make up` prints the URL of a view the emulator process serves, with its token; with the
    token it reads the stack, without it nothing is answered."""
    import urllib.error

    session = shell["session"]
    url = session.state["view_url"]
    assert f"live view: {url}" in shell["ran"][shell["readme"].commands[0]].output
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


def test_the_worker_uploaded_by_hand_runs_at_the_next_delivery(shell, tmp_path):
    """As the lab does: the worker, changed to print one more line, zipped with the modules the
    construct bundles beside it (order_rules, the handler library) and uploaded with `aws lambda update-function-code --zip-file fileb://...` (the
    project's AWS CLI v2); the next order is handled by that code (the line is in the function's
    log group) and stored as before."""
    import io
    import zipfile

    from ops import observe
    from stacks.lambda_code import package_files

    session = shell["session"]
    outputs = session.outputs()
    source = (ROOT / "lambda" / "worker" / "app.py").read_text() + (
        "\n\n_deployed_handler = handler\n\n\n"
        "def handler(event, context):\n"
        "    print('HAND-UPLOADED worker')\n"
        "    return _deployed_handler(event, context)\n"
    )
    package = tmp_path / "worker.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in package_files("worker").items():
            archive.writestr(name, source if name == "app.py" else text)
    package.write_bytes(buffer.getvalue())
    upload = subprocess.run(
        [
            str(aws_cli.aws()),
            "lambda",
            "update-function-code",
            "--function-name",
            outputs["FunctionName"],
            "--zip-file",
            f"fileb://{package}",
        ],
        capture_output=True,
        text=True,
        env=shell["env"],
        timeout=120,
    )
    assert upload.returncode == 0, upload.stderr
    session.client("sqs").send_message(
        QueueUrl=session.local_queue_url(outputs["QueueUrl"]),
        MessageBody='{"id": "hand-uploaded", "quantity": 1}',
    )
    logs = session.client("logs")

    def hand_uploaded_ran() -> bool:
        return any(
            "HAND-UPLOADED worker" in e["message"] for e in observe.log_events(logs, outputs["LogGroupName"])
        )

    wait_for(hand_uploaded_ran, timeout=30, what="the hand-uploaded worker's line in the log group")
    dynamodb = session.client("dynamodb")
    wait_for(
        lambda: (
            "Item"
            in dynamodb.get_item(TableName=outputs["OrdersTableName"], Key={"id": {"S": "hand-uploaded"}})
        ),
        timeout=30,
        what="the order stored",
    )


def view_snapshot(session: LocalSession) -> dict:
    """What the view `make up` serves answers now (its token from the state file)."""
    state = session.state
    assert state is not None, "no state file: `make up` is not running"
    address = re.fullmatch(r"(http://localhost:\d+/)\?token=([\w-]+)", state["view_url"])
    assert address is not None, state["view_url"]
    base, token = address.groups()
    request = urllib.request.Request(base + "api/snapshot", headers={"X-View-Token": token})
    with urllib.request.urlopen(request, timeout=30) as response:
        snapshot: dict = json.load(response)
        return snapshot


def test_the_labs_clean_up_as_documented_then_down_leaves_nothing_running(shell):
    """Last: the lab's own clean-up as docs/operations.md writes it (delete the mapping, the jobs
    queue, both orders and the log group), then `ops status --cleanup` passes every check and
    `ops status` and the view `make up` serves still list the lab's decisions, marked as history,
    the deleted resources absent and no read error. Then the README's `make down` as written: the
    stack deletes as on AWS (a resource already gone counts as deleted), nothing of it is left,
    the embedded AWS and its Lambda host stop, and the port is free."""
    session = shell["session"]
    env = session.user_env()
    dynamodb = session.client("dynamodb")
    # Orders other documented commands stored: the lab's clean-up knows only its own two.
    for item in observe.scan_items(dynamodb, env["ORDERS_TABLE"]):
        if item["id"] not in ("dedup-order", "other-order"):
            dynamodb.delete_item(TableName=env["ORDERS_TABLE"], Key={"id": {"S": item["id"]}})
    assert view_snapshot(session)["log_source"] == "log"  # an open page reads, and keeps, the log
    cleanup = block_starting("docs/operations.md", "aws lambda delete-event-source-mapping", ME)
    ran = run_in_one_shell(list(cleanup.commands), shell["env"])
    assert {r.command: r.rc for r in ran if r.rc != 0} == {}, [r.output[-600:] for r in ran]
    checks, status = ran[-2].output.splitlines(), ran[-1].output
    assert len(checks) == 7 and all(line.startswith("ok  ") for line in checks), checks
    assert "the decisions below are history" in status
    assert (
        "queue     labex-q05-jobs: absent (GetQueueAttributes: AWS.SimpleQueueService.NonExistentQueue"
        in status
    )
    for order_id, outcome in (
        ("dedup-order", "accepted"),
        ("dedup-order", "duplicate"),
        ("other-order", "accepted"),
    ):
        assert re.search(rf"{order_id}\s+{outcome}\s+attribute_not_exists\(id\)", status), (order_id, outcome)

    seen = view_snapshot(session)
    assert seen["errors"] == {} and seen["log_source"] == "history"
    assert {name: seen["resources"][name]["state"] for name in ("jobs", "log", "function", "orders")} == {
        "jobs": "absent",
        "log": "absent",
        "function": "present",
        "orders": "present",
    }
    assert all(check["ok"] for check in seen["cleanup"]), seen["cleanup"]
    outcomes = [(d["id"], d["outcome"]) for d in seen["deliveries"]]
    assert {("dedup-order", "accepted"), ("dedup-order", "duplicate"), ("other-order", "accepted")} <= set(
        outcomes
    )

    state = session.require_state()

    (down,) = run_in_one_shell([shell["readme"].commands[-1]], shell["env"])
    assert down.rc == 0, down.output
    assert "local stack down: stack deleted (nothing of it left), embedded AWS stopped" in down.output
    assert session.state is None and not alive(state["pid"])
    assert not port_in_use(shell["port"])
