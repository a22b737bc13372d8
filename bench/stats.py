"""Pure helpers of the benchmark: summaries of samples, ratios, DynamoDB write units, table cells.
No AWS and no timing here, so tests/unit can pin them."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from typing import Any

# DynamoDB bills a standard write per started 1 KB of the item, the larger of before and after.
WRITE_UNIT_BYTES = 1024
# Below this many samples the spread shown is min..max; from here on p25..p75.
PERCENTILE_SPREAD_FROM = 20


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), fraction in 0..1."""
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be 0..1, got {fraction!r}")
    ordered = sorted(samples)
    position = (len(ordered) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(samples: Sequence[float], unit: str) -> dict[str, Any]:
    """Median and spread of repeated measurements, rounded for reading; raw samples kept if few."""
    if not samples:
        raise ValueError("no samples to summarize")
    summary = {
        "unit": unit,
        "n": len(samples),
        "median": statistics.median(samples),
        "p25": percentile(samples, 0.25),
        "p75": percentile(samples, 0.75),
        "min": min(samples),
        "max": max(samples),
    }
    rounded = {key: (_round(value) if isinstance(value, float) else value) for key, value in summary.items()}
    if len(samples) < PERCENTILE_SPREAD_FROM:
        rounded["samples"] = [_round(float(value)) for value in samples]
    return rounded


def _round(value: float) -> float:
    """Four significant digits: enough for medians of noisy timings, short in JSON."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, max(0, 3 - math.floor(math.log10(abs(value)))))


def blocked_ratios(numerator: Sequence[float], denominator: Sequence[float], blocks: int) -> list[float]:
    """Ratio of medians in each of `blocks` consecutive slices of interleaved paired samples.

    The slices are repeated runs inside one measurement: their spread shows how stable the
    ratio is, which a single ratio of two medians cannot."""
    if len(numerator) != len(denominator):
        raise ValueError(f"paired samples differ in length: {len(numerator)} and {len(denominator)}")
    if blocks < 1 or len(numerator) < blocks:
        raise ValueError(f"cannot split {len(numerator)} samples into {blocks} blocks")
    size = len(numerator) // blocks
    return [
        statistics.median(numerator[i * size : (i + 1) * size])
        / statistics.median(denominator[i * size : (i + 1) * size])
        for i in range(blocks)
    ]


def write_units(before_bytes: int | None, after_bytes: int | None) -> int:
    """Write units of one PutItem/UpdateItem/DeleteItem, accepted or conditionally rejected.

    DynamoDB sizes a write by the larger of the item before and after it; a rejected conditional
    write still consumes them, and any write costs at least one unit."""
    size = max(before_bytes or 0, after_bytes or 0)
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def read_units(item_bytes: int | None, consistent: bool) -> float:
    """Read units of one GetItem: per started 4 KB, halved for an eventually consistent read."""
    units = max(1, math.ceil((item_bytes or 0) / 4096))
    return float(units) if consistent else units / 2


def spread_cell(summary: dict[str, Any], digits: int = 2) -> str:
    """`median (spread, n)` for a table cell, saying which spread it is."""
    if summary["n"] >= PERCENTILE_SPREAD_FROM:
        spread = f"p25-p75 {summary['p25']:.{digits}f}-{summary['p75']:.{digits}f}"
    else:
        spread = f"min-max {summary['min']:.{digits}f}-{summary['max']:.{digits}f}"
    return f"{summary['median']:.{digits}f} ({spread}, n={summary['n']})"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def decile_rates(samples: Sequence[tuple[float, int]], total: int) -> list[float | None]:
    """Messages per second in each tenth of a run, from (seconds since start, acknowledged so far)
    samples: the time each 10% boundary was first reached, interpolated between samples."""
    if total <= 0:
        raise ValueError("a run needs at least one message")
    crossings: list[float | None] = [0.0]
    for tenth in range(1, 11):
        target = total * tenth / 10
        crossings.append(_crossing_time(samples, target))
    rates: list[float | None] = []
    for start, end in itertools.pairwise(crossings):
        if start is None or end is None or end <= start:
            rates.append(None)
        else:
            rates.append(total / 10 / (end - start))
    return rates


def _crossing_time(samples: Sequence[tuple[float, int]], target: float) -> float | None:
    previous = (0.0, 0)
    for moment, count in samples:
        if count >= target:
            (t0, c0), (t1, c1) = previous, (moment, count)
            return t1 if c1 == c0 else t0 + (t1 - t0) * (target - c0) / (c1 - c0)
        previous = (moment, count)
    return None
