"""The alarm table (lib/src/idempotent_consumer/alarms.py) is the one source of what the docs and the live view say
about alarms: docs/operations.md's alarm table is exactly the rendered table for the default
context, every alarm has its runbook paragraph there, and the view's page names only alarms of
the table, with their thresholds."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from idempotent_consumer.alarms import (
    ALARMS,
    DOC_TABLE_HEADER,
    FIFO_DOC_TABLE_HEADER,
    TABLE,
    AlarmSettings,
    fifo_doc_table,
    resolved,
    runbook,
)
from stacks.config import CONTEXT_DEFAULTS, Names, StackConfig

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = ROOT / "docs" / "operations.md"
VIEW_STATIC = ROOT / "ops" / "view" / "static"
DEFAULTS = StackConfig.from_context({}).alarm_settings
FIFO_DEFAULTS = StackConfig.from_context({"fifo": "true"}).alarm_settings


def documented_table(header: str = DOC_TABLE_HEADER[0]) -> str:
    """The table in docs/operations.md that starts with `header`."""
    lines = OPERATIONS.read_text().splitlines()
    start = lines.index(header)
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[start:end])


def test_the_operations_runbook_is_rendered_from_the_alarm_table():
    """docs/operations.md's runbook is, section for section, the one rendered for the default
    context: an alarm added without a section, a section left behind, or a threshold or first
    command written differently fails."""
    expected = runbook(DEFAULTS)
    text = OPERATIONS.read_text()
    found = text.split("<!-- runbook:begin", 1)[1].split("-->\n", 1)[1].split("\n<!-- runbook:end -->", 1)[0]
    assert found == expected, (
        "docs/operations.md's runbook differs from lib/src/idempotent_consumer/alarms.py; replace it with:\n"
        + expected
    )
    assert [line for line in found.splitlines() if line.startswith("### ")] == [
        f"### `<prefix>-{what}`" for what in ALARMS
    ]


def test_the_operations_fifo_rows_are_rendered_from_the_alarm_table():
    """docs/operations.md's second table is the rows that differ with `-c fifo=true`, rendered for
    the default retentions: the two dead-letter alarms, whose texts and timing follow the queue type."""
    expected = fifo_doc_table(DEFAULTS, FIFO_DEFAULTS)
    assert documented_table(FIFO_DOC_TABLE_HEADER[0]) == expected, (
        "docs/operations.md's FIFO alarm rows differ from lib/src/idempotent_consumer/alarms.py; replace them with:\n"
        + expected
    )
    rows = expected.splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [
        "| `<prefix>-dead-letters`",
        "| `<prefix>-dead-letter-expiry`",
    ]
    assert "at least 14 days (expiry counts from its move into the DLQ)" in rows[0]
    assert "DLQ `ApproximateAgeOfOldestMessage` (Maximum) > 1,029,600 s in a minute" in rows[1]


def test_the_rendered_rows_follow_the_declarations():
    """The check above is not vacuous: another threshold or another count of periods changes the
    rendered row, and an extra declaration an extra row."""
    rows = dict(zip(ALARMS, doc_rows(DEFAULTS), strict=True))
    assert "> 300 s (`-c oldest_job_age_alarm_seconds=`) in a minute" in rows["oldest-job-age"]
    assert "in each of 118 consecutive hours" in rows["dead-letter-expiry"]
    assert "in any of the last 10 minutes" in rows["conflicting-orders"]
    other = replace(DEFAULTS, oldest_job_age_alarm_seconds=900, dead_letter_expiry_periods=22)
    changed = dict(zip(ALARMS, doc_rows(other), strict=True))
    assert "> 900 s" in changed["oldest-job-age"]
    assert "in each of 22 consecutive hours" in changed["dead-letter-expiry"]
    assert "22 hours in a row" in changed["dead-letter-expiry"]
    extra = replace(TABLE[-1], what="extra-alarm").resolved(DEFAULTS)
    assert extra.doc_row().startswith("| `<prefix>-extra-alarm` |")


def doc_rows(settings: AlarmSettings) -> list[str]:
    return [alarm.doc_row() for alarm in resolved(settings)]


def test_the_defaults_the_docs_describe_are_the_contexts():
    """The docs render the table for the default context, which is what these settings hold."""
    assert DEFAULTS == AlarmSettings(
        oldest_job_age_alarm_seconds=CONTEXT_DEFAULTS["oldest_job_age_alarm_seconds"],
        dead_letter_days_guaranteed=7,
        dead_letter_expiry_periods=118,
    )


def test_each_alarm_has_its_next_steps_in_the_runbook():
    """Every declaration says what to do after its first command, in words of its own (not the
    description's short hint again), and the runbook renders them."""
    text = runbook(DEFAULTS)
    for declaration in TABLE:
        assert declaration.steps and declaration.steps not in declaration.what_to_do, declaration.what
        assert f"Then: {declaration.steps}" in text, declaration.what


def test_names_and_descriptions_come_from_the_table():
    """Names.alarms is the table's order under the prefix, and each description (the alarm's
    AlarmDescription, which the notification and the live view show) is its meaning then its first
    step, with the settings filled in."""
    assert Names("p").alarms == tuple(f"p-{declaration.what}" for declaration in TABLE)
    assert len(set(ALARMS)) == len(ALARMS)
    for alarm in resolved(DEFAULTS):
        assert alarm.description == f"{alarm.means} {alarm.what_to_do}"
        assert "{" not in alarm.description, alarm.what
        assert "{statistic}" in alarm.declaration.watches, alarm.what


def view_mentions() -> list[tuple[str, str | None]]:
    """(alarm, threshold or None) for each alarm the view's static page names: `the X alarm`,
    `<code>X</code> watches`, `the X alarm fires at N`."""
    found = []
    for path in sorted(VIEW_STATIC.glob("*.*")):
        text = path.read_text()
        found += re.findall(r"\b[Tt]he ([a-z]+(?:-[a-z]+)+) alarm(?: fires at (\d+))?", text)
        found += [(name, "") for name in re.findall(r"<code>([a-z]+(?:-[a-z]+)+)</code> watches", text)]
    return [(name, threshold or None) for name, threshold in found]


def test_the_view_names_only_alarms_of_the_table_with_their_thresholds():
    """The live view's own words about alarms (its glossary, chart captions, summary tips) name
    alarms that exist, and a threshold they quote is the table's; the alarms' descriptions it shows
    are read from the deployed alarms, which the stack makes from the table."""
    mentions = view_mentions()
    assert mentions, "the view names no alarm: the pattern no longer finds its mentions"
    thresholds = {alarm.what: alarm.threshold for alarm in resolved(DEFAULTS)}
    for name, threshold in mentions:
        assert name in thresholds, (
            f"the view names alarm {name!r}, which lib/src/idempotent_consumer/alarms.py does not declare"
        )
        if threshold is not None:
            assert float(threshold) == thresholds[name], name
