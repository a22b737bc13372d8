"""The live view in a real headless browser (Debian's chromium driven by Playwright): the page
follows the lab scenario as it runs against the deployed stack, a DLQ message is inspected and
redriven from the page, and a bad or unreachable endpoint is reported while the server stays up.

Screenshots go to tests/artifacts/ (or $VIEW_ARTIFACTS); each test prints the path.
"""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request

import pytest

from local.scenario import run_lab_scenario
from local.session import free_port, wait_for
from ops import observe
from ops.aws import Clients, Endpoint
from ops.view.server import View, start_in_thread
from tests.shared_aws import FAST_TIMEOUTS
from tests.view.browser import layout_problems, resize, screenshot, scrolls_sideways

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(35)]

POLL_MS = 300
PREFIX = "lview"  # this module's stack in the shared embedded AWS
DEADLINE_MS = 90_000  # the whole lab scenario, on a slow machine


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1360, "height": 1100})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture(scope="module")
def stack(shared_aws, tmp_path_factory):
    """The stack deployed with the real CDK CLI into the run's embedded AWS; deleted afterwards."""
    with shared_aws.stack({**FAST_TIMEOUTS, "prefix": PREFIX}, tmp_path_factory.mktemp(PREFIX)) as session:
        yield session


@pytest.fixture(scope="module")
def view(stack):
    """A view of that stack served from this test process, with the emulator's admin keys."""
    running = start_in_thread(
        View(Clients(Endpoint.from_env(stack.aws_env())), prefix=PREFIX, poll_ms=POLL_MS)
    )
    yield running
    running.stop()


def cells(row) -> list[str]:
    return [text.strip() for text in row.locator("td").all_inner_texts()]


