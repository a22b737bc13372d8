"""Fixtures and hooks of the whole run, the product's tests (tests/) and the embedded AWS's
(embedded_aws/tests/) alike: the one embedded AWS every xdist worker shares, the measured
figures printed at the end, and the order test files are handed out in."""

from __future__ import annotations

import functools
import gc
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent
# Property tests check what holds, never how fast: on two cores shared with the end-to-end tests
# one example can take longer than hypothesis's 200 ms default deadline (a test failed on that).
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")
# A test process holds a large heap of long-lived objects (botocore's models, moto's backends,
# hypothesis, jsii's references), and at Python's default thresholds (700, 10, 10) the full
# collections that walk it took a quarter of the workers' CPU in `make quick` (15 of about 60
# CPU-s); at these, 4, and no process grew larger.
gc.set_threshold(20_000, 20, 20)
sys.path.insert(0, str(ROOT))
from local.paths import NODE_BIN

# The CDK toolchain's Node, package.json's Node 24 (jsii no longer supports Node 20): jsii in this
# process takes it as JSII_NODE, and the CLI and every subprocess find it first on PATH, as under make.
if (NODE_BIN / "node").exists():
    os.environ.setdefault("JSII_NODE", str(NODE_BIN / "node"))
    # Node's compile cache where the Makefile keeps it (a CLI synth costs about 0.5 CPU-s less).
    os.environ.setdefault("NODE_COMPILE_CACHE", str(NODE_BIN.parent / ".cache" / "node-compile-cache"))
    if os.environ.get("PATH", "").split(os.pathsep)[0] != str(NODE_BIN):
        os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
os.environ.setdefault("NODE_NO_WARNINGS", "1")
# A run started in the background by a shell without job control (`make test &` in a script)
# inherits SIGINT ignored, and so would every process it starts: the tests that press Ctrl-C on a
# child (`python -m local up`, `ops view`, the CDK CLI) would then see it ignored.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


if os.environ.get("PYTEST_XDIST_WORKER"):
    import atexit

    from local.processes import exit_without_teardown

    # An xdist worker's last exit handler (registered before every other, so it runs after them
    # all): freeing its heap took about 1 CPU-s per worker, and the controller waits for every
    # worker to exit before it reports.
    atexit.register(exit_without_teardown)
# `ops status` and the live view keep the decisions they read (ops/history.py); a test run keeps
# them in a place of its own, never in the user's state.
if not os.environ.get("OPS_HISTORY"):
    import atexit
    import shutil
    import tempfile

    _history_dir = tempfile.mkdtemp(prefix="ops-history-")
    atexit.register(shutil.rmtree, _history_dir, ignore_errors=True)
    os.environ["OPS_HISTORY"] = str(Path(_history_dir) / "history.sqlite3")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: a long wait is slow (`make quick` skips it)
def pytest_collection_modifyitems(config, items):
    """Modules that wait longest first (`long_wait(seconds)`, about how long the module takes),
    then the modules that synthesize in the test process (`jsii`): `make test` hands files to its
    workers in collection order (--dist loadfile --no-loadscope-reorder), so the long ones start
    at once instead of behind dozens of quick files, and the quick ones fill the gaps. Scheduling
    only: nothing asserts the figure. A wait of QUICK_WAIT_LIMIT seconds or more is also `slow`,
    whether or not its module says so; a shorter one stays in `make quick`, started first so that
    its waiting overlaps the other workers' CPU-bound tests."""

    def waits(item) -> float:
        marker = item.get_closest_marker("long_wait")
        return marker.args[0] if marker else 0

    for item in items:
        if waits(item) >= QUICK_WAIT_LIMIT and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: (-waits(item), not item.get_closest_marker("jsii")))
    if getattr(config, "workerinput", None) is not None:  # for the controller's scheduler (below)
        modules = {item.nodeid.split("::", 1)[0]: item for item in items}
        plan = {
            "waits": {module: waits(item) for module, item in modules.items() if waits(item)},
            "jsii": sorted(module for module, item in modules.items() if item.get_closest_marker("jsii")),
        }
        path = _shared_root(config) / PLAN_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}")
        partial.write_text(json.dumps(plan))
        partial.replace(path)  # every worker writes the same; a reader never sees half of one


_LOADED_BY_COLLECTION: list[str] = []


def pytest_collection_finish(session):
    """What collecting the run loaded of the CDK (tests/unit/test_suite_plan.py checks: nothing)."""
    _LOADED_BY_COLLECTION[:] = sorted(name for name in ("aws_cdk", "jsii") if name in sys.modules)


@pytest.fixture(scope="session")
def loaded_by_collection() -> list[str]:
    return list(_LOADED_BY_COLLECTION)


