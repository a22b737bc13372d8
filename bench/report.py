"""What the benchmark ran on, and its results as markdown (printed, and kept in docs/benchmarks.md)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.stats import markdown_table, spread_cell
from bench.variants import LABELS, ROOT, VARIANTS

RESULTS_FILE = ROOT / "bench" / "results.json"
BLOCK_BEGIN = "<!-- bench:begin (written by `make bench`) -->"
BLOCK_END = "<!-- bench:end -->"
OVERHEAD_GOAL = 1.15
# The pipeline's goals, as docs/benchmarks.md states them: msg/s by batch size, and no slow-down
# as a run grows (late/early rate).
PIPELINE_RATE_GOALS = {10: 200, 1: 80}
LATE_EARLY_GOAL = 0.9


def verdict(value: float, goal: float, at_least: bool = True) -> str:
    """`met` or `NOT met`: `value` against a floor (`at_least`) or a ceiling."""
    return "met" if (value >= goal if at_least else value <= goal) else "NOT met"


def pipeline_goals(step: dict[str, Any]) -> str:
    """The goal cell of one pipeline step: its median rate and lowest late/early rate against
    the goals."""
    cells = []
    goal = PIPELINE_RATE_GOALS.get(step["batch_size"])
    if goal is not None:
        rate = step["messages_per_second"]["median"]
        cells.append(f">= {goal} msg/s: {verdict(rate, goal)}")
    growth = [g for g in step["late_over_early_rate"] if g]
    if growth:
        cells.append(f"late/early >= {LATE_EARLY_GOAL}: {verdict(min(growth), LATE_EARLY_GOAL)}")
    return "; ".join(cells) or "-"


def pipeline_summary(pipeline: dict[str, Any]) -> str:
    """One sentence: each pipeline goal, met or NOT met, with the figure that decides it."""
    steps = pipeline["results"]
    parts = []
    for size, goal in sorted(PIPELINE_RATE_GOALS.items(), reverse=True):
        rates = [s["messages_per_second"]["median"] for s in steps if s["batch_size"] == size]
        if rates:
            parts.append(
                f"at least {goal} msg/s at batch size {size}: {verdict(max(rates), goal)} (best median {max(rates):.1f})"
            )
        else:
            parts.append(f"at least {goal} msg/s at batch size {size}: not measured")
    growth = [g for s in steps for g in s["late_over_early_rate"] if g]
    if growth:
        parts.append(
            f"late/early at least {LATE_EARLY_GOAL} in every run: {verdict(min(growth), LATE_EARLY_GOAL)} "
            f"(lowest {min(growth):.2f})"
        )
    return "Goals: " + "; ".join(parts) + "."


def _output(command: list[str]) -> str:
    try:
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()  # noqa: S603  fixed version probes (node, npx cdk, git), no shell
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    try:
        memory_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        memory = f"{memory_kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        memory = "unknown"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "node": _output(["node", "--version"]),
        "moto": _version("moto"),
        "boto3": _version("boto3"),
        "aws_lambda_powertools": _version("aws-lambda-powertools"),
        "aws_cdk_cli": _output(["npx", "--no-install", "cdk", "--version"]).split(" ")[0],
        "commit": _output(["git", "rev-parse", "--short", "HEAD"]),
        "uncommitted_changes": bool(_output(["git", "status", "--porcelain", "--untracked-files=no"])),
    }


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU a live process has used (from /proc; 0.0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> list[float]:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return []


def _units(tally: dict[str, Any]) -> str:
    actions = ", ".join(
        f"{count:g} {name.replace(' (ConditionalCheckFailedException)', ' rejected')}"
        for name, count in tally["calls_by_action"].items()
    )
    calls = "call" if tally["calls"] == 1 else "calls"
    return f"{tally['write_units']:g} WCU, {tally['calls']:g} {calls}: {actions}"


def render(results: dict[str, Any]) -> str:
    """The `make bench` block: the machine, then each part the results hold, in the page's order."""
    parts = [_machine_line(results)]
    if results.get("handlers"):
        parts += _handler_tables(results["handlers"])
    if results.get("cost"):
        from bench import cost_report

        parts.append(cost_report.render(results["cost"]).rstrip("\n"))
    if results.get("ops_cost"):
        from bench import cost_report

        parts.append(cost_report.render_ops_check(results["ops_cost"]).rstrip("\n"))
    if results.get("pipeline"):
        parts.append(_pipeline_table(results["pipeline"]))
    loop = results.get("dev_loop")
    if loop:
        rows = [[f"`{loop['cdk_synth']['command']}`", spread_cell(loop["cdk_synth"]["seconds"], 1)]]
        if "tests" in loop:
            rows.append([f"`{loop['tests']['command']}`", spread_cell(loop["tests"]["seconds"], 1)])
        parts.append("**Developer loop** (seconds)\n\n" + markdown_table(["command", "s"], rows))
    return "\n\n".join(parts) + "\n"


def _machine_line(results: dict[str, Any]) -> str:
    info = results["machine"]
    return (
        f"Measured {results['started'][:10]} at commit {info['commit']}"
        f"{' (with uncommitted changes in the tree)' if info.get('uncommitted_changes') else ''} on {info['cpu']}, {info['cores']} cores, "
        f"{info['memory']}, {info['os']}; Python {info['python']}, Node {info['node']}, moto {info['moto']}, "
        f"boto3 {info['boto3']}, Powertools {info['aws_lambda_powertools']}, CDK CLI {info['aws_cdk_cli']}. "
        f"Load average (1/5/15 min) {results['load_average']['start']} at the start and "
        f"{results['load_average']['end']} at the end; the whole run took {results['duration_seconds']:.0f} s. "
        f"Reproduce with `{results['command']}`."
    )