def test_page_follows_the_lab_scenario_while_it_runs(stack, view, page):
    """Loaded before the lab's four orders are sent, the page ends up showing: both queues empty,
    the mapping <prefix>-jobs -> <prefix>-worker batch 1 Enabled, dedup-order 4/1100 and
    other-order 1/350, the reference item untouched, and four messages (each delivered once) of
    which the two duplicates are marked (badge and row colour) apart from the two accepted writes.
    At 375 px wide the same page still fits without sideways scrolling."""
    from playwright.sync_api import expect

    page.goto(view.url)
    expect(page.get_by_test_id("status")).to_have_text("live", timeout=DEADLINE_MS)
    expect(page.locator("#orders tr.empty")).to_have_text("no orders stored")

    outcome: dict = {}

    def run() -> None:
        try:
            outcome["checks"] = run_lab_scenario(stack)
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = error

    scenario = threading.Thread(target=run, name="lab-scenario")
    scenario.start()
    try:
        rows = page.locator("#messages tr.message-row")
        expect(rows).to_have_count(4, timeout=DEADLINE_MS)
        expect(page.locator("#orders tr")).to_have_count(2)
        for test_id in ("jobs-visible", "jobs-in-flight", "jobs-delayed", "dlq-visible", "dlq-in-flight"):
            expect(page.get_by_test_id(test_id)).to_have_text("0", timeout=DEADLINE_MS)
        expect(page.get_by_test_id("mapping-source")).to_have_text(f"{PREFIX}-jobs")
        expect(page.get_by_test_id("mapping-function")).to_have_text(f"{PREFIX}-worker")
        expect(page.get_by_test_id("mapping-batch-size")).to_have_text("1")
        expect(page.get_by_test_id("mapping-state")).to_have_text("Enabled")
        expect(page.get_by_test_id("reference-note")).to_have_text("keep unchanged")
        # A running deployment is no failed clean-up: its checks wait, none is red.
        expect(page.locator('[data-testid="cleanup-check"][data-ok="pending"]')).to_have_count(7)
        expect(page.locator("#cleanup .pill.fail")).to_have_count(0)
        expect(page.get_by_test_id("cleanup-state")).to_contain_text("not started")
        # Alarms with their states, and the decisions as a picture: the two accepted writes and
        # the two duplicates arrive as metrics (the worker's EMF lines) and are plotted.
        expect(page.locator("#alarms li")).to_have_count(10, timeout=DEADLINE_MS)
        expect(
            page.locator('#alarms li[data-alarm="lview-conflicting-orders"] [data-testid="alarm-state"]')
        ).to_have_text(re.compile("^(OK|INSUFFICIENT_DATA)$"))
        for kind in ("Accepted", "Duplicate"):
            expect(page.locator(f'#chart-decisions .legend [data-series="{kind}"]')).to_have_text(
                f"{kind}: 2", timeout=DEADLINE_MS
            )
        expect(page.locator('#chart-decisions polyline[data-series="Accepted"]')).to_have_count(1)
        expect(page.locator('#chart-queues polyline[data-series="jobs queue"]')).to_have_count(
            1, timeout=DEADLINE_MS
        )
    finally:
        scenario.join(timeout=DEADLINE_MS / 1000)
    path = screenshot(page, "live-view-lab.png")

    assert "error" not in outcome, outcome.get("error")
    assert [c.name for c in outcome["checks"] if not c.ok] == []
    assert cells(page.locator('#orders tr[data-order-id="dedup-order"]'))[:3] == ["dedup-order", "4", "1100"]
    assert cells(page.locator('#orders tr[data-order-id="other-order"]'))[:3] == ["other-order", "1", "350"]
    # Newest first. The first order is processed before the other three are sent; those three
    # run concurrently, so their order is not fixed.
    shown = [(row.get_attribute("data-order-id"), row.get_attribute("data-outcome")) for row in rows.all()]
    assert shown[-1] == ("dedup-order", "accepted")
    assert sorted(shown[:-1]) == [
        ("dedup-order", "duplicate"),
        ("dedup-order", "duplicate"),
        ("other-order", "accepted"),
    ]
    expect(rows.get_by_test_id("deliveries")).to_have_text(["1"] * 4)
    duplicates, accepted = page.locator("#messages tr.duplicate"), page.locator("#messages tr.accepted")
    expect(duplicates.locator(".badge")).to_have_text(["Duplicate"] * 2)
    expect(accepted.locator(".badge")).to_have_text(["Accepted"] * 2)
    # expect() retries: the page redraws its rows on every poll, and a row read while it is
    # replaced has no layout (its text loses the line breaks).
    stored = '{"id": "dedup-order", "quantity": 4, "total_cents": 1100}'
    expect(duplicates.first.locator('td[data-label="requested"]')).to_have_text(stored)
    expect(duplicates.first.locator('td[data-label="stored"] code')).to_have_text(stored)
    expect(duplicates.first.locator('td[data-label="stored"] .detail')).to_have_text(
        "already stored, unchanged"
    )
    expect(page.get_by_test_id("records")).to_have_text("4")
    expect(page.get_by_test_id("failed-records")).to_have_text("0")
    expect(page.get_by_test_id("invocation-errors")).to_have_text("0")

    def background(row) -> str:
        color: str = row.evaluate("node => getComputedStyle(node).backgroundColor")
        return color

    assert background(duplicates.first) != background(accepted.first)
    assert path.stat().st_size > 10_000
    resize(page, 375)
    assert not scrolls_sideways(page)
    assert layout_problems(page) == []
    screenshot(page, "live-view-lab-375.png")