QUICK_WAIT_LIMIT = 15
PLAN_FILE = "schedule-plan.json"
JSII_UNIT = "the modules marked jsii"


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, with two changes.

    - The modules marked `jsii` (they synthesize the app in the test process) are one unit, run by
      one worker: jsii's Node and its load of aws-cdk-lib cost a few CPU-seconds in each process
      that synthesizes, and spread over every worker they were most of `make quick`'s CPU.
    - xdist hands a worker its next file while it still runs the last two tests of its current
      one, and by default that is the next in line: the next longest. Queued behind a long
      module's last two long tests, it stretched the run by its whole length
      (test_local_cloudwatch.py's 40 s behind test_alarms.py's 200). So a worker busy with a long
      module (`long_wait`) is handed the next quick file instead; a worker on quick files takes
      the longest left.
    - A waiting module leaves its worker's core idle: with more workers than cores, a module with
      a short wait (under QUICK_WAIT_LIMIT) starts only while fewer than workers - cores workers
      wait, so the cores have CPU-bound files to run beside the waits (`make quick`'s three
      workers all started on its waiting modules, and the two cores were idle for 10 of its 37 s).

    Scheduling only, as the order above."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped]  # no py.typed

    plan_path = _shared_root(config) / PLAN_FILE

    class PlannedLoadFile(LoadFileScheduling):  # type: ignore[misc]  # untyped base
        @functools.cached_property
        def plan(self) -> dict:
            """Read when the work is first split, once every worker has collected (and written it)."""
            return json.loads(plan_path.read_text()) if plan_path.exists() else {"waits": {}, "jsii": []}

        @functools.cached_property
        def jsii_modules(self) -> frozenset[str]:
            return frozenset(self.plan["jsii"])

        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return JSII_UNIT if module in self.jsii_modules else module

        @functools.cached_property
        def most_waiting(self) -> int:
            workers, cores = len(self.nodes), os.cpu_count() or 1
            return workers - cores if workers > cores else workers

        def _waiting(self, node) -> bool:
            waits = self.plan["waits"]
            running = self.assigned_work.get(node, {})
            return any(waits.get(scope) and not all(done.values()) for scope, done in running.items())

        def _assign_work_unit(self, node):
            waits = self.plan["waits"]
            quick = next((scope for scope in self.workqueue if not waits.get(scope)), None)
            # Only a short wait is held back: a long module is the run's critical path, and held
            # back it ended the run alone (`make test` took 205 s instead of 184).
            following = next(iter(self.workqueue), None)
            short = following is not None and 0 < waits.get(following, 0) < QUICK_WAIT_LIMIT
            waiting = sum(1 for other in self.assigned_work if self._waiting(other))
            if quick is not None and (self._waiting(node) or (short and waiting >= self.most_waiting)):
                self.workqueue.move_to_end(quick, last=False)
            super()._assign_work_unit(node)

    return PlannedLoadFile(config, log)


_ANNOUNCED: list[bool] = []


def pytest_xdist_node_collection_finished(node, ids):
    """Before the first result: the long end-to-end modules go first and each deploys a stack, so
    the first dots take a while (the controller prints this once, right after `N workers`)."""
    waits = sum(
        1
        for test_id in ids
        if test_id.startswith(("tests/e2e/", "tests/conformance/", "embedded_aws/tests/"))
    )
    if _ANNOUNCED or not waits:
        return
    _ANNOUNCED.append(True)
    node.config.pluginmanager.get_plugin("terminalreporter").write_line(
        f"{waits} of {len(ids)} tests run against one shared embedded AWS; its slowest modules start first, "
        f"each deploying a stack, so the first results take a minute or two"
    )


_FIGURES: list[tuple[str, str]] = []


@pytest.fixture
def figure():
    """Record a measured figure; all of them are printed at the end of the run."""

    def record(name: str, text: str) -> None:
        _FIGURES.append((name, text))

    return record


def pytest_sessionfinish(session):
    """Under pytest-xdist, a worker hands its figures to the controller, which prints them all."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["figures"] = json.dumps(_FIGURES)


def pytest_testnodedown(node, error):
    _FIGURES.extend(
        tuple(figure) for figure in json.loads(getattr(node, "workeroutput", {}).get("figures", "[]"))
    )


def pytest_terminal_summary(terminalreporter):
    if _FIGURES:
        terminalreporter.section("figures")
        for name, text in _FIGURES:
            terminalreporter.write_line(f"{name}: {text}")


# How much lower the test processes' CPU priority is than the embedded AWS's (nice values).
TEST_NICENESS = 10
_SHARED = pytest.StashKey["object"]()


def _controller(config) -> bool:
    """This process hands tests to pytest-xdist workers (it runs none itself)."""
    return getattr(config, "workerinput", None) is None and bool(getattr(config.option, "numprocesses", 0))


def _shared_root(config) -> Path:
    """The run's directory for its one embedded AWS: the controller's base temp, which a worker's
    own base temp sits in."""
    root: Path = config._tmp_path_factory.getbasetemp()
    if getattr(config, "workerinput", None) is not None:
        root = root.parent
    return root / "shared-aws"


def pytest_sessionstart(session):
    """Side by side (`-n`), the controller starts the run's embedded AWS before any worker exists,
    then lowers its own CPU priority, which the workers it starts next inherit, and with them
    everything they run (jsii, the CDK and AWS CLIs, the browser). The embedded AWS and the
    functions it runs keep the normal priority: on AWS a service's answers and a function's CPU
    do not depend on how busy the caller's machine is, and on two cores a suite's synths and
    CLIs would otherwise delay the emulator's replies past the worker's 1 s read timeout."""
    if not _controller(session.config):
        return
    import threading

    from tests.shared_aws import SharedAWS

    shared = SharedAWS(_shared_root(session.config))
    # Started beside the workers' start and collection (about 1.5 s each), not before them: a
    # worker that needs it waits on the run's lock, which the start holds until it answers. The
    # thread exists before the nice() below, so the emulator it starts keeps the normal priority.
    starting = threading.Thread(target=shared.join, name="embedded-aws-start")
    starting.start()
    session.config.stash[_SHARED] = (shared, starting)
    os.nice(TEST_NICENESS)


def pytest_unconfigure(config):
    started = config.stash.get(_SHARED, None)
    if started is not None:
        shared, starting = started
        starting.join()
        shared.leave()


@pytest.fixture(scope="session")
def shared_aws(pytestconfig):
    """The run's one embedded AWS (bootstrapped), shared with the other xdist workers."""
    from tests.shared_aws import SharedAWS

    shared = SharedAWS(_shared_root(pytestconfig))
    shared.join()
    try:
        yield shared
    finally:
        shared.leave()
