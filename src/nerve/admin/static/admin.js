// nerve admin panel: plain JavaScript, no framework, no external URL (the page's CSP allows
// only this origin). Everything shown comes from /admin/api/*; text goes in with textContent,
// never innerHTML, because routes, models and log lines are partly chosen by clients.
"use strict";

const KINDS = ["ERROR", "WARNING", "FALLBACK", "ROUTE", "CALL", "AUTH_LOGIN", "AUTH_LOGOUT",
  "CONFIG_SAVE", "RELOAD", "KEY_SET", "KEY_CREATE", "KEY_REVOKE", "MEMORY_FORGET",
  "MEMORY_FORGET_USER", "JOB_CANCEL", "SAFETY_CHECK", "VERDICT", "AGENT_ROUTE", "JOB_DELIVERED"];
const QUIET = new Set(["ROUTE", "VERDICT"]); // one per request: off until asked for
const REFRESH_MS = 2000;
const MAX_LOG_LINES = 500;

const $ = (selector) => document.querySelector(selector);
let timer = null;
let currentTab = "dashboard";
let lastSeq = 0;

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child ?? "")));
  }
  return node;
}

class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

async function api(path, { method = "GET", body } = {}) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(`/admin/api/${path}`, init);
  let data = null;
  try { data = await response.json(); } catch (_) { /* not JSON */ }
  if (!response.ok) {
    if (response.status === 401 && path !== "login") showLogin();
    throw new ApiError(data?.error?.message || `${response.status} ${response.statusText}`, response.status);
  }
  return data;
}

function say(node, text, ok) {
  node.textContent = text;
  node.classList.toggle("error", !ok);
  node.classList.toggle("ok", ok);
}

const fmt = {
  int: (n) => (n ?? 0).toLocaleString("en-US"),
  usd: (n) => `$${(n ?? 0).toFixed(4)}`,
  // A model without a price in `prices` costs nothing here only because nobody said what it
  // costs: say so instead of showing $0.0000 as if it were free.
  cost: (n, priced) => (priced === false ? "no price" : fmt.usd(n)),
  ms: (n) => (n === null || n === undefined ? "–" : n.toFixed(1)),
};

// ---- login / session --------------------------------------------------------------------
function showLogin() {
  stopTimer();
  $("#app").hidden = true;
  $("#login").hidden = false;
  $("#password").focus();
}

function showApp() {
  $("#login").hidden = true;
  $("#app").hidden = false;
  selectTab(currentTab);
}

$("#login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const message = $("#login-error");
  message.textContent = "";
  try {
    await api("login", { method: "POST", body: { password: $("#password").value } });
    $("#password").value = "";
    showApp();
  } catch (error) {
    say(message, error.message, false);
  }
});

$("#logout").addEventListener("click", async () => {
  try { await api("logout", { method: "POST", body: {} }); } catch (_) { /* gone anyway */ }
  showLogin();
});

// ---- tabs and refresh ---------------------------------------------------------------------
function stopTimer() {
  if (timer !== null) clearInterval(timer);
  timer = null;
}

const loaders = { dashboard: loadDashboard, keys: loadKeys, logs: loadLogs, config: loadConfig };
const live = new Set(["dashboard", "logs"]);

function selectTab(name) {
  currentTab = name;
  stopTimer();
  for (const button of document.querySelectorAll(".tab")) {
    button.classList.toggle("active", button.dataset.tab === name);
  }
  for (const section of document.querySelectorAll(".panel")) {
    section.hidden = section.id !== `tab-${name}`;
  }
  const load = () => loaders[name]().catch((error) => console.warn(name, error.message));
  load();
  if (live.has(name)) timer = setInterval(load, REFRESH_MS);
}

for (const button of document.querySelectorAll(".tab")) {
  button.addEventListener("click", () => selectTab(button.dataset.tab));
}

// ---- dashboard ----------------------------------------------------------------------------
function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