def test_the_dlq_panel_classifies_redrives_the_safe_ones_and_discards_with_a_reason(stack, view, page):
    """Three dead letters: a pending order, a conflicting copy of a stored order and a malformed
    body. The panel shows the classes with counts, the conflict's requested and stored details
    side by side; "Redrive safe messages" sends only the pending one back (the worker stores it);
    the conflict is discarded with a reason, leaving an audit record; the malformed body stays."""
    from playwright.sync_api import expect

    from ops import dlq
    from ops.aws import Clients as OpsClients

    env = stack.user_env()
    sqs = stack.client("sqs")
    stack.client("dynamodb").put_item(
        TableName=env["ORDERS_TABLE"],
        Item={"id": {"S": "panel-stored"}, "quantity": {"N": "2"}, "total_cents": {"N": "600"}},
    )
    conflict_id = sqs.send_message(QueueUrl=env["DLQ_URL"], MessageBody='{"id":"panel-stored","quantity":5}')[
        "MessageId"
    ]
    sqs.send_message(QueueUrl=env["DLQ_URL"], MessageBody='{"id":"panel-pending","quantity":2}')
    sqs.send_message(QueueUrl=env["DLQ_URL"], MessageBody='{"id":"panel-bad"}')
    # A fourth, held by another operator's reader: the panel says so instead of leaving it out silently.
    # Held for an hour, past any run of this test: with 120 s, a slow run's later steps met it
    # visible again (the redrive moved it, the counts changed).
    sqs.send_message(QueueUrl=env["DLQ_URL"], MessageBody='{"id":"panel-held","quantity":1}')

    def hold_the_fourth() -> list | None:
        received = sqs.receive_message(
            QueueUrl=env["DLQ_URL"], MaxNumberOfMessages=10, VisibilityTimeout=3600
        ).get("Messages", [])
        for message in received:
            if "panel-held" not in message["Body"]:
                sqs.change_message_visibility(
                    QueueUrl=env["DLQ_URL"], ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
                )
        return [m for m in received if "panel-held" in m["Body"]] or None

    held = wait_for(hold_the_fourth, timeout=DEADLINE_MS / 1000, what="the fourth dead letter, held")
    assert held is not None  # wait_for returns only a truthy answer

    page.goto(view.url)
    expect(page.get_by_test_id("dlq-visible")).to_have_text("3", timeout=DEADLINE_MS)
    page.get_by_test_id("dlq-inspect").click()
    counts = page.get_by_test_id("dlq-counts")
    expect(counts).to_have_text(
        re.compile("1 pending.*0 stored.*1 conflict.*1 malformed"), timeout=DEADLINE_MS
    )
    expect(page.get_by_test_id("dlq-note")).to_have_text(
        "1 more message(s) are held by another reader (in flight): not shown"
    )
    conflict = page.locator(f'[data-message-id="{conflict_id}"]')
    expect(conflict.get_by_test_id("dlq-class")).to_have_text("conflict")
    expect(conflict.locator("tr.differs th")).to_have_text(["quantity", "total_cents"])
    expect(conflict.locator("tr.differs td code")).to_have_text(["5", "2", "1350", "600"])
    screenshot(page, "live-view-dlq.png")

    page.get_by_test_id("redrive-safe").click()
    expect(page.get_by_test_id("dlq-result")).to_have_text(
        re.compile(rf"^Moved 1 message to {PREFIX}-jobs"), timeout=DEADLINE_MS
    )
    expect(page.locator('#orders tr[data-order-id="panel-pending"] td')).to_have_text(
        ["panel-pending", "2", "600", ""], timeout=DEADLINE_MS
    )
    expect(counts).to_have_text(re.compile("0 pending.*1 conflict.*1 malformed"), timeout=DEADLINE_MS)

    conflict.get_by_test_id("discard-reason").fill("customer confirmed the stored quantity")
    conflict.get_by_test_id("discard").click()
    expect(page.get_by_test_id("dlq-result")).to_have_text(
        re.compile(rf"^Discarded message {conflict_id}"), timeout=DEADLINE_MS
    )
    expect(page.get_by_test_id("dlq-message")).to_have_count(1, timeout=DEADLINE_MS)
    expect(page.get_by_test_id("dlq-class")).to_have_text("malformed")
    clients = OpsClients(Endpoint.from_env(stack.aws_env()))
    from ops.snapshot import resolve_target

    (record,) = [
        r
        for r in dlq.audit(clients, resolve_target(clients, PREFIX).queues())
        if r["message_id"] == conflict_id
    ]
    assert record["reason"] == "customer confirmed the stored quantity"
    assert record["body"] == '{"id":"panel-stored","quantity":5}'
    sqs.delete_message(QueueUrl=env["DLQ_URL"], ReceiptHandle=held[0]["ReceiptHandle"])


EVIL_PAGE = """<!doctype html><html><body>
<img src="{view}api/dlq">
<form id="f" method="POST" action="{view}api/redrive" enctype="text/plain" target="sink">
  <input name='{{"message_id": "{message_id}", "x": "' value='"}}'>
</form>
<iframe name="sink"></iframe>
<script>
  const base = "{view}";
  const calls = [
    fetch(base + "api/dlq", {{method: "POST", mode: "no-cors", body: "{{}}", headers: {{"Content-Type": "text/plain"}}}}),
    fetch(base + "api/redrive", {{method: "POST", mode: "no-cors",
      body: JSON.stringify({{message_id: "{message_id}"}}), headers: {{"Content-Type": "text/plain"}}}}),
    fetch(base + "api/redrive", {{method: "POST", body: JSON.stringify({{message_id: "{message_id}"}}),
      headers: {{"Content-Type": "application/json"}}}}),
    fetch(base + "api/snapshot").then((r) => r.text()),
  ];
  document.getElementById("f").submit();
  Promise.allSettled(calls).then((results) => {{
    document.title = "done " + results.map((r) => r.status + ":" + (r.value && r.value.type || r.value || "")).join(",");
  }});
</script></body></html>"""


