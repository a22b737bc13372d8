"""The benchmark's pure helpers (bench/stats.py, the request tally, the docs block): no timing,
no AWS, so the figures `make bench` publishes rest on arithmetic that is pinned here."""

from __future__ import annotations

from typing import Any

import pytest

from bench import report
from bench.handler_bench import tally
from bench.stats import (
    blocked_ratios,
    decile_rates,
    percentile,
    read_units,
    spread_cell,
    summarize,
    write_units,
)


def test_percentile_interpolates_between_ranks():
    """Linear interpolation between closest ranks, as numpy's default does."""
    assert percentile([1, 2, 3, 4], 0.5) == 2.5
    assert percentile([10, 0, 5], 0.25) == 2.5
    assert percentile([7], 0.9) == 7
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_summary_keeps_samples_only_when_few():
    """A summary has median and spread; raw samples are kept for short series only."""
    few = summarize([3.0, 1.0, 2.0], "ms")
    assert (few["median"], few["min"], few["max"], few["n"]) == (2.0, 1.0, 3.0, 3)
    assert few["samples"] == [3.0, 1.0, 2.0]
    many = summarize([float(n) for n in range(100)], "ms")
    assert many["median"] == 49.5 and "samples" not in many


def test_spread_cell_names_the_spread_it_shows():
    """Short series show min-max, long ones the interquartile range, and say which."""
    assert spread_cell(summarize([1.0, 2.0, 3.0], "s"), 1) == "2.0 (min-max 1.0-3.0, n=3)"
    assert "p25-p75" in spread_cell(summarize([float(n) for n in range(40)], "s"))


def test_blocked_ratios_are_ratios_of_block_medians():
    """Each block's ratio is median(numerator block) / median(denominator block)."""
    assert blocked_ratios([2, 2, 6, 6], [1, 1, 2, 2], blocks=2) == [2.0, 3.0]
    with pytest.raises(ValueError):
        blocked_ratios([1, 2], [1], blocks=1)
    with pytest.raises(ValueError):
        blocked_ratios([1], [1], blocks=2)


@pytest.mark.parametrize(
    "before, after, units",
    [
        (None, 60, 1),  # a new small item
        (60, 60, 1),  # a rejected conditional write still costs a unit
        (None, None, 1),  # nothing stored before or after: still the minimum
        (1024, None, 1),  # exactly 1 KB
        (1025, 40, 2),  # the larger of before and after counts
        (None, 3000, 3),
    ],
)
def test_write_units_follow_dynamodb_sizing(before, after, units):
    """One write unit per started 1 KB of the larger of the item before and after, at least one."""
    assert write_units(before, after) == units


def test_read_units_halve_for_eventually_consistent_reads():
    assert read_units(100, consistent=True) == 1.0
    assert read_units(100, consistent=False) == 0.5
    assert read_units(5000, consistent=True) == 2.0


def test_tally_counts_calls_and_units_per_order():
    """Two orders, each an accepted PutItem plus an UpdateItem: two calls and two units per order."""
    requests: list[dict[str, Any]] = [
        {"action": "PutItem", "table": "t", "error": None, "before": None, "after": 50, "consistent": False},
        {"action": "UpdateItem", "table": "t", "error": None, "before": 50, "after": 90, "consistent": False},
        {
            "action": "PutItem",
            "table": "t",
            "error": "ConditionalCheckFailedException",
            "before": 50,
            "after": 50,
            "consistent": False,
        },
        {
            "action": "UpdateItem",
            "table": "u",
            "error": None,
            "before": 2000,
            "after": 2100,
            "consistent": False,
        },
    ]
    found = tally(requests, orders=2)
    assert found["calls"] == 2 and found["write_calls"] == 2
    assert found["write_units"] == (1 + 1 + 1 + 3) / 2
    assert found["calls_by_action"] == {
        "PutItem": 0.5,
        "PutItem (ConditionalCheckFailedException)": 0.5,
        "UpdateItem": 1.0,
    }
    assert found["tables"] == ["t", "u"]