def _handler_tables(handlers: dict[str, Any]) -> list[str]:
    parts: list[str] = []
    rows = []
    for name in ("bare", *VARIANTS):
        writes = handlers["writes"][name]
        rows.append([LABELS[name], _units(writes["first"]), _units(writes["duplicate"])])
    parts.append(
        "**DynamoDB cost per order** (requests counted inside the embedded DynamoDB; write units "
        "by DynamoDB's rule: per started 1 KB of the larger of the item before and after, and a "
        "rejected conditional write still costs them)\n\n"
        + markdown_table(["handler", "first delivery", "duplicate delivery"], rows)
    )
    rows = []
    for name in ("bare", *VARIANTS):
        warm = handlers["warm"][name]
        row = [LABELS[name]]
        for delivery in ("first", "duplicate"):
            row.append(spread_cell(warm[delivery]["ms"]))
            row.append(
                f"{warm[delivery]['ratio_to_bare_put']:.2f} (blocks {warm[delivery]['ratio_blocks']['min']:.2f}"
                f"-{warm[delivery]['ratio_blocks']['max']:.2f})"
            )
        rows.append(row)
    ours = handlers["warm"]["ours"]["first"]["ratio_to_bare_put"]
    parts.append(
        "**Warm time per message**, one-record events, each variant and a bare conditional PutItem "
        "to the same endpoint interleaved round by round; ratio = median / median of the bare "
        f"PutItem, with the range of that ratio over {handlers['warm']['ours']['first']['ratio_blocks']['n']} "
        f"consecutive blocks of rounds. Goal for this handler: at most {OVERHEAD_GOAL} "
        f"on first delivery: {verdict(ours, OVERHEAD_GOAL, at_least=False)} ({ours:.2f}).\n\n"
        + markdown_table(["handler", "first delivery ms", "ratio", "duplicate ms", "ratio"], rows)
    )
    rows = [[LABELS[name], spread_cell(handlers["cold_start"][name], 0)] for name in ("bare", *VARIANTS)]
    parts.append(
        "**Cold start**: a fresh Python process from start to the first result (interpreter, imports, "
        "client creation, one message), timed by the parent; not Lambda's own init.\n\n"
        + markdown_table(["handler", "ms"], rows)
    )
    return parts


def _pipeline_table(pipeline: dict[str, Any]) -> str:
    rows = []
    for step in pipeline["results"]:
        growth = [g for g in step["late_over_early_rate"] if g]
        per_invocation = [
            r["mean_records_per_invocation"] for r in step["runs"] if r["mean_records_per_invocation"]
        ]
        rows.append(
            [
                step["batch_size"],
                f"{step.get('round_trip_ms', 0):g}",
                step["messages"],
                step["backlog"],
                spread_cell(step["messages_per_second"], 1),
                f"{sum(per_invocation) / len(per_invocation):.1f}" if per_invocation else "-",
                ", ".join(f"{g:.2f}" for g in growth) or "-",
                pipeline_goals(step),
            ]
        )
    for step in pipeline["skipped"]:
        rows.append(
            [
                step["batch_size"],
                f"{step.get('round_trip_ms', 0):g}",
                step["messages"],
                "-",
                f"not run: {step['reason']}",
                "-",
                "-",
                "not measured",
            ]
        )
    return (
        f"**Local pipeline throughput**: {pipeline['what']}. Deploy took "
        f"{pipeline['deploy_seconds']:.0f} s. Late/early = rate in tenths 8-9 of a "
        "run over tenths 2-3 (1.0: no slow-down as the run grows). "
        + pipeline_summary(pipeline)
        + "\n\n"
        + markdown_table(
            [
                "batch size",
                "PutItem round trip, ms",
                "messages",
                "backlog",
                "msg/s",
                "records per invocation",
                "late/early rate",
                "goals",
            ],
            rows,
        )
    )


def update_page(
    markdown: str,
    page: Path = ROOT / "docs" / "benchmarks.md",
    begin: str = BLOCK_BEGIN,
    end: str = BLOCK_END,
) -> bool:
    """Replace the block between the markers, if the page has them; nothing else is touched."""
    text = page.read_text()
    if begin not in text or end not in text:
        return False
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    page.write_text(f"{head}{begin}\n{markdown}{end}{tail}")
    return True


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def rerun_part(
    program: str,
    needs: str,
    missing: str,
    key: str,
    measure: Callable[[dict[str, Any]], dict[str, Any]],
    render_part: Callable[[dict[str, Any]], str],
    write_docs: bool,
) -> int:
    """`python -m bench.<part>`: one part measured again beside the last `make bench`'s figures:
    `measure` reads the part it `needs` from bench/results.json, its result goes under `key`, is
    printed and, with `write_docs`, fills the generated block of docs/benchmarks.md."""
    results: dict[str, Any] = json.loads(RESULTS_FILE.read_text())
    if needs not in results:
        print(f"{program}: bench/results.json has no {missing}; run `make bench`", file=sys.stderr)
        return 1
    results[key] = measure(results)
    RESULTS_FILE.write_text(json.dumps(results, indent=2) + "\n")
    print(render_part(results[key]))
    if write_docs:
        update_page(render(results))
    return 0