def test_a_page_of_another_site_can_neither_read_nor_redrive(stack, view, browser):
    """A page served from another origin in the same browser tries everything a page can: an
    image and a form post (no CORS needed), no-cors and CORS fetches to the DLQ, the redrive and
    the snapshot. The DLQ message stays where it is with its receive count unchanged, and the
    page's script reads nothing."""
    import http.server

    sqs, dlq_url = stack.client("sqs"), stack.user_env()["DLQ_URL"]
    message_id = sqs.send_message(QueueUrl=dlq_url, MessageBody='{"id":"evil-target","quantity":1}')[
        "MessageId"
    ]
    base = view.server.base_url
    page_html = EVIL_PAGE.format(view=base, message_id=message_id).encode()

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page_html)))
            self.end_headers()
            self.wfile.write(page_html)

        def log_message(self, *args):
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
        page.wait_for_function("document.title.startsWith('done')", timeout=DEADLINE_MS)
        title = page.title()
    finally:
        context.close()
        evil.shutdown()
    # no-cors fetches resolve opaque (nothing readable); CORS fetches are rejected.
    assert title == "done fulfilled:opaque,fulfilled:opaque,rejected:,rejected:", title
    received = sqs.receive_message(
        QueueUrl=dlq_url,
        MaxNumberOfMessages=10,
        VisibilityTimeout=0,
        AttributeNames=["ApproximateReceiveCount"],
    )["Messages"]
    target = [m for m in received if m["MessageId"] == message_id]
    assert len(target) == 1 and target[0]["Attributes"]["ApproximateReceiveCount"] == "1"
    sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=target[0]["ReceiptHandle"])


def lab_decisions_shown(page) -> None:
    """The lab's four decisions are rows marked as history: dedup-order accepted (its write
    `attribute_not_exists(id)` -> Accepted, previous none), two duplicates of it, other-order
    accepted. (Earlier tests of this module add messages of their own.)"""
    from playwright.sync_api import expect

    rows = page.locator("#messages tr.message-row.history")
    expect(rows.first).to_be_visible(timeout=DEADLINE_MS)
    shown = [(row.get_attribute("data-order-id"), row.get_attribute("data-outcome")) for row in rows.all()]
    assert shown.count(("dedup-order", "duplicate")) >= 2, shown
    assert ("dedup-order", "accepted") in shown and ("other-order", "accepted") in shown, shown
    first = page.locator('#messages tr.history[data-order-id="dedup-order"][data-outcome="accepted"]')
    expect(first.get_by_test_id("write-condition")).to_have_text("attribute_not_exists(id)")
    expect(first.get_by_test_id("write-outcome")).to_have_text("→ Accepted")
    expect(first.get_by_test_id("write-previous")).to_have_text("previous: none")
    duplicate = page.locator(
        '#messages tr.history[data-order-id="dedup-order"][data-outcome="duplicate"]'
    ).first
    expect(duplicate.get_by_test_id("write-outcome")).to_have_text("→ ConditionalCheckFailed")
    expect(duplicate.get_by_test_id("write-previous")).to_have_text(
        'previous: {"id": "dedup-order", "quantity": 4, "total_cents": 1100}'
    )


