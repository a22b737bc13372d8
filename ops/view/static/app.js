// The live view: poll /api/snapshot, render it, keep polling whatever happens.
// Everything shown comes from queues, tables and logs, so it is put in the page as text, never HTML.
"use strict";

const DEFAULT_POLL_MS = 2000;
// The per-run token the server put in the page; every API call carries it in a header (which
// also means a page of another site could not send these calls without a CORS preflight).
const TOKEN = document.querySelector('meta[name="view-token"]').content;

function api(path, body) {
  const headers = { "X-View-Token": TOKEN };
  if (body === undefined) return fetch(path, { cache: "no-store", headers });
  headers["Content-Type"] = "application/json";
  return fetch(path, { method: "POST", cache: "no-store", headers, body: JSON.stringify(body) });
}
let pollMs = DEFAULT_POLL_MS;
let failures = 0;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

const $ = (selector) => document.querySelector(selector);
const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);

// JSON with sorted keys and a space after separators, like the worker's log lines.
function json(value) {
  if (Array.isArray(value)) return `[${value.map(json).join(", ")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}: ${json(value[key])}`).join(", ")}}`;
  }
  return JSON.stringify(value);
}

function compact(value) {
  return value === null || value === undefined ? "–" : json(value);
}

function clockTime(ms) {
  const date = new Date(ms);
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

function every() {
  const seconds = pollMs / 1000;
  return `Retrying every ${seconds >= 1 ? Math.round(seconds) : seconds.toFixed(1)} s`;
}

function setText(selector, text) {
  const node = typeof selector === "string" ? $(selector) : selector;
  if (node) node.textContent = text;
}

// Per section: red when the read failed (which proves nothing), grey when AWS answered that the
// resource does not exist (the lab's clean-up leaves several so), hidden when it was read.
function showSectionStates(snapshot) {
  const resources = snapshot.resources || {};
  for (const node of document.querySelectorAll("[data-error-for]")) {
    const name = node.dataset.errorFor;
    const message = snapshot.errors[name];
    const absent = !message && resources[name] && resources[name].state === "absent";
    node.hidden = !message && !absent;
    node.className = message ? "section-error" : "section-state";
    node.dataset.state = message ? "unreadable" : absent ? "absent" : "present";
    node.textContent = message ? `Cannot read: ${message}` : absent ? `Deleted: ${resources[name].detail}` : "";
    const card = node.closest(".card");
    if (card) card.classList.toggle("absent", Boolean(absent));
  }
}

function setStatus(kind, text) {
  const status = $("#status");
  status.className = `pill ${kind}`;
  status.textContent = text;
}

function showBanner(message, hint) {
  const banner = $("#banner");
  banner.replaceChildren(el("span", { text: message }), el("span", { class: "hint", text: hint }));
  banner.hidden = false;
  $("#content").classList.add("stale");
}

function hideBanner() {
  $("#banner").hidden = true;
  $("#content").classList.remove("stale");
}

function renderCounters(prefix, counters) {
  for (const key of ["visible", "in_flight", "delayed"]) {
    const node = byTestId(`${prefix}-${key.replace("_", "-")}`);
    const value = counters ? counters[key] : null;
    node.textContent = value === null ? "–" : String(value);
    node.classList.toggle("nonzero", Boolean(value));
  }
}

function renderMappings(mappings, target) {
  const box = $("#mappings");
  if (mappings === null) return box.replaceChildren();
  if (mappings.length === 0) {
    return box.replaceChildren(el("p", { class: "hint", text: `no event source mapping for ${target.function_name}` }));
  }
  box.replaceChildren(...mappings.map((m) => el("dl", { class: "mapping", "data-testid": "mapping" },
    el("dt", { text: "source" }), el("dd", { "data-testid": "mapping-source", text: m.source }),
    el("dt", { text: "function" }), el("dd", { "data-testid": "mapping-function", text: m.function }),
    el("dt", { text: "batch size" }), el("dd", { "data-testid": "mapping-batch-size", text: String(m.batch_size) }),
    el("dt", { text: "state" }), el("dd", { class: `state ${m.state}`, "data-testid": "mapping-state", text: m.state }),
    el("dt", { text: "responses" }), el("dd", { text: (m.response_types || []).join(", ") || "–" }),
  )));
}

// The words the page uses, one meaning each (the glossary panel says the same at more length).
const WORDS = {
  invocations: "runs of the worker function (START lines in its log)",
  invocationErrors: "runs of the worker function that failed as a whole (Lambda's Errors metric): an exception " +
    "outside a record, a timeout or a crash; the whole batch goes back to the queue. The worker-errors alarm watches this.",
  records: "deliveries the worker handled; a message delivered three times is three records",
  failedRecords: "records the worker reported in batchItemFailures (an ERROR line each): SQS delivers them again, " +
    "and after the queue's maxReceiveCount moves them to the dead-letter queue",
  messages: "distinct SQS messages among those records",
};

// What one delivery came to: the worker's contract (order_contract.Delivery), key and word;
// tests/unit/test_contract.py holds this table and the rows below to it. Label, what it means.
const OUTCOMES = {
  accepted: ["Accepted", "written: the order was not stored before"],
  duplicate: ["Duplicate", "the identical order is already stored: acknowledged, nothing written"],
  conflict: ["Conflict", "failed record: the id is stored with other details; never acknowledged, it ends in the dead-letter queue"],
  malformed: ["Malformed", "failed record: the body is not a valid job; it ends in the dead-letter queue"],
  write_failed: ["Write failed", "failed record: the write did not complete (a DynamoDB error, or too little time left); delivered again"],
  unfinished: ["Unfinished", "an older worker's JOB line and nothing after it: the invocation ended (a timeout or a crash) or is still running"],
};

function cell(label, attrs = {}, ...children) {
  return el("td", { "data-label": label, ...attrs }, ...children);
}

function renderSummary(snapshot) {
  const s = snapshot.summary;
  const invocationErrors = s && s.invocation_errors !== null ? s.invocation_errors : "–";
  // [label, value, meaning, indent level, data-testid, shown as bad]
  const rows = s ? [
    ["invocations", snapshot.executions ?? "–", WORDS.invocations, 0],
    ["invocation errors", invocationErrors, WORDS.invocationErrors, 0, "invocation-errors", invocationErrors > 0],
    ["records", s.records, WORDS.records, 0, "records"],
    ["accepted", s.accepted, OUTCOMES.accepted[1], 1],
    ["duplicate", s.duplicate, OUTCOMES.duplicate[1], 1],
    ["failed records", s.failed_records, WORDS.failedRecords, 1, "failed-records", s.failed_records > 0],
    ["conflict", s.conflict, OUTCOMES.conflict[1], 2],
    ["malformed", s.malformed, OUTCOMES.malformed[1], 2],
    ["write failed", s.write_failed, OUTCOMES.write_failed[1], 2],
    ...(s.unfinished ? [["unfinished", s.unfinished, OUTCOMES.unfinished[1], 1]] : []),
    ["messages", s.messages, WORDS.messages, 0, "messages"],
  ] : [];
  $("#summary").replaceChildren(...rows.flatMap(([label, value, meaning, level, testId, bad]) => [
    el("dt", { title: meaning, class: level ? `level${level}` : null, text: label }),
    el("dd", { "data-testid": testId, class: bad ? "bad" : null, text: String(value) }),
  ]));
  const from = snapshot.log_source === "history" ? "from the kept history (the log group is deleted; invocations are not kept)"
    : `log lines since ${clockTime(snapshot.log_since_ms)}`;
  setText("#log-since", s ? `${from}; each word has a tooltip, ` +
    "and the glossary below tells the three kinds of error apart" : "");
}

function emptyRow(columns, text) {
  return el("tr", { class: "empty" }, el("td", { colspan: String(columns), text }));
}

function otherAttributes(item, known) {
  const rest = Object.fromEntries(Object.entries(item).filter(([key]) => !known.includes(key)));
  return Object.keys(rest).length ? el("code", { text: compact(rest) }) : "";
}

function renderOrders(orders, truncated) {
  const body = $("#orders");
  if (orders === null) return body.replaceChildren();
  if (orders.length === 0) return body.replaceChildren(emptyRow(4, "no orders stored"));
  const rows = orders.map((item) => el("tr", { "data-order-id": String(item.id) },
    cell("id", { class: "id" }, el("code", { text: String(item.id) })),
    cell("quantity", { class: "num", text: String(item.quantity ?? "–") }),
    cell("total_cents", { class: "num", text: String(item.total_cents ?? "–") }),
    cell("other", {}, otherAttributes(item, ["id", "quantity", "total_cents"])),
  ));
  if (truncated) rows.push(emptyRow(4, `showing the first ${orders.length} items scanned`));
  body.replaceChildren(...rows);
}

function renderReference(items) {
  const body = $("#reference");
  if (items === null) return body.replaceChildren();
  if (items.length === 0) return body.replaceChildren(emptyRow(3, "the reference table is empty"));
  body.replaceChildren(...items.map((item) => el("tr", { "data-reference-id": String(item.id) },
    cell("id", {}, el("code", { text: String(item.id) })),
    cell("note", { "data-testid": "reference-note", text: String(item.note ?? "–") }),
    cell("other", {}, otherAttributes(item, ["id", "note"])),
  )));
}

// An item as sorted-key JSON; the fields that differ from `other` are marked.
function itemCode(item, other) {
  if (item === null || item === undefined) return "";  // an empty cell: a dash in a table, no line when stacked
  if (typeof item !== "object") return el("code", { text: compact(item) });
  const keys = Object.keys(item).sort();
  const parts = keys.flatMap((key, index) => {
    const text = `${JSON.stringify(key)}: ${json(item[key])}`;
    const differs = other && typeof other === "object" && json(other[key]) !== json(item[key]);
    return [differs ? el("mark", { class: "differs", text }) : text, index < keys.length - 1 ? ", " : ""];
  });
  return el("code", {}, "{", ...parts, "}");
}

function renderOutcomeLegend() {
  $("#outcome-legend").replaceChildren(...Object.entries(OUTCOMES).filter(([kind]) => kind !== "unfinished").map(
    ([kind, [label, meaning]]) => el("span", { class: `badge ${kind}`, title: meaning, text: label })));
}

function earlier(m) {
  const others = Object.entries(m.outcomes).map(([kind, count]) =>
    [kind, kind === m.outcome ? count - 1 : count]).filter(([, count]) => count > 0);
  return others.map(([kind, count]) => `${count} ${OUTCOMES[kind] ? OUTCOMES[kind][0].toLowerCase() : kind}`).join(", ");
}

// The conditional write as the lab's View shows it: the condition and its outcome, then the item
// stored before it ("none" for a first write).
function writeCell(m) {
  if (!m.condition) return cell("write", {});
  return cell("write", {},
    el("code", { "data-testid": "write-condition", text: m.condition }),
    el("span", { class: "detail", "data-testid": "write-outcome", text: `→ ${m.write_outcome}` }),
    el("span", { class: "detail", "data-testid": "write-previous", text: "previous: " }, m.previous === null ? "none" : itemCode(m.previous)));
}

function renderMessages(messages, total, history) {
  const body = $("#messages");
  if (messages === null) return body.replaceChildren();
  if (messages.length === 0) return body.replaceChildren(emptyRow(7, "no messages in the worker's log yet"));
  const rows = [...messages].reverse().map((m) => {
    const [label, meaning] = OUTCOMES[m.outcome] || [m.outcome, ""];
    const conflict = m.outcome === "conflict";
    const outcome = cell("outcome", {}, el("span", { class: `badge ${m.outcome}`, title: meaning, text: label }));
    if (m.error && !(conflict && m.stored)) outcome.append(el("span", { class: "detail", text: `${m.error}: ${m.message}` }));
    if (conflict) outcome.append(el("span", { class: "detail", text: "stored with other details" }));
    const before = earlier(m);
    const deliveries = cell("deliveries", { class: "num",
      title: `${m.deliveries} deliver${m.deliveries === 1 ? "y" : "ies"} since ${clockTime(m.first_ms)}` +
        (m.receive_count ? `; SQS receive count ${m.receive_count}` : "") },
    el("span", { "data-testid": "deliveries", text: String(m.deliveries) }));
    if (before) deliveries.append(el("span", { class: "detail", text: `before: ${before}` }));
    const stored = cell("stored", {}, itemCode(m.stored, conflict ? m.requested : null));
    if (m.outcome === "duplicate") stored.append(el("span", { class: "detail", text: "already stored, unchanged" }));
    if (m.outcome === "accepted") stored.append(el("span", { class: "detail", text: "written" }));
    return el("tr", { class: `message-row ${m.outcome}${history ? " history" : ""}`, "data-outcome": m.outcome,
      "data-message-id": m.message_id || "", "data-order-id": m.id === null ? "" : String(m.id) },
      cell("last seen", { title: m.time, class: "time", text: clockTime(m.time_ms) }),
      cell("order id", { class: "id" }, el("code", { text: m.id === null ? "–" : String(m.id) }),
        el("span", { class: "detail mono", title: "SQS message id", text: m.message_id || "message id not logged" })),
      deliveries, outcome,
      cell("requested", {}, itemCode(m.requested, conflict ? m.stored : null)),
      writeCell(m),
      stored,
    );
  });
  if (total > messages.length) rows.push(emptyRow(7, `${total - messages.length} older messages not shown`));
  body.replaceChildren(...rows);
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

const MINUTE = 60 * 1000;

// The time axis every chart shares: from the oldest datapoint (half a period before it) to
// the snapshot's time, at least two minutes (a young stack's first point then sits mid-axis)
// and at most the hour the snapshot holds.
function chartSpan(snapshot) {
  const end = snapshot.taken_at_ms;
  const times = Object.values(snapshot.series).flatMap((points) => points.map(([ms]) => ms));
  const oldest = times.length ? Math.min(...times) - MINUTE / 2 : end;
  return [Math.max(end - 60 * MINUTE, Math.min(oldest, end - 2 * MINUTE)), end];
}

function timeTicks(start, end, room) {
  const step = [1, 2, 5, 10, 15, 30, 60].map((m) => m * MINUTE).find((s) => (end - start) / s <= room) || 60 * MINUTE;
  const ticks = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) ticks.push(t);
  return ticks;
}

// A line chart of [{label, color, title, points: [[ms, value], ...]}] over [start, end], drawn at
// the box's own width so text keeps its size on any screen.
function lineChart(box, lines, start, end, height) {
  const width = Math.max(200, Math.floor(box.clientWidth || 600));
  const left = 34, right = 12, top = 8, bottom = 20;
  const values = lines.flatMap((line) => line.points.map(([, value]) => value));
  const max = Math.max(1, Math.ceil(Math.max(0, ...values)));
  const x = (ms) => left + ((ms - start) / (end - start)) * (width - left - right);
  const y = (value) => top + (1 - value / max) * (height - top - bottom);
  const chart = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img",
    "aria-label": lines.map((line) => line.label).join(", ") });
  for (const value of new Set([0, max > 1 && max % 2 === 0 ? max / 2 : null, max].filter((v) => v !== null))) {
    chart.append(svg("line", { x1: left, y1: y(value), x2: width - right, y2: y(value), class: value ? "grid" : "axis" }),
      svg("text", { x: left - 5, y: y(value) + 3, class: "tick", "text-anchor": "end" }, String(value)));
  }
  for (const t of timeTicks(start, end, (width - left - right) / 64)) {
    chart.append(svg("line", { x1: x(t), y1: y(0), x2: x(t), y2: y(0) + 4, class: "axis" }),
      svg("text", { x: x(t), y: height - 5, class: "tick", "text-anchor": "middle" }, clockTime(t).slice(0, 5)));
  }
  for (const line of lines) {
    const points = line.points.filter(([ms]) => ms >= start);
    if (!points.length) continue;
    chart.append(svg("polyline", { points: points.map(([ms, v]) => `${x(ms).toFixed(1)},${y(v).toFixed(1)}`).join(" "),
      fill: "none", stroke: line.color, "stroke-width": 2, "data-series": line.label }));
    for (const [ms, value] of points) {
      chart.append(svg("circle", { cx: x(ms).toFixed(1), cy: y(value).toFixed(1), r: 2.5, fill: line.color },
        svg("title", {}, `${line.label} ${value} at ${clockTime(ms).slice(0, 5)}`)));
    }
  }
  if (!values.length) {
    chart.append(svg("text", { x: (left + width - right) / 2, y: (top + height - bottom) / 2, class: "nodata",
      "text-anchor": "middle" }, "no datapoints yet"));
  }
  const legend = el("div", { class: "legend" }, ...lines.map((line) => {
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = line.color;  // CSSOM, which the page's CSP allows (a style attribute it does not)
    // A count per minute is summed over the axis; a depth is a level, shown as its latest value.
    const shown = line.points.filter(([ms]) => ms >= start);
    const figure = line.level ? (shown.length ? `${shown[shown.length - 1][1]} latest` : "–")
      : shown.reduce((sum, [, value]) => sum + value, 0);
    return el("span", { class: "key", "data-series": line.label, title: line.title || "" }, swatch, `${line.label}: ${figure}`);
  }));
  box.replaceChildren(chart, legend);
}

// The five decision metrics the worker emits; "Error" is every failed record that is neither a
// conflict nor malformed, which the page calls "Write failed".
const DECISION_SERIES = [
  ["Accepted", "Accepted", "#1a7f37", "accepted"], ["Duplicate", "Duplicate", "#9a6700", "duplicate"],
  ["Conflict", "Conflict", "#b42318", "conflict"], ["Malformed", "Malformed", "#8250df", "malformed"],
  ["Error", "Write failed", "#bc4c00", "write_failed"],
];
let lastSnapshot = null;

function renderCharts(snapshot) {
  const series = snapshot.series;
  if (!series) return;
  const [start, end] = chartSpan(snapshot);
  const minutes = Math.round((end - start) / MINUTE);
  setText("#charts-title", `Last ${minutes} minute${minutes === 1 ? "" : "s"}`);
  lineChart($("#chart-decisions"), DECISION_SERIES.map(([metric, label, color, outcome]) => ({
    label, color, title: `metric ${metric}: ${OUTCOMES[outcome][1]}`, points: series[`decision:${metric}`] || [] })),
  start, end, 150);
  lineChart($("#chart-invocation-errors"), [{ label: "invocation errors", color: "#cf222e",
    title: WORDS.invocationErrors, points: series["function:errors"] || [] }], start, end, 90);
  lineChart($("#chart-queues"), [
    { label: "jobs queue", color: "#0969da", level: true, points: series["queue:jobs"] || [] },
    { label: "dead-letter queue", color: "#b42318", level: true, points: series["queue:dlq"] || [] },
  ], start, end, 130);
}

function renderAlarms(alarms) {
  const list = $("#alarms");
  if (alarms === null) return list.replaceChildren();
  if (alarms.length === 0) return list.replaceChildren(el("li", { class: "hint", text: "no alarms found" }));
  list.replaceChildren(...alarms.map((alarm) => el("li", { class: `alarm ${alarm.state}`, "data-alarm": alarm.name },
    el("div", { class: "alarm-head" },
      el("span", { class: `pill state ${alarm.state}`, "data-testid": "alarm-state", text: alarm.state }),
      el("code", { class: "alarm-name", "data-testid": "alarm-name", text: alarm.name }),
      el("span", { class: "alarm-means", "data-testid": "alarm-description", text: alarm.description || "" })),
    el("p", { class: "alarm-reason hint", "data-testid": "alarm-reason",
      text: `${alarm.updated_ms ? `since ${clockTime(alarm.updated_ms)}: ` : ""}${alarm.reason}` }))));
}

// The deployment's options as `ops status` prints them (ops/snapshot.py options_line).
function optionsText(options) {
  const word = (value) => {
    if (typeof value === "boolean") return value ? "true" : "false";
    if (Array.isArray(value)) value = value.join(",");
    return value === null || value === undefined || value === "" ? "none" : String(value);
  };
  return Object.entries(options.values).map(([key, value]) => `${key}=${word(value)}`).join(" ");
}

function render(snapshot) {
  setText("#endpoint", snapshot.endpoint || "–");
  setText("#region", snapshot.region || "–");
  if (snapshot.error) {
    setStatus("error", "cannot read");
    setText("#names-from", snapshot.target ? snapshot.target.names_from : "–");
    showBanner(snapshot.error, `${every()} (attempt ${failures}).`);
    return;
  }
  hideBanner();
  lastSnapshot = snapshot;
  const target = snapshot.target;
  const partial = Object.keys(snapshot.errors).length > 0;
  setStatus(partial ? "error" : "live", partial ? "live · some reads failed" : "live");
  setText("#names-from", target.names_from);
  setText("#options", snapshot.options ? optionsText(snapshot.options) : "–");
  $("#options").title = snapshot.options ? `from ${snapshot.options.from}` : "";
  setText("#updated", clockTime(snapshot.taken_at_ms));
  setText("#jobs-name", target.jobs_queue);
  setText("#dlq-name", target.dead_letter_queue);
  setText("#function-name", target.function_name);
  setText("#orders-name", target.orders_table);
  setText("#reference-name", target.reference_table);
  const history = snapshot.log_source === "history";
  $("#history-badge").hidden = !history;
  setText("#messages-hint", history
    ? `the worker's log group is deleted: the messages its log named when last read, kept in ${snapshot.history.path}, newest first`
    : `one row per SQS message in the worker's log since ${clockTime(snapshot.log_since_ms)}, newest first`);
  renderCounters("jobs", snapshot.queues.jobs);
  renderCounters("dlq", snapshot.queues.dlq);
  renderMappings(snapshot.mappings, target);
  renderSummary(snapshot);
  renderOrders(snapshot.orders, snapshot.orders_truncated);
  renderReference(snapshot.reference);
  renderMessages(snapshot.messages, snapshot.messages_total, history);
  renderAlarms(snapshot.alarms);
  renderCharts(snapshot);
  renderFunction(snapshot);
  renderCleanup(snapshot.cleanup, snapshot.cleanup_started);
  showSectionStates(snapshot);
}