async function loadDashboard() {
  const data = await api("dashboard");
  const stats = data.stats;
  $("#calls").textContent = fmt.int(stats.calls);
  $("#errors").textContent = fmt.int(stats.errors);
  $("#fallbacks").textContent = fmt.int(stats.fallbacks);
  $("#tokens").textContent = fmt.int(stats.tokens?.total);
  const priced = data.priced || {};
  const anyPrice = (targets) => !targets.length || targets.some((t) => priced[t] !== false);
  $("#cost").textContent = fmt.cost(stats.cost_usd, anyPrice(Object.keys(priced)));
  $("#latency").textContent = `${fmt.ms(stats.latency_ms?.p50)} / ${fmt.ms(stats.latency_ms?.p95)} ms`;
  const health = $("#health");
  health.textContent = data.health.status;
  health.className = `badge status-${data.health.status}`;
  const why = data.health.reasons || [];
  health.title = why.length ? `degraded because:\n- ${why.join("\n- ")}` : "all good";
  const reasons = $("#health-reasons");
  reasons.replaceChildren(...why.map((text) => el("li", {}, text)));
  reasons.hidden = !why.length;

  // Requests that named a provider/model (route "explicit") or fell in "(other)" get rows too,
  // so the table adds up to the totals above.
  const configured = new Set(data.routes.map((route) => route.name));
  const unlisted = Object.keys(stats.by_route || {}).filter((name) => !configured.has(name)).sort()
    .map((name) => ({ name, targets: [name === "explicit" ? "provider/model named by the client" : "–"] }));
  fill($("#routes tbody"), [...data.routes, ...unlisted].map((route) => {
    const s = stats.by_route?.[route.name] || {};
    return el("tr", { "data-route": route.name },
      el("td", {}, route.name), el("td", {}, route.targets.join(" → ")),
      el("td", { class: "num" }, fmt.int(s.calls)), el("td", { class: "num" }, fmt.int(s.errors)),
      el("td", { class: "num" }, fmt.int(s.tokens?.total)),
      el("td", { class: "num" }, fmt.ms(s.latency_ms?.p50)),
      el("td", { class: "num" }, fmt.cost(s.cost_usd, anyPrice(route.targets.filter((t) => t in priced)))));
  }));

  const targets = new Set([...Object.keys(data.breakers), ...Object.keys(stats.by_model || {})]);
  fill($("#models tbody"), [...targets].sort().map((target) => {
    const s = stats.by_model?.[target] || {};
    const state = data.breakers[target]?.state || "closed";
    const cooling = data.cooldowns[target];
    const probe = data.probes[target];
    const probeText = !probe ? "–" : probe.ok === true ? `ok ${fmt.ms(probe.latency_ms)} ms`
      : probe.ok === false ? `failed: ${probe.error}` : probe.skipped;
    return el("tr", { "data-target": target },
      el("td", {}, target), el("td", {}, el("span", { class: `badge breaker-${state}` }, state)),
      el("td", {}, cooling ? `${Math.ceil(cooling)} s` : "–"),
      el("td", { class: probe?.ok === false ? "bad" : "" }, probeText),
      el("td", { class: "num" }, fmt.int(s.calls)), el("td", { class: "num" }, fmt.int(s.errors)),
      el("td", { class: "num" }, fmt.int(s.tokens?.total)),
      el("td", { class: "num" }, fmt.ms(s.latency_ms?.p50)), el("td", { class: "num" }, fmt.ms(s.latency_ms?.p95)));
  }));
  $("#updated").textContent = new Date().toLocaleTimeString();
  // The charts (charts.js) refresh with the rest; their failure must not stop the tables.
  if (typeof loadCharts === "function") await loadCharts().catch((error) => console.warn("charts", error.message));
}

// ---- keys ---------------------------------------------------------------------------------
async function loadKeys() {
  const data = await api("keys");
  $("#master-key-warning").hidden = data.master_key;
  fill($("#keys tbody"), data.keys.map((key) => el("tr", { "data-provider": key.provider },
    el("td", {}, key.provider), el("td", {}, key.masked),
    el("td", {}, key.source + (key.env ? ` ($${key.env})` : "")), el("td", {}, key.base_url))));
  const select = $("#key-provider");
  const chosen = select.value;
  select.replaceChildren(...data.keys.map((key) => el("option", { value: key.provider }, key.provider)));
  if (chosen) select.value = chosen;
}

