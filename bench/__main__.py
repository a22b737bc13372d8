"""`python -m bench` (what `make bench` runs): every figure in one process run, then
bench/results.json, the markdown tables on stdout and in docs/benchmarks.md."""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import report
from bench.report import progress
from bench.variants import ROOT

# (batch size, messages, repeats, PutItem round trip in ms), run in order while the pipeline
# budget lasts. Late/early rate is compared from 1,000 to 10,000 messages at each batch size.
PIPELINE_PLAN: list[tuple[int, int, int, float]] = [
    (10, 1000, 2, 0),
    (10, 1000, 2, 5),
    (10, 10000, 1, 0),
    (1, 1000, 2, 0),
    (1, 10000, 1, 0),
]
BACKLOG = {1: 50, 10: 100}


def _previous(path: Path) -> dict[str, Any]:
    try:
        previous: dict[str, Any] = json.loads(path.read_text())
        return previous
    except (OSError, ValueError):
        return {}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request

    started = time.perf_counter()
    results: dict[str, Any] = {
        "command": "make bench",
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "argv": sys.argv[1:],
        "machine": report.machine(),
        "load_average": {"start": report.load_average()},
    }
    try:
        _measure(args, results)
    except Exception as error:  # noqa: BLE001 - one line, not a traceback, for a failed measurement
        print(
            f"bench: error: {str(error).splitlines()[0] if str(error) else type(error).__name__}",
            file=sys.stderr,
        )
        return 1
    results["load_average"]["end"] = report.load_average()
    results["duration_seconds"] = round(time.perf_counter() - started, 1)
    _report(args, results)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results.json")
    parser.add_argument("--rounds", type=int, default=120, help="interleaved warm rounds per handler")
    parser.add_argument("--cold-runs", type=int, default=5, help="fresh processes per handler")
    parser.add_argument(
        "--pipeline-budget",
        type=float,
        default=300,
        help="seconds for pipeline runs after the deploy; steps that would not fit are skipped",
    )
    parser.add_argument("--synth-runs", type=int, default=3)
    parser.add_argument(
        "--tests",
        choices=["unit", "unit+infra", "all", "none"],
        default="unit",
        help="which tests to time (all includes the slow end-to-end tests)",
    )
    parser.add_argument("--test-runs", type=int, default=2)
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["handlers", "library", "batches", "cost", "ops-cost", "pipeline", "dlq", "dev-loop"],
    )
    parser.add_argument(
        "--no-docs", action="store_true", help="do not rewrite the tables in docs/benchmarks.md"
    )
    return parser


def _measure(args: argparse.Namespace, results: dict[str, Any]) -> None:
    """Each step not skipped, in order, its result under its key."""
    if "handlers" not in args.skip:
        from bench import handler_bench

        results["handlers"] = handler_bench.run(
            orders=5, rounds=args.rounds, warmup=10, blocks=5, cold_runs=args.cold_runs, progress=progress
        )
    if "library" not in args.skip:
        from bench import library_bench

        progress(f"library: the handler library against the lab's worker, {args.rounds} interleaved rounds")
        library = library_bench.run(rounds=args.rounds)
        library_bench.RESULTS.write_text(json.dumps(library, indent=2) + "\n")
        if not args.no_docs:
            report.update_page(
                library_bench.render(library),
                begin=library_bench.BLOCK_BEGIN,
                end=library_bench.BLOCK_END,
            )
    if "batches" not in args.skip:
        from bench import batch_bench

        results["batches"] = batch_bench.run_in_a_fresh_process()
    if "cost" not in args.skip:
        from bench import cost_bench

        # Function time comes from the batch figures: this run's, else the last run's.
        batches = results.get("batches") or _previous(args.out).get("batches")
        if batches:
            results["cost"] = cost_bench.run_in_a_fresh_process(batches)
        else:
            progress("cost: skipped, no batch figures in this run or in the last results")
    if "ops-cost" not in args.skip:
        from bench import ops_cost_check

        table = results.get("cost") or _previous(args.out).get("cost")
        if table:
            results["ops_cost"] = ops_cost_check.run_alone(table, progress)
        else:
            progress("ops cost check: skipped, no cost table in this run or in the last results")
    if "pipeline" not in args.skip:
        from bench import pipeline

        state_dir = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
        try:
            results["pipeline"] = pipeline.run(
                state_dir=state_dir,
                plan=PIPELINE_PLAN,
                backlog=BACKLOG,
                budget_seconds=args.pipeline_budget,
                progress=progress,
            )
        finally:
            shutil.rmtree(state_dir, ignore_errors=True)
    if "dlq" not in args.skip:
        from bench import dlq_redrive

        results["dlq_redrive"] = dlq_redrive.run(progress)
    if "dev-loop" not in args.skip:
        from bench import devloop

        results["dev_loop"] = devloop.run(
            synth_runs=args.synth_runs,
            tests=args.tests,
            test_runs=args.test_runs,
            python=sys.executable,
            progress=progress,
        )


def _report(args: argparse.Namespace, results: dict[str, Any]) -> None:
    """The results file, the tables on stdout and, unless --no-docs, in docs/benchmarks.md."""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=False) + "\n")
    markdown = report.render(results)
    print(markdown)
    progress(f"results in {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    if not args.no_docs and report.update_page(markdown):
        progress("docs/benchmarks.md tables updated")
    if "batches" in results:
        from bench import batch_bench

        print(batch_bench.render(results["batches"]))
        if not args.no_docs:
            report.update_page(
                batch_bench.render(results["batches"]),
                begin=batch_bench.BLOCK_BEGIN,
                end=batch_bench.BLOCK_END,
            )
    if "dlq_redrive" in results:
        from bench import dlq_redrive

        print(dlq_redrive.render(results["dlq_redrive"]))
        if not args.no_docs:
            dlq_redrive.update_page(dlq_redrive.render(results["dlq_redrive"]))


if __name__ == "__main__":
    sys.exit(main())