def deleted_and_checked(page) -> None:
    """The emptied resources greyed as deleted with AWS's answer, no read shown as failed, and
    every clean-up check passing."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("history-badge")).to_be_visible(timeout=DEADLINE_MS)
    expect(page.get_by_test_id("status")).to_have_text("live")
    expect(page.locator('[data-error-for="jobs"]')).to_have_text(
        re.compile(r"^Deleted: GetQueueAttributes: AWS\.SimpleQueueService\.NonExistentQueue")
    )
    expect(page.get_by_test_id("jobs-card")).to_have_class(re.compile(r"\babsent\b"))
    expect(page.locator('[data-error-for="log"]')).to_have_text(re.compile(r"^Deleted: FilterLogEvents: "))
    expect(page.locator('[data-error-for][data-state="unreadable"]')).to_have_count(0)
    expect(page.locator("#mappings")).to_have_text(f"no event source mapping for {PREFIX}-worker")
    expect(page.locator("#orders tr.empty")).to_have_text("no orders stored")
    expect(page.get_by_test_id("reference-note")).to_have_text("keep unchanged")
    checks = page.get_by_test_id("cleanup-check")
    expect(checks).to_have_count(7)
    expect(page.locator('[data-testid="cleanup-check"][data-ok="true"]')).to_have_count(7)
    expect(page.get_by_test_id("cleanup-state")).to_have_text("")


def test_after_the_labs_clean_up_the_decisions_stay_as_history_and_the_gone_are_grey(stack, view, page):
    """The lab's own clean-up by hand (its mapping, jobs queue, both orders and the worker's log
    group deleted) while the page is open: the lab's four decisions are still listed, marked as
    history, each write with its condition, outcome and previous item; the jobs queue and the log
    are greyed as deleted with AWS's answer, nothing is red, and the clean-up panel passes every
    check. A new view (a restart of `ops view`) shows the same from the kept history."""
    from playwright.sync_api import expect

    env = stack.user_env()
    page.goto(view.url)
    expect(page.locator("#messages tr.message-row").first).to_be_visible(timeout=DEADLINE_MS)
    dynamodb = stack.client("dynamodb")
    for item in observe.scan_items(dynamodb, env["ORDERS_TABLE"]):  # other tests' orders
        if item["id"] not in ("dedup-order", "other-order"):
            dynamodb.delete_item(TableName=env["ORDERS_TABLE"], Key={"id": {"S": item["id"]}})
    lambda_api = stack.client("lambda")
    for mapping in lambda_api.list_event_source_mappings(FunctionName=env["FUNCTION_NAME"])[
        "EventSourceMappings"
    ]:
        lambda_api.delete_event_source_mapping(UUID=mapping["UUID"])
    stack.client("sqs").delete_queue(QueueUrl=env["QUEUE_URL"])
    for order_id in ("dedup-order", "other-order"):
        dynamodb.delete_item(TableName=env["ORDERS_TABLE"], Key={"id": {"S": order_id}})
    stack.client("logs").delete_log_group(logGroupName=env["LOG_GROUP"])

    deleted_and_checked(page)
    lab_decisions_shown(page)
    screenshot(page, "live-view-after-clean-up.png")

    restarted = start_in_thread(
        View(Clients(Endpoint.from_env(stack.aws_env())), prefix=PREFIX, poll_ms=POLL_MS)
    )
    try:
        page.goto(restarted.url)
        deleted_and_checked(page)
        lab_decisions_shown(page)
    finally:
        restarted.stop()


@pytest.mark.parametrize("kind", ["unreachable", "not-aws"])
def test_a_bad_endpoint_is_said_plainly_and_the_server_keeps_retrying(page, kind):
    """Nothing listening, or something that is not AWS: the page names the problem, keeps
    polling (the attempt count goes up), and the server still answers."""
    from playwright.sync_api import expect

    other = start_in_thread(View(Clients(Endpoint("http://127.0.0.1:1", "us-east-1", "a", "b"))))
    endpoint = (
        f"http://127.0.0.1:{free_port()}" if kind == "unreachable" else other.server.base_url.rstrip("/")
    )
    running = start_in_thread(View(Clients(Endpoint(endpoint, "us-east-1", "a", "b")), poll_ms=POLL_MS))
    try:
        page.goto(running.url)
        banner = page.get_by_test_id("error")
        expected = (
            f"cannot reach AWS at {endpoint}/: connection failed"
            if kind == "unreachable"
            else f"the endpoint at {endpoint} answered, but not like AWS: check AWS_ENDPOINT_URL"
        )
        expect(banner).to_contain_text(expected, timeout=DEADLINE_MS)
        expect(banner).to_contain_text(re.compile(r"attempt [3-9]"), timeout=DEADLINE_MS)
        expect(page.get_by_test_id("status")).to_have_text("cannot read")
        expect(page.get_by_test_id("endpoint")).to_have_text(endpoint)
        screenshot(page, f"live-view-{kind}.png")
        assert running.thread.is_alive()
        with urllib.request.urlopen(running.server.base_url + "healthz", timeout=10) as response:
            assert response.read() == b"ok\n"
    finally:
        running.stop()
        other.stop()