function renderFunction(snapshot) {
  const f = snapshot.function;
  const resource = (snapshot.resources || {}).function;
  setText("#function-state", f ? `${f.state} · ${f.runtime}` : resource && resource.state === "absent" ? "deleted" : "");
}

// Before the lab's clean-up begins (cleanup_started: its mapping, jobs queue or the worker's log
// is gone) the checks describe an end state nobody has asked for: shown as not started, not red.
function renderCleanup(checks, started) {
  const list = $("#cleanup");
  setText("#cleanup-state", started ? "" : "not started: the checks turn green or red once the lab's clean-up deletes its mapping, queue or log");
  if (!checks) return list.replaceChildren();
  const word = (c) => (!started ? "not started" : c.ok ? "ok" : "fails");
  const tone = (c) => (!started ? "pending" : c.ok ? "ok" : "fail");
  list.replaceChildren(...checks.map((c) => el("li", { "data-testid": "cleanup-check", "data-ok": started ? String(c.ok) : "pending" },
    el("span", { class: `pill ${tone(c)}`, text: word(c) }),
    el("span", { "data-testid": "cleanup-name", text: c.check }),
    el("span", { class: "hint", text: c.evidence }))));
}

async function poll() {
  try {
    const response = await api("/api/snapshot");
    const snapshot = await response.json();
    if (snapshot.view && snapshot.view.poll_ms) pollMs = snapshot.view.poll_ms;
    failures = snapshot.error ? failures + 1 : 0;
    if (!response.ok && !snapshot.error) snapshot.error = `view server answered ${response.status}`;
    render(snapshot);
  } catch (error) {
    failures += 1;
    setStatus("error", "view server down");
    showBanner(`The view server at ${location.host} does not answer (${error.message}).`,
      `${every()} (attempt ${failures}).`);
  } finally {
    setTimeout(poll, pollMs);
  }
}

