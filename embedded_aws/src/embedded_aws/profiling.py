"""Optional measurement hooks for the emulator process (off unless LOCAL_PROFILE is set).

- Every HTTP request the embedded AWS serves is counted and timed by (service, operation)
  (`CountedRequests`, a WSGI layer the server puts in front of moto when profiling).
- The Lambda host times its phases (`timer(name)`), per message poller and per invocation.
- Garbage collections are counted and timed by generation (`gc gen2`: the full ones).
- SIGUSR1 writes the counters to `<state dir>/profile.json`; SIGUSR2 resets them.

Wall times are per thread: with a GIL shared by every request they include waiting for it.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from embedded_aws.compat.registry import T, declare, install

ENABLED = bool(os.environ.get("LOCAL_PROFILE"))
CPROFILE = os.environ.get("LOCAL_PROFILE") == "cprofile"
_profiles: dict[int, Any] = {}
_active: set[int] = set()
_local = threading.local()


@contextmanager
def profiled() -> Iterator[None]:
    """cProfile this thread's work inside the block (LOCAL_PROFILE=cprofile); not re-entrant."""
    if not CPROFILE or getattr(_local, "active", False):
        yield
        return
    import cProfile

    ident = threading.get_ident()
    profile = _profiles.get(ident)
    if profile is None:
        profile = _profiles[ident] = cProfile.Profile(time.thread_time)  # CPU, not waits
    _local.active = True
    _active.add(ident)
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        _active.discard(ident)
        _local.active = False


_lock = threading.Lock()
_stats: dict[str, list[float]] = {}  # name -> [count, wall seconds, thread cpu seconds]


def record(name: str, seconds: float, cpu: float = 0.0) -> None:
    with _lock:
        entry = _stats.setdefault(name, [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] += seconds
        entry[2] += cpu


@contextmanager
def timer(name: str) -> Iterator[None]:
    if not ENABLED:
        yield
        return
    started, cpu = time.perf_counter(), time.thread_time()
    try:
        with profiled():
            yield
    finally:
        record(name, time.perf_counter() - started, time.thread_time() - cpu)


def count(name: str) -> None:
    if ENABLED:
        record(name, 0.0)


def _operation(environ: dict[str, Any]) -> str:
    target = environ.get("HTTP_X_AMZ_TARGET")
    auth = environ.get("HTTP_AUTHORIZATION", "")
    service = auth.partition("Credential=")[2].split("/")[3:4]
    service = service[0] if service else "-"
    if target:
        return f"{service}:{target.rpartition('.')[2]}"
    path = environ.get("PATH_INFO", "")
    if service == "lambda":
        if path.endswith("/invocations"):
            return "lambda:Invoke"
        if "event-source-mappings" in path:
            method: str = environ.get("REQUEST_METHOD", "")
            return "lambda:" + method + " event-source-mappings"
        if path.endswith("/configuration"):
            return "lambda:GetFunctionConfiguration"
    return f"{service}:{environ.get('REQUEST_METHOD')} {path[:40]}"


class CountedRequests:
    """A WSGI layer in front of moto's application: every request counted and timed by (service,
    operation). In front of moto, not inside it: no patch needed."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        with timer("http " + _operation(environ)), profiled():
            return self.app(environ, start_response)


@declare(
    "profiling",
    "LOCAL_PROFILE: the CPU of each whole request on its connection thread",
    T("werkzeug.serving:WSGIRequestHandler.handle_one_request", "self"),
    when=lambda context: context.state_dir is not None and ENABLED,
    uses=("state_dir",),
)
def patch_profiling(state_dir: Path) -> None:
    """Time whole requests on their connection threads and wire the dump/reset signals."""
    if not ENABLED:
        return
    from werkzeug.serving import WSGIRequestHandler

    handle_one = WSGIRequestHandler.handle_one_request

    def timed_handle_one(self: Any) -> Any:
        # CPU of one whole request on its connection thread (read, parse, app, write); the
        # wall time includes waiting for the next request on a kept-alive connection.
        cpu = time.thread_time()
        try:
            return handle_one(self)
        finally:
            record("werkzeug handle_one_request (cpu)", 0.0, time.thread_time() - cpu)

    install(WSGIRequestHandler, "handle_one_request", timed_handle_one)

    import gc

    collecting: dict[int, float] = {}

    def timed_collection(phase: str, info: dict[str, Any]) -> None:
        # Every thread waits while the collector runs (it holds the GIL): the pause requests see.
        if phase == "start":
            collecting[info["generation"]] = time.perf_counter()
        elif info["generation"] in collecting:
            record(f"gc gen{info['generation']}", time.perf_counter() - collecting.pop(info["generation"]))

    gc.callbacks.append(timed_collection)

    def dump(*_: Any) -> None:
        with _lock:
            data = {
                name: {"count": c, "wall_s": round(w, 4), "cpu_s": round(u, 4)}
                for name, (c, w, u) in _stats.items()
            }
        data["_process"] = {"cpu_s": sum(os.times()[:2]), "time": time.time()}
        if CPROFILE and _profiles:
            import pstats

            stats = None
            for ident, profile in list(_profiles.items()):
                if ident in _active:
                    continue
                try:
                    one = pstats.Stats(profile)
                except TypeError:  # nothing recorded
                    continue
                stats = one if stats is None else (stats.add(one) or stats)
            if stats is not None:
                stats.dump_stats(str(state_dir / "profile.pstats"))
        temporary = state_dir / "profile.json.tmp"
        temporary.write_text(json.dumps(data, indent=1, sort_keys=True))
        temporary.rename(state_dir / "profile.json")

    def reset(*_: Any) -> None:
        with _lock:
            _stats.clear()
            for ident, profile in list(_profiles.items()):
                if ident not in _active:
                    profile.clear()

    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGUSR2, reset)