$("#key-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const provider = $("#key-provider").value;
  const input = $("#key-value");
  try {
    const result = await api(`keys/${encodeURIComponent(provider)}`, { method: "PUT", body: { value: input.value } });
    input.value = "";
    say($("#key-message"), `${provider}: key saved encrypted (${result.masked}) and applied`, true);
    await loadKeys();
  } catch (error) {
    say($("#key-message"), error.message, false);
  }
});

// ---- logs ---------------------------------------------------------------------------------
const kindBoxes = KINDS.map((kind) => {
  const box = el("input", { type: "checkbox", checked: !QUIET.has(kind), value: kind });
  box.addEventListener("change", () => resetLogs());
  $("#log-kinds").append(el("label", { class: `kind kind-${kind}` }, box, kind));
  return box;
});
$("#log-q").addEventListener("input", () => resetLogs());

function resetLogs() {
  lastSeq = 0;
  $("#log-list").replaceChildren();
  loadLogs().catch((error) => console.warn("logs", error.message));
}

function describe(event) {
  const skip = new Set(["seq", "ts", "kind", "pid"]);  // pid: in the line's tooltip
  return Object.entries(event).filter(([key, value]) => !skip.has(key) && value !== null)
    .map(([key, value]) => `${key}=${typeof value === "object" ? JSON.stringify(value) : value}`)
    .join("  ");
}

async function loadLogs() {
  const kinds = kindBoxes.filter((box) => box.checked).map((box) => box.value);
  const list = $("#log-list");
  if (kinds.length === 0) { list.replaceChildren(); return; }
  const query = new URLSearchParams({ kind: kinds.join(","), after: lastSeq, limit: MAX_LOG_LINES });
  const q = $("#log-q").value.trim();
  if (q) query.set("q", q);
  const { events } = await api(`logs?${query}`);
  for (const event of events) {
    lastSeq = Math.max(lastSeq, event.seq);
    const title = event.pid ? `written by process ${event.pid}` : "";
    list.prepend(el("li", { class: `kind-${event.kind}`, "data-kind": event.kind, title },
      el("time", {}, event.ts.replace("T", " ").replace("Z", "")),
      el("span", { class: `badge kind kind-${event.kind}` }, event.kind),
      el("span", { class: "detail" }, describe(event))));
  }
  while (list.children.length > MAX_LOG_LINES) list.lastChild.remove();
}

// ---- config -------------------------------------------------------------------------------
async function loadConfig() {
  const data = await api("config");
  $("#config-path").textContent = data.path || "(none)";
  $("#config-text").value = data.text;
  $("#config-text").readOnly = !data.editable;
  $("#config-save").disabled = !data.editable;
  $("#config-reload").disabled = !data.editable;
}

function applied(result) {
  const changed = (result.changed || []).join(", ") || "nothing";
  const restart = (result.restart_required || []).length
    ? `; restart needed for ${result.restart_required.join(", ")}` : "";
  return `applied: changed ${changed}${restart}; routes ${(result.routes || []).join(", ")}`;
}

async function saveConfig() {
  try {
    const result = await api("config", { method: "PUT", body: { text: $("#config-text").value } });
    say($("#config-message"), `Saved and ${applied(result)}`, true);
    await loadConfig();
  } catch (error) {
    say($("#config-message"), `Not saved: ${error.message}`, false);
  }
}

$("#config-save").addEventListener("click", saveConfig);
$("#config-text").addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === "s") { event.preventDefault(); saveConfig(); }
});
$("#config-reload").addEventListener("click", async () => {
  try {
    const result = await api("reload", { method: "POST", body: {} });
    say($("#config-message"), `Reloaded from file and ${applied(result)}`, true);
    await loadConfig();
  } catch (error) {
    say($("#config-message"), `Not reloaded: ${error.message}`, false);
  }
});

// ---- start --------------------------------------------------------------------------------
api("session").then(showApp, showLogin);