// --- dead-letter queue: classes, redrive of the safe ones, discard with a reason ------------

const CLASS_LABELS = {
  pending: "pending · a redrive writes it",
  stored: "stored · a redrive is a duplicate",
  lapsing: "lapsing · stored, expires before a copy could stop arriving; never redriven",
  conflict: "conflict · never redriven",
  malformed: "malformed · never redriven",
};
const CLASS_BADGES = {
  pending: "accepted", stored: "duplicate", lapsing: "duplicate", conflict: "conflict", malformed: "malformed",
};

function showDlqResult(text, bad) {
  const node = $("#dlq-result");
  node.textContent = text;
  node.className = bad ? "notice bad" : "notice";
  node.hidden = false;
}

async function post(path, body) {
  try {
    return await (await api(path, body)).json();
  } catch (error) {
    return { error: `the view server does not answer (${error.message})` };
  }
}

function sideBySide(m) {
  const keys = [...new Set([...Object.keys(m.requested || {}), ...Object.keys(m.stored || {})])].sort();
  return el("table", { class: "diff", "data-testid": "dlq-diff" },
    el("thead", {}, el("tr", {}, el("th", { text: "" }), el("th", { text: "requested" }), el("th", { text: "stored" }))),
    el("tbody", {}, ...keys.map((key) => {
      const requested = m.requested ? compact(m.requested[key]) : "–";
      const stored = m.stored ? compact(m.stored[key]) : "–";
      return el("tr", { class: requested === stored ? "" : "differs" },
        el("th", { text: key }), el("td", {}, el("code", { text: requested })), el("td", {}, el("code", { text: stored })));
    })));
}

