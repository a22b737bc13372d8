"""Profile the local pipeline: `python -m bench.profile_pipeline --runs 1:300:20 10:2000:100`.

Deploys the stack once (LOCAL_PROFILE=1 in the emulator: see embedded_aws/profiling.py), then for each
run (batch size : messages : backlog) prints msg/s, late/early rate, CPU seconds per message of
the emulator process, its sandboxes and this producer, and per-message request counts and times
by operation and host phase. `--pyspy SECONDS` samples the emulator with py-spy during each run.
Profiles and the records of each run go to `--out-dir` (bench/out/profile/ by default).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.report import process_cpu_seconds

OUT_DIR = Path(__file__).resolve().parent / "out" / "profile"  # bench/out/ is not committed


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def cpu_snapshot(pid: int) -> dict[str, float]:
    return {
        "emulator": process_cpu_seconds(pid),
        "sandboxes": sum(process_cpu_seconds(c) for c in _children(pid)),
        "producer": sum(os.times()[:2]),
    }


def profile_counters(state_dir: Path, pid: int) -> dict[str, Any]:
    path = state_dir / "profile.json"
    path.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR1)
    for _ in range(100):
        if path.exists():
            counters: dict[str, Any] = json.loads(path.read_text())
            return counters
        time.sleep(0.05)
    return {}


def main() -> int:
    args = _parser().parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("LOCAL_PROFILE", "1")
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    from bench.pipeline import Pipeline

    state_dir = Path(tempfile.mkdtemp(prefix="profile-pipeline-"))
    pipeline = Pipeline(state_dir, lambda m: print(m, file=sys.stderr, flush=True))
    try:
        pipeline.start()
        pid = pipeline.session.require_state()["pid"]
        print(f"deployed in {pipeline.deploy_seconds:.0f} s; emulator pid {pid}", file=sys.stderr)
        if args.warmup:
            pipeline.set_batch_size(1)
            pipeline.run(args.warmup, 1, 20, timeout=300)
        for spec in args.runs:
            batch, messages, backlog = (int(x) for x in spec.split(":"))
            pipeline.set_batch_size(batch)
            time.sleep(1.5)
            if not args.plain:
                os.kill(pid, signal.SIGUSR2)
            before = cpu_snapshot(pid)
            spy = _py_spy(args, pid, batch, messages)
            load = os.getloadavg()[0]
            stop_monitor = threading.Event()

            def monitor(stop_monitor: threading.Event = stop_monitor) -> None:
                from ops.observe import queue_counters

                sqs = pipeline.session.client("sqs")
                began = time.perf_counter()
                while not stop_monitor.wait(2):
                    counters = queue_counters(sqs, pipeline.env["QUEUE_URL"])
                    threads = len(list(Path(f"/proc/{pid}/task").iterdir()))
                    print(
                        f"   t={time.perf_counter() - began:5.1f}s {counters} threads={threads} "
                        f"sandboxes={len(_children(pid))} emulator_cpu={process_cpu_seconds(pid):.1f}s load={os.getloadavg()[0]:.1f}",
                        file=sys.stderr,
                        flush=True,
                    )

            if args.monitor:
                threading.Thread(target=monitor, daemon=True).start()
            result = pipeline.run(messages, batch, backlog, timeout=900)
            stop_monitor.set()
            after = cpu_snapshot(pid)
            counters = {} if args.plain else profile_counters(state_dir, pid)
            if (state_dir / "profile.pstats").exists():
                shutil.copy(
                    state_dir / "profile.pstats",
                    args.out_dir / f"cprofile-{args.label or 'run'}-b{batch}-{messages}.pstats",
                )
            if spy:
                spy.wait()
            _record(args, (batch, messages, backlog), result, after_minus(before, after), counters, load)
            sys.stdout.flush()
    finally:
        pipeline.stop()
        shutil.copy(state_dir / "emulator.log", args.out_dir / "last-emulator.log")
        shutil.rmtree(state_dir, ignore_errors=True)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", nargs="+", default=["1:300:20", "10:2000:100"])
    parser.add_argument(
        "--pyspy", type=float, default=0, help="sample the emulator for this many seconds per run"
    )
    parser.add_argument("--pyspy-args", default="--gil")
    parser.add_argument(
        "--out-dir", type=Path, default=OUT_DIR, help=f"where profiles and records go (default {OUT_DIR})"
    )
    parser.add_argument("--py-spy", default=shutil.which("py-spy") or "py-spy", help="the py-spy executable")
    parser.add_argument("--label", default="")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="no profiling signals (for code without embedded_aws/profiling.py)",
    )
    parser.add_argument("--monitor", action="store_true", help="print queue counters every 2 s")
    parser.add_argument(
        "--warmup", type=int, default=0, help="messages run at batch size 1 first, not reported"
    )
    return parser


def _py_spy(args: argparse.Namespace, pid: int, batch: int, messages: int) -> subprocess.Popen[bytes] | None:
    """py-spy sampling the emulator for --pyspy seconds, if asked."""
    if args.pyspy:
        out = args.out_dir / f"pyspy-{args.label or 'run'}-b{batch}-{messages}.txt"
        return subprocess.Popen(  # noqa: S603  py-spy on a pid this script started, no shell
            [
                args.py_spy,
                "record",
                "-p",
                str(pid),
                "-f",
                "raw",
                "-o",
                str(out),
                "-d",
                str(int(args.pyspy)),
                "-r",
                "100",
                *args.pyspy_args.split(),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    return None


def after_minus(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before[k] for k in before}


def _record(
    args: argparse.Namespace,
    run: tuple[int, int, int],
    result: dict[str, Any],
    cpu_seconds: dict[str, float],
    counters: dict[str, Any],
    load: float,
) -> None:
    """One run's summary: appended to --out as a JSON line, and printed by request kind."""
    from bench.pipeline import growth

    batch, messages, backlog = run
    n = messages
    cpu = {k: round(v * 1000 / n, 2) for k, v in cpu_seconds.items()}
    rows = {
        name: {
            "per_msg": round(v["count"] / n, 3),
            "ms_wall_per_msg": round(v["wall_s"] * 1000 / n, 2),
            "ms_cpu_per_msg": round(v["cpu_s"] * 1000 / n, 2),
            "ms_each": round(v["wall_s"] * 1000 / v["count"], 2) if v["count"] else None,
        }
        for name, v in counters.items()
        if not name.startswith("_")
    }
    summary = {
        "label": args.label,
        "batch": batch,
        "messages": n,
        "backlog": backlog,
        "msg_s": round(result["messages_per_second"], 1),
        "late_early": round(growth(result["decile_rates"]) or 0, 2),
        "deciles": result["decile_rates"],
        "records_per_inv": result["mean_records_per_invocation"],
        "cpu_ms_per_msg": cpu,
        "load1_start": load,
        "requests": rows,
    }
    with open(args.out_dir / "profile-runs.jsonl", "a") as f:
        f.write(json.dumps(summary) + "\n")
    print(
        f"\n== b={batch} n={n} backlog={backlog}: {summary['msg_s']} msg/s, late/early {summary['late_early']}, "
        f"records/inv {result['mean_records_per_invocation']}, cpu ms/msg {cpu}, load {load:.2f}"
    )
    for name, row in sorted(rows.items(), key=lambda kv: -kv[1]["ms_wall_per_msg"]):
        print(
            f"  {name:52s} {row['per_msg']:7.3f}/msg  wall {row['ms_wall_per_msg']:7.2f} ms/msg"
            f"  cpu {row['ms_cpu_per_msg']:6.2f} ms/msg  each {row['ms_each']} ms"
        )


if __name__ == "__main__":
    sys.exit(main())
