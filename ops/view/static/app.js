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

function sameItem(a, b) {
  return a && b && compact(a) === compact(b);
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

function showSectionErrors(errors) {
  for (const node of document.querySelectorAll("[data-error-for]")) {
    const message = errors[node.dataset.errorFor];
    node.hidden = !message;
    node.textContent = message ? `Cannot read: ${message}` : "";
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

function renderSummary(snapshot) {
  const summary = snapshot.summary;
  const rows = summary ? [
    ["executions", snapshot.executions],
    ["accepted writes", summary.accepted],
    ["conditional rejections", summary.rejected],
    ["· duplicates acknowledged", summary.duplicates],
    ["· conflicts (retried, then DLQ)", summary.conflicts],
    ["errors", summary.errors],
  ] : [];
  $("#summary").replaceChildren(...rows.flatMap(([label, value]) => [
    el("dt", { text: label }), el("dd", { text: String(value) }),
  ]));
  setText("#log-since", summary ? `log lines since ${clockTime(snapshot.log_since_ms)}` : "");
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
    el("td", { class: "id" }, el("code", { text: String(item.id) })),
    el("td", { class: "num", text: String(item.quantity ?? "–") }),
    el("td", { class: "num", text: String(item.total_cents ?? "–") }),
    el("td", {}, otherAttributes(item, ["id", "quantity", "total_cents"])),
  ));
  if (truncated) rows.push(emptyRow(4, `showing the first ${orders.length} items scanned`));
  body.replaceChildren(...rows);
}

function renderReference(items) {
  const body = $("#reference");
  if (items === null) return body.replaceChildren();
  if (items.length === 0) return body.replaceChildren(emptyRow(3, "the reference table is empty"));
  body.replaceChildren(...items.map((item) => el("tr", { "data-reference-id": String(item.id) },
    el("td", {}, el("code", { text: String(item.id) })),
    el("td", { "data-testid": "reference-note", text: String(item.note ?? "–") }),
    el("td", {}, otherAttributes(item, ["id", "note"])),
  )));
}

const OUTCOMES = {
  written: ["accepted", "Accepted"],
  duplicate: ["duplicate", "Rejected · duplicate"],
  conflict: ["conflict", "Rejected · conflict"],
};

function renderDecisions(decisions, total) {
  const body = $("#decisions");
  if (decisions === null) return body.replaceChildren();
  if (decisions.length === 0) return body.replaceChildren(emptyRow(5, "no write decisions logged yet"));
  const rows = [...decisions].reverse().map((d) => {
    const [badgeClass, label] = OUTCOMES[d.decision] || ["conflict", `${d.outcome} · ${d.decision}`];
    const stored = el("td", {}, el("code", { text: compact(d.stored) }));
    if (d.previous && sameItem(d.previous, d.stored)) stored.append(el("span", { class: "unchanged", text: "unchanged" }));
    if (d.decision === "conflict") {
      stored.append(el("span", { class: "condition", text: `requested ${compact(d.requested)}` }));
    }
    return el("tr", { class: `decision ${d.decision}`, "data-decision": d.decision, "data-order-id": String(d.id) },
      el("td", { title: d.time, text: clockTime(d.time_ms) }),
      el("td", { class: "id" }, el("code", { text: String(d.id) })),
      el("td", {}, el("span", { class: `badge ${badgeClass}`, text: label }),
        el("span", { class: "condition", text: `${d.outcome} on ${d.condition}` })),
      el("td", {}, el("code", { text: compact(d.previous) })),
      stored,
    );
  });
  if (total > decisions.length) rows.push(emptyRow(5, `${total - decisions.length} older decisions not shown`));
  body.replaceChildren(...rows);
}

function renderWorkerErrors(errors) {
  const box = $("#worker-errors-box");
  box.hidden = !errors || errors.length === 0;
  if (box.hidden) return;
  $("#worker-errors").replaceChildren(...[...errors].reverse().map((e) => el("tr", { class: "conflict" },
    el("td", { title: e.time, text: clockTime(e.time_ms) }),
    el("td", {}, el("code", { text: String(e.error ?? "") })),
    el("td", { text: String(e.message ?? "") }),
    el("td", { class: "num", text: String(e.receive_count ?? "–") }),
  )));
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

// A line chart of [{label, color, points: [[ms, value], ...]}] over [start, end].
function lineChart(box, lines, start, end) {
  const width = 560, height = 170, left = 36, right = 10, top = 10, bottom = 22;
  const max = Math.max(1, ...lines.flatMap((line) => line.points.map(([, value]) => value)));
  const x = (ms) => left + ((ms - start) / (end - start)) * (width - left - right);
  const y = (value) => top + (1 - value / max) * (height - top - bottom);
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img" },
    svg("line", { x1: left, y1: y(0), x2: width - right, y2: y(0), class: "axis" }),
    svg("line", { x1: left, y1: top, x2: left, y2: y(0), class: "axis" }),
    svg("text", { x: left - 4, y: top + 8, class: "tick", "text-anchor": "end" }, String(max)),
    svg("text", { x: left - 4, y: y(0), class: "tick", "text-anchor": "end" }, "0"),
    svg("text", { x: left, y: height - 6, class: "tick" }, clockTime(start).slice(0, 5)),
    svg("text", { x: width - right, y: height - 6, class: "tick", "text-anchor": "end" }, clockTime(end).slice(0, 5)));
  for (const line of lines) {
    if (!line.points.length) continue;
    const points = line.points.map(([ms, value]) => `${x(ms).toFixed(1)},${y(value).toFixed(1)}`).join(" ");
    chart.append(svg("polyline", { points, fill: "none", stroke: line.color, "stroke-width": 2, "data-series": line.label }));
    for (const [ms, value] of line.points) {
      chart.append(svg("circle", { cx: x(ms).toFixed(1), cy: y(value).toFixed(1), r: 2.5, fill: line.color },
        svg("title", {}, `${line.label} ${value} at ${clockTime(ms)}`)));
    }
  }
  const legend = el("div", { class: "legend" }, ...lines.map((line) => {
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = line.color;  // CSSOM, which the page's CSP allows (a style attribute it does not)
    return el("span", { class: "key", "data-series": line.label }, swatch,
      `${line.label} (${line.points.reduce((sum, [, value]) => sum + value, 0)} in the hour)`);
  }));
  box.replaceChildren(chart, legend);
}

const DECISION_COLORS = { Accepted: "#1a7f37", Duplicate: "#9a6700", Conflict: "#b42318", Malformed: "#8250df", Error: "#57606a" };

function renderCharts(snapshot) {
  const series = snapshot.series;
  if (!series) return;
  const end = snapshot.taken_at_ms, start = end - 60 * 60 * 1000;
  lineChart($("#chart-decisions"), Object.keys(DECISION_COLORS).map((kind) => ({
    label: kind, color: DECISION_COLORS[kind], points: series[`decision:${kind}`] || [] })), start, end);
  lineChart($("#chart-queues"), [
    { label: "jobs queue", color: "#0969da", points: series["queue:jobs"] || [] },
    { label: "dead-letter queue", color: "#b42318", points: series["queue:dlq"] || [] },
  ], start, end);
}

function renderAlarms(alarms) {
  const list = $("#alarms");
  if (alarms === null) return list.replaceChildren();
  if (alarms.length === 0) return list.replaceChildren(el("li", { class: "hint", text: "no alarms found" }));
  list.replaceChildren(...alarms.map((alarm) => el("li", { class: `alarm ${alarm.state}`, "data-alarm": alarm.name },
    el("span", { class: `pill state ${alarm.state}`, "data-testid": "alarm-state", text: alarm.state }),
    el("code", { text: alarm.name }),
    el("span", { class: "hint", title: alarm.reason, text: alarm.reason }))));
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
  const target = snapshot.target;
  const partial = Object.keys(snapshot.errors).length > 0;
  setStatus(partial ? "error" : "live", partial ? "live · some reads failed" : "live");
  setText("#names-from", target.names_from);
  setText("#updated", clockTime(snapshot.taken_at_ms));
  setText("#jobs-name", target.jobs_queue);
  setText("#dlq-name", target.dead_letter_queue);
  setText("#function-name", target.function_name);
  setText("#orders-name", target.orders_table);
  setText("#reference-name", target.reference_table);
  renderCounters("jobs", snapshot.queues.jobs);
  renderCounters("dlq", snapshot.queues.dlq);
  renderMappings(snapshot.mappings, target);
  renderSummary(snapshot);
  renderOrders(snapshot.orders, snapshot.orders_truncated);
  renderReference(snapshot.reference);
  renderDecisions(snapshot.decisions, snapshot.decisions_total);
  renderWorkerErrors(snapshot.worker_errors);
  renderAlarms(snapshot.alarms);
  renderCharts(snapshot);
  showSectionErrors(snapshot.errors);
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
  conflict: "conflict · never redriven",
  malformed: "malformed · never redriven",
};
const CLASS_BADGES = { pending: "accepted", stored: "duplicate", conflict: "conflict", malformed: "conflict" };

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
  if (m.class === "conflict" || m.class === "malformed") node.append(discardForm(m));
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
  if (answer.messages.length === 0) {
    box.replaceChildren(head, el("p", { class: "hint", text: `${answer.queue} has no visible messages` }));
    return;
  }
  box.replaceChildren(head, ...answer.messages.map(renderDeadLetter));
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
    (failed ? `; ${failed} failed: ${answer.failures.map((f) => f.reason).join("; ")}` : "."), failed > 0);
  await inspectDlq();
}

$("#inspect").addEventListener("click", inspectDlq);
$("#dlq-close").addEventListener("click", () => { $("#dlq-panel").hidden = true; $("#dlq-result").hidden = true; });
poll();