function discardForm(m) {
  const reason = el("input", { type: "text", placeholder: "why this message may go (kept in the audit record)",
    "data-testid": "discard-reason", maxlength: "1000" });
  const button = el("button", { type: "button", class: "danger", "data-testid": "discard", text: "Discard" });
  button.addEventListener("click", async () => {
    if (!reason.value.trim()) { reason.focus(); return; }
    button.disabled = true;
    const answer = await post("/api/dlq/discard", { message_id: m.message_id, reason: reason.value });
    if (answer.error) {
      button.disabled = false;
      showDlqResult(`Discard failed: ${answer.error}`, true);
      return;
    }
    showDlqResult(`Discarded message ${answer.discarded.message_id} (${answer.discarded.class}); audit record written.`, false);
    await inspectDlq();
  });
  return el("div", { class: "discard" }, reason, button);
}

function renderDeadLetter(m) {
  const attributes = Object.keys(m.message_attributes || {}).length ? compact(m.message_attributes) : "none";
  const node = el("div", { class: `message ${m.class}`, "data-testid": "dlq-message", "data-message-id": m.message_id,
    "data-class": m.class },
    el("div", { class: "message-head" },
      el("span", { class: `badge ${CLASS_BADGES[m.class]}`, "data-testid": "dlq-class", text: m.class }),
      el("span", {}, el("span", { class: "hint", text: "order " }), el("code", { text: m.id === null ? "–" : String(m.id) })),
      el("span", { class: "hint", text: `received ${m.receive_count === 1 ? "once" : `${m.receive_count} times`}` }),
      el("span", { class: "hint", text: m.sent_ms ? `sent ${clockTime(m.sent_ms)}` : "" }),
      el("span", { class: "hint", text: `attributes: ${attributes}` }),
      el("span", { class: "hint", text: `message ${m.message_id}` }),
    ),
    el("p", { class: "reason", "data-testid": "dlq-reason", text: m.reason }),
    el("pre", { "data-testid": "dlq-body", text: m.body }),
  );
  if (m.class === "conflict") node.append(sideBySide(m));
  if (m.class === "conflict" || m.class === "malformed" || m.class === "lapsing") node.append(discardForm(m));
  return node;
}

