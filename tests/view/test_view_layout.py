"""The page's layout and words in a real headless browser, on a busy young stack made in moto
in-process (tests/view/fake_consumer.py; fast, no emulator): at a phone's width and a wide
screen nothing scrolls sideways or is cut off, the charts span the panel and zoom to the minutes
that have data, each message is one row with its delivery count, and the three kinds of
"error" have names of their own. Screenshots go to tests/artifacts/ (each test prints the path)."""

from __future__ import annotations

import re

import pytest
from moto import mock_aws

from ops.aws import Clients, Endpoint
from ops.view.server import View, start_in_thread
from tests.view.browser import layout_problems, screenshot, scrolls_sideways
from tests.view.fake_consumer import ALARMS, BAD_DELIVERIES, LONG_ID, PREFIX, REGION, create_busy_day

pytestmark = [pytest.mark.slow, pytest.mark.long_wait(15)]

DEADLINE_MS = 20_000
POLL_MS = 300_000
WIDTHS = [375, 1400]


@pytest.fixture(scope="module")
def view():
    """The view of a busy day, served from this process with moto's in-process AWS behind it."""
    with pytest.MonkeyPatch.context() as env, mock_aws():
        for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
            env.delenv(key, raising=False)
        for key, value in (
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
            ("AWS_DEFAULT_REGION", REGION),
        ):
            env.setenv(key, value)
        clients = Clients(Endpoint(region=REGION))
        create_busy_day(clients)
        # One snapshot per page load: the page does not redraw (and replace the elements a test is
        # measuring) while the tests read it.
        running = start_in_thread(View(clients, prefix=PREFIX, poll_ms=POLL_MS))
        try:
            yield running
        finally:
            running.stop()


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"{width}px" for width in WIDTHS])
def page(browser, view, request):
    """The page loaded at one width, its messages shown and its dead-letter panel open; loaded
    once per width (the tests only read it)."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": request.param, "height": 900})
    page = context.new_page()
    page.goto(view.url)
    expect(page.get_by_test_id("status")).to_have_text("live", timeout=DEADLINE_MS)
    expect(page.locator("#messages tr.message-row")).to_have_count(7, timeout=DEADLINE_MS)
    page.get_by_test_id("dlq-inspect").click()
    expect(page.get_by_test_id("dlq-message")).to_have_count(2, timeout=DEADLINE_MS)
    yield page
    context.close()


def test_the_page_fits_its_width_with_nothing_cut_off(page):
    """No sideways scrolling, no element past the viewport's right edge and none that cuts its
    own content off; every panel is shown; alarm names stay on one line and the longest alarm
    reason is shown whole, wrapped."""
    from playwright.sync_api import expect

    width = page.viewport_size["width"]
    path = screenshot(page, f"live-view-busy-{width}.png")
    assert not scrolls_sideways(page), page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert layout_problems(page) == []
    for test_id in (
        "jobs-card",
        "dlq-card",
        "mapping-card",
        "summary-card",
        "glossary",
        "alarms-panel",
        "charts",
        "messages-panel",
        "orders",
        "reference",
        "dlq-panel",
    ):
        expect(page.get_by_test_id(test_id)).to_be_visible()
    names = page.get_by_test_id("alarm-name")
    expect(names).to_have_count(len(ALARMS))
    # An inline element has one box per line it occupies.
    assert names.evaluate_all("nodes => nodes.map((node) => node.getClientRects().length)") == [1] * len(
        ALARMS
    )
    reason = page.locator(f'[data-alarm="{PREFIX}-worker-errors"] [data-testid="alarm-reason"]')
    expect(reason).to_contain_text("(minimum 1 datapoint for OK -> ALARM transition).")
    assert reason.evaluate(
        "node => node.scrollWidth <= node.clientWidth && node.scrollHeight <= node.clientHeight"
    )
    if width < 400:  # wrapped onto several lines, not cut off
        line = names.first.bounding_box()["height"]
        assert reason.bounding_box()["height"] > 2 * line
    expect(page.locator(f'#orders tr[data-order-id="{LONG_ID}"]')).to_be_visible()
    assert path.stat().st_size > 10_000


def test_charts_span_the_panel_and_zoom_to_the_minutes_with_data(page):
    """Four minutes of datapoints fill the axis (the first point is near its left end, not
    squeezed against the right edge of an hour), each chart is as wide as its panel, and the
    title says how many minutes it shows: from half a minute before the oldest datapoint the page
    was given to the snapshot's moment (on a loaded machine minutes after the data was made)."""
    from playwright.sync_api import expect

    taken_at_ms, oldest_ms = page.evaluate(
        "[lastSnapshot.taken_at_ms, Math.min(...Object.values(lastSnapshot.series).flat().map(([ms]) => ms))]"
    )
    minutes = round((taken_at_ms - oldest_ms + 30_000) / 60_000)
    assert 5 <= minutes < 60, (taken_at_ms, oldest_ms)  # 4 minutes of datapoints, and now
    expect(page.locator("#charts-title")).to_have_text(f"Last {minutes} minutes")
    panel = page.get_by_test_id("charts").evaluate("node => node.clientWidth")
    axes = []
    for chart_id in ("chart-decisions", "chart-invocation-errors", "chart-queues"):
        chart = page.locator(f"#{chart_id} svg")
        box = chart.bounding_box()
        assert box["width"] > 0.85 * panel, (chart_id, box["width"], panel)
        # drawn at its box's width (text keeps its size), not a small drawing scaled up
        assert chart.evaluate("svg => Math.abs(svg.width.baseVal.value - svg.parentElement.clientWidth) <= 1")
        xs = [
            float(x)
            for x in chart.locator("circle").evaluate_all("nodes => nodes.map((n) => n.getAttribute('cx'))")
        ]
        if chart_id != "chart-invocation-errors":  # that one has a single datapoint
            # three minutes between the first and last point: on an hour's axis they would span 5 %
            assert min(xs) < 0.3 * box["width"] and max(xs) - min(xs) > 0.3 * box["width"], (
                chart_id,
                xs,
                box["width"],
            )
        axes.append(chart.locator("text.tick[text-anchor=middle]").all_inner_texts())
    assert len(axes[0]) >= 2 and axes[0] == axes[1] == axes[2]  # one time axis for the three
    expect(page.locator('#chart-decisions .legend [data-series="Write failed"]')).to_have_attribute(
        "title",
        "metric Error: failed record: the write did not complete (a DynamoDB error, or too little time left); "
        "delivered again",
    )


