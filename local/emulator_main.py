"""The background process behind `make up`: the embedded AWS and the Lambda host, until signalled."""

from __future__ import annotations

import gc
import json
import logging
import os
import signal
import threading
from pathlib import Path

from embedded_aws import FAULTS_FILE, EmbeddedAWS, LambdaHost
from local.processes import exit_without_teardown, leaseholders_alive

STATE_FILE = "emulator.json"
# The write decisions `ops status` and the live view keep (ops/history.py): with the local stack's
# state, so `make clean` forgets them; `make up` exports it as OPS_HISTORY.
HISTORY_FILE = "ops-history.sqlite3"


def private_dir(path: Path) -> Path:
    """The state directory holds the admin keys and the view's token: this user's only."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Write `text` readable by this user only, atomically (readers never see half a file)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.unlink(missing_ok=True)
    with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
        file.write(text)
    temporary.rename(path)


def serve(port: int, state_dir: Path, region: str = "us-east-1", leases: Path | None = None) -> None:
    """Start everything, write the state file (endpoint, admin keys, pid), wait for SIGTERM, or,
    with `leases`, until every process holding a lease there has gone (a test run that was
    killed must not leave its emulator behind)."""
    private_dir(state_dir)
    # moto's backends and botocore's models are a large heap of long-lived objects: at Python's
    # default thresholds (700, 10, 10) its collections took about 4 of a test run's 55 CPU-s here.
    gc.set_threshold(20_000, 20, 20)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if not os.environ.get("LOCAL_REQUEST_LOG"):
        # werkzeug logs every request at INFO (a formatted line and a write per request);
        # LOCAL_REQUEST_LOG=1 keeps that log.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
    aws = EmbeddedAWS(port, region, faults_file=state_dir / FAULTS_FILE, state_dir=state_dir)
    host = LambdaHost(
        endpoint=aws.endpoint,
        region=region,
        workdir=state_dir / "lambda",
        role_credentials=aws.role_credentials,
        service_credentials=lambda: aws.admin,
        stored_function=aws.lambda_function,
    )
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    aws.start(host)  # every moto patch applied and IAM enforcement on before it listens
    host.start_polling()
    aws.cloudwatch.start()
    from ops.history import History
    from ops.view.server import start_for_env  # the live view (make up/down), in this process

    view = start_for_env(
        {"AWS_ENDPOINT_URL": aws.endpoint, "AWS_REGION": region, **aws.admin.as_env()},
        history=History(state_dir / HISTORY_FILE),
    )
    state = {
        "pid": os.getpid(),
        "port": port,
        "endpoint": aws.endpoint,
        "region": region,
        "access_key_id": aws.admin.access_key_id,
        "secret_access_key": aws.admin.secret_access_key,
        "view_url": view.url if view else None,
    }
    write_private(state_dir / STATE_FILE, json.dumps(state, indent=2))
    logging.getLogger("local.emulator_main").info("embedded AWS ready on %s", aws.endpoint)
    checks = 0
    # A timed wait lets the signal handler run: it sets the event, and the wait sees it at its
    # next timeout (0.1 s: a test run's end waits for this stop). The leases are read every 2 s.
    while not stopped.wait(0.1):
        checks += 1
        if leases is not None and checks % 20 == 0 and not leaseholders_alive(leases):
            logging.getLogger("local.emulator_main").info("every leaseholder has gone")
            break
    logger = logging.getLogger("local.emulator_main")
    if view:
        view.stop()
    logger.info("stopping: Lambda host")
    host.stop()
    logger.info("stopping: embedded AWS and its CloudWatch")
    aws.stop()
    logger.info("stopped")
    (state_dir / STATE_FILE).unlink(missing_ok=True)
    # Everything is stopped and written; the interpreter's teardown took about 0.6 s that every
    # stop (each test run's end, `make down`) waited.
    exit_without_teardown()