async function inspectDlq() {
  const panel = $("#dlq-panel");
  panel.hidden = false;
  const box = $("#dlq-messages");
  box.replaceChildren(el("p", { class: "hint", text: "reading…" }));
  const answer = await post("/api/dlq", {});
  if (answer.error) {
    box.replaceChildren(el("p", { class: "section-error", text: `Cannot read the dead-letter queue: ${answer.error}` }));
    return;
  }
  const counts = el("div", { class: "classes", "data-testid": "dlq-counts" }, ...Object.keys(CLASS_LABELS).map((kind) =>
    el("span", { class: `badge ${CLASS_BADGES[kind]}`, "data-class": kind, title: CLASS_LABELS[kind],
      text: `${answer.counts[kind]} ${kind}` })));
  const safe = answer.counts.pending + answer.counts.stored;
  const redrive = el("button", { type: "button", class: "primary", "data-testid": "redrive-safe",
    text: `Redrive safe messages (${safe})` });
  redrive.disabled = safe === 0;
  redrive.addEventListener("click", () => redriveSafe(redrive));
  const head = el("div", { class: "dlq-head" }, counts, redrive);
  const notes = [];
  if (answer.reading.in_flight_elsewhere) {
    notes.push(`${answer.reading.in_flight_elsewhere} more message(s) are held by another reader (in flight): not shown`);
  }
  if (answer.reading.stopped) {
    notes.push(answer.reading.stopped);
  }
  if (!answer.complete && answer.reading.visible_after) {
    notes.push(`showing the first ${answer.reading.read}; about ${answer.reading.visible_after} more are visible`);
  }
  const noted = notes.map((text) => el("p", { class: "hint", "data-testid": "dlq-note", text }));
  if (answer.messages.length === 0) {
    box.replaceChildren(head, ...noted, el("p", { class: "hint", text: `${answer.queue} has no visible messages` }));
    return;
  }
  box.replaceChildren(head, ...noted, ...answer.messages.map(renderDeadLetter));
}