def test_a_message_delivered_many_times_is_one_row_with_its_count(page):
    """Two malformed bodies delivered 7 and 8 times are two rows (not fifteen) with those counts
    and their latest outcome; a message whose first write failed and second went in is one row,
    accepted, saying what came before."""
    from playwright.sync_api import expect

    for message_id, count in BAD_DELIVERIES.items():
        row = page.locator(f'#messages tr[data-message-id="{message_id}"]')
        expect(row).to_have_count(1)
        expect(row.get_by_test_id("deliveries")).to_have_text(str(count))
        expect(row.locator(".badge")).to_have_text("Malformed")
    slow = page.locator('#messages tr[data-message-id="slow-1"]')
    expect(slow.get_by_test_id("deliveries")).to_have_text("2")
    expect(slow.locator("td.num .detail")).to_have_text("before: 1 write failed")
    expect(slow.locator(".badge")).to_have_text("Accepted")
    conflict = page.locator('#messages tr[data-message-id="m4"]')
    expect(conflict.locator("mark.differs")).to_have_text(
        ['"quantity": 5', '"total_cents": 1350', '"quantity": 4', '"total_cents": 1100']
    )


def test_each_kind_of_error_has_its_own_name_and_meaning(page):
    """Invocation errors (Lambda's Errors metric), failed records (the worker's batchItemFailures)
    and the worker-errors alarm are three names, each explained on the page; the counts are
    each their own: 1 invocation error (the metric), 19 failed records (the ERROR lines: 17
    malformed, 1 conflict, 1 write failed), and the alarm's state and what it watches."""
    from playwright.sync_api import expect

    glossary = page.get_by_test_id("glossary")
    expect(glossary.locator("dt")).to_have_text(["invocation error", "failed record", "alarm"])
    expect(page.get_by_test_id("invocation-errors")).to_have_text("1")
    expect(page.get_by_test_id("failed-records")).to_have_text("19")
    summary = page.get_by_test_id("summary")
    expect(summary.locator("dt", has_text="invocation errors")).to_have_attribute(
        "title", re.compile("Errors metric")
    )
    expect(summary.locator("dt", has_text="failed records")).to_have_attribute(
        "title", re.compile("batchItemFailures")
    )
    alarm = page.locator(f'[data-alarm="{PREFIX}-worker-errors"]')
    expect(alarm.get_by_test_id("alarm-state")).to_have_text("ALARM")
    expect(alarm.get_by_test_id("alarm-description")).to_have_text(ALARMS["worker-errors"][1])
