"""A measured figure on a page comes from the results it cites. Prose that quotes a run sits
between `<!-- figures from <source> ... -->` and `<!-- figures end -->`; every number in it must be
in a cited source (a JSON results file, at the precision quoted; a test module, as written there),
or in the page's generated blocks, or be one of RULES. Generated blocks, inline code and link
targets are not prose. A figure typed from an older run, or left behind when a test changed what
it sends, fails here."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]

REGION = re.compile(r"<!-- figures from ([^>]+?) -->(.*?)<!-- figures end -->", re.DOTALL)
GENERATED = re.compile(r"<!-- ([\w-]+):begin .*?-->(.*?)<!-- \1:end -->", re.DOTALL)
# Not prose: inline code, a link's target, a date, a version.
NOT_PROSE = re.compile(
    r"`[^`]*`|\]\([^)]*\)|\b\d{4}-\d{2}-\d{2}\b|\bv?\d+\.\d+\.\d+\b"
    r"|\b\d{1,2}\s+(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+\d{4}\b"
)
# A number as the pages write it (1,940 or 0.145), not part of a name (arm64, 5xx, S3, b10).
NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![a-wyz_\d]|xx)")

# Rules, not measurements: the numbers a region may state without a source (AWS's limits, the
# product's and the stack's settings, the benchmark's goals). A measurement is never added here.
RULES = {
    "256": "the stack's function memory, MB",
    "1769": "Lambda's memory for one whole vCPU, MB",
    "0.145": "256/1,769: the vCPU share at 256 MB",
    "120000": "SQS's in-flight cap of a standard queue",
    "2.5": "the issue's goal for a batch of ten against one",
}


def number_value(match: re.Match[str]) -> tuple[str, float, int]:
    """(normalized text, value, decimals) of a NUMBER match."""
    text = match[1].replace(",", "") + (match[2] or "")
    return text, float(text), len(match[2] or ".") - 1


def prose_numbers(text: str) -> list[tuple[str, float, int]]:
    text = GENERATED.sub(" ", text)
    text = NOT_PROSE.sub(" ", text)
    return [number_value(m) for m in NUMBER.finditer(text)]


def json_numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in json_numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in json_numbers(v)]
    if isinstance(value, str):
        return [number_value(m)[1] for m in NUMBER.finditer(value)]
    return []


class Source:
    """The numbers a cited file holds: a JSON file's values (matched at the precision a page
    quotes them), any other file's numbers as written in it."""

    def __init__(self, path: Path) -> None:
        if path.suffix == ".json":
            self.values = json_numbers(json.loads(path.read_text()))
            self.texts: set[str] = set()
        else:
            self.values = []
            self.texts = {number_value(m)[0] for m in NUMBER.finditer(path.read_text())}

    def holds(self, text: str, value: float, decimals: int) -> bool:
        if text in self.texts:
            return True
        half = 0.5 * 10**-decimals + 1e-9
        return any(math.isclose(v, value, abs_tol=half) for v in self.values)


def regions(page: Path) -> list[tuple[list[str], str]]:
    return [(m[1].split(), m[2]) for m in REGION.finditer(page.read_text())]


def unsourced(page: Path) -> list[str]:
    """The numbers of `page`'s figure regions that no cited source, generated block or rule holds."""
    text = page.read_text()
    generated = {number_value(m)[0] for block in GENERATED.finditer(text) for m in NUMBER.finditer(block[2])}
    missing = []
    for names, region in regions(page):
        sources = [Source(ROOT / name) for name in names]
        for number, value, decimals in prose_numbers(region):
            if number in RULES or number in generated:
                continue
            if not any(source.holds(number, value, decimals) for source in sources):
                missing.append(f"{page.name}: {number} (from {', '.join(names)})")
    return missing


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_figure_a_page_quotes_is_in_the_results_it_cites(page):
    assert unsourced(page) == []


@pytest.mark.parametrize("page", ["benchmarks.md", "reliability.md"])
def test_the_pages_that_quote_runs_mark_their_figures(page):
    """The pages whose prose quotes a run cite it, every source they cite exists, and each region
    holds figures: a marker that checks nothing cannot pass for one that does."""
    found = regions(ROOT / "docs" / page)
    assert found
    assert [name for names, _ in found for name in names if not (ROOT / name).is_file()] == []
    assert all(prose_numbers(region) for _, region in found)


def test_a_stale_figure_fails(tmp_path):
    """The check itself, against a results file of its own (bench/results.json changes with every
    run): the batch prose of an older run (104-114 ms to 59-66 ms, 5.6-5.7x) is caught against
    this run's 133.73 to 79.06 ms, 5.9x; the current prose passes; precision, rules, code and
    dates are read as the pages write them."""
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            {
                "batch": {"one": 22.66, "ten": [133.73, 79.06], "ratio": 5.9},
                "cpu_ms": [2.9, 3.6],
                "floor_ratio": 1.22,
                "orders": 1940,
                "round_trip_ms": 5,
            }
        )
    )
    page = tmp_path / "page.md"
    cite = f"<!-- figures from {results} -->"
    end = "<!-- figures end -->"
    page.write_text(
        f"{cite}\ntwo writes in flight bring a batch of ten at a 5 ms round trip from 104-114 to"
        f" 59-66 ms, 5.6-5.7x a batch of one, at 256 MB on 2026-12-02\n{end}\n"
    )
    assert [line.split()[1] for line in unsourced(page)] == ["104", "114", "59", "66", "5.6", "5.7"]
    page.write_text(
        f"{cite}\nfrom 133.73 to 79.06 ms, 5.9x (`make bench`, 1,940 orders), 2.9-3.6 ms of CPU"
        f" for one, 1.22x the floor, 134 ms rounded\n{end}\n<!-- x:begin -->\n| 1.25x |\n<!-- x:end -->\n"
        f"{cite}\n1.25x from the generated block\n{end}\n"
    )
    assert unsourced(page) == []
    page.write_text(f"{cite}\n133.8 ms, arm64, 5xx, 4.56x\n{end}\n")
    assert unsourced(page) == [
        f"page.md: 133.8 (from {results})",
        f"page.md: 4.56 (from {results})",
    ]