def test_decile_rates_from_progress_samples():
    """A steady run gives its rate in every tenth; a run that never finishes has gaps."""
    samples = [(t / 10, t) for t in range(101)]  # 100 messages over 10 s
    assert decile_rates(samples, 100) == pytest.approx([10.0] * 10)
    steady = [(float(t), 100 * t) for t in range(1, 11)]
    assert decile_rates(steady, 1000) == pytest.approx([100.0] * 10)
    assert decile_rates([(1.0, 50)], 100)[5:] == [None] * 5


def test_docs_block_is_replaced_between_markers_only(tmp_path):
    """`make bench` rewrites only its own block; a page without the markers is left alone."""
    readme = tmp_path / "README.md"
    readme.write_text(f"# T\n\nintro\n\n{report.BLOCK_BEGIN}\nold\n{report.BLOCK_END}\n\n## After\n")
    assert report.update_page("new table\n", readme)
    assert (
        readme.read_text()
        == f"# T\n\nintro\n\n{report.BLOCK_BEGIN}\nnew table\n{report.BLOCK_END}\n\n## After\n"
    )
    plain = tmp_path / "PLAIN.md"
    plain.write_text("# nothing to replace\n")
    assert not report.update_page("x", plain)
    assert plain.read_text() == "# nothing to replace\n"


def test_a_cpu_share_is_refused_in_one_line_where_no_cgroup_can_hold_it(tmp_path, monkeypatch):
    """Without a cgroup hierarchy that has the cpu controller, nothing is changed and the
    reason is one line; a share outside (0, 1] or under the kernel's smallest quota is refused."""
    from bench import cpu_share

    monkeypatch.setattr(cpu_share, "CGROUP_ROOT", tmp_path)
    refusal = r"^no cgroup of this process has the cpu controller"
    with pytest.raises(cpu_share.Unavailable, match=refusal), cpu_share.held_to(0.5):
        pass
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="in \\(0, 1\\]"), cpu_share.held_to(1.5):
        pass
    with pytest.raises(cpu_share.Unavailable, match="smallest quota"), cpu_share.held_to(0.01):
        pass


def _batch_result(held: dict) -> dict:
    cell = {
        "batch_1_ms": 10.0,
        "batch_10_ms": 60.0,
        "ratio_10_to_1": 6.0,
        "cpu_1_ms": 2.0,
        "cpu_10_ms": 20.0,
    }
    handlers = {
        variant: {"0 ms": cell, "5 ms": cell} for variant in ("ours-1", "ours-2", "lab", "powertools")
    }
    return {
        "rounds": 15,
        "memory_mb": 256,
        "handlers": handlers,
        "held_to_memory": held,
        "orders_sent": 10,
        "orders_stored": 10,
        "goal": "g",
        "goal_met": False,
        "goal_met_at_memory": None,
        "load_average_at_start": [0.1, 0.2, 0.3],
    }


def test_the_batch_table_shows_the_times_held_to_the_memorys_cpu_or_says_why_not():
    """Held: the measured times at the memory's share. Not held: the reason, and the least time
    the measured CPU takes at that share (CPU / 0.145)."""
    from bench.batch_bench import render

    slow = {
        **_batch_result({})["handlers"]["lab"]["0 ms"],
        "batch_1_ms": 70.0,
        "batch_10_ms": 490.0,
        "ratio_10_to_1": 7.0,
    }
    held = {
        "share": 0.1447,
        "rounds": 7,
        "handlers": {v: {"0 ms": slow, "5 ms": slow} for v in ("ours-1", "ours-2", "lab", "powertools")},
    }
    shown = render({**_batch_result(held), "goal_met_at_memory": False})
    assert "held to 256 MB's share of a vCPU, 0.145" in shown and "goal NOT met there" in shown
    assert (
        "| this handler, one write at a time (its choice below 1,769 MB) | 5 ms | 10.0 / 60.0 | 6.0x | 2.0 / 20.0 | 70.0 / 490.0 | 7.0x |"
        in shown
    )
    refused = render(_batch_result({"unavailable": "no cgroup of this process has the cpu controller"}))
    assert "not held to 256 MB's share of a vCPU: no cgroup of this process has the cpu controller" in refused
    assert (
        "| this handler, two at a time (its choice from 1,769 MB) | 0 ms | 10.0 / 60.0 | 6.0x | 2.0 / 20.0 | at least 14 / 138 (the CPU / 0.145) | - |"
        in refused
    )