async function redriveSafe(button) {
  button.disabled = true;
  const answer = await post("/api/dlq/redrive", {});
  if (answer.error) {
    button.disabled = false;
    showDlqResult(`Redrive failed: ${answer.error}`, true);
    return;
  }
  const moved = answer.counts.pending.moved + answer.counts.stored.moved;
  const failed = Object.values(answer.counts).reduce((sum, c) => sum + c.failed, 0);
  showDlqResult(`Moved ${moved} message${moved === 1 ? "" : "s"} to ${answer.jobs_queue} ` +
    `(${answer.counts.pending.moved} pending, ${answer.counts.stored.moved} stored)` +
    (failed ? `; ${failed} failed: ${answer.failures.map((f) => f.reason).join("; ")}` : ".") +
    (answer.in_flight_elsewhere ? ` ${answer.in_flight_elsewhere} message(s) held by another reader were not seen.` : "") +
    (answer.stopped ? ` Incomplete: ${answer.stopped}` : ""), failed > 0 || !answer.complete);
  await inspectDlq();
}

$("#inspect").addEventListener("click", inspectDlq);
// Charts are drawn at their box's width: draw again when that changes (a resized window, or a
// scrollbar that appears once the page is long enough).
const chartWidths = new Map();
const chartBoxes = new ResizeObserver((entries) => {
  const changed = entries.some((entry) => chartWidths.get(entry.target) !== entry.contentRect.width);
  for (const entry of entries) chartWidths.set(entry.target, entry.contentRect.width);
  if (changed && lastSnapshot) renderCharts(lastSnapshot);
});
for (const box of document.querySelectorAll(".chart-box")) chartBoxes.observe(box);
renderOutcomeLegend();
$("#dlq-close").addEventListener("click", () => { $("#dlq-panel").hidden = true; $("#dlq-result").hidden = true; });
poll();
