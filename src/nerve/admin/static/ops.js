// The Safety, Agents and Jobs pages (/admin/api/safety/*, agents, jobs). Loaded after admin.js
// ($, el, api, say, loaders). Commands, reasons, agent names and reminder texts come from
// clients and agents: they go in as text, never as HTML.
"use strict";

const opsTime = (ts) => (ts || "").replace("T", " ").replace(/\.\d+Z$/, "Z");

// ---- safety -------------------------------------------------------------------------------
function verdictBadge(verdict) {
  const word = verdict.flagged ? "flagged" : verdict.allowed ? "allowed" : "blocked";
  return el("span", { class: `badge verdict-${word}` }, word);
}

const VERDICT_SOURCES = { guard: "gateway guard", admin: "tried here", pipeline: "/api/process",
  tools: "a tool's check", api: "/api/safety/check", mcp: "MCP safety_check" };

function verdictItem(v) {
  const why = [v.risk_level && `${v.risk_level} risk`, v.blocked_by && `by ${v.blocked_by}`,
    v.category, v.route && `route ${v.route}`, v.user_id && `user ${v.user_id}`,
    v.intent && `intent ${v.intent}`].filter(Boolean).join(" · ");
  return el("li", { class: "item", "data-source": v.source, "data-allowed": String(v.allowed) },
    el("div", { class: "item-head" }, verdictBadge(v), el("span", { class: "badge" }, v.kind),
      el("span", { class: "muted" }, VERDICT_SOURCES[v.source] || v.source),
      el("span", { class: "muted" }, opsTime(v.ts))),
    el("code", { class: "item-body" }, v.subject),
    el("div", {}, v.reason), el("div", { class: "muted small" }, why));
}

async function loadSafety() {
  const params = new URLSearchParams();
  if ($("#verdict-allowed").value) params.set("allowed", $("#verdict-allowed").value);
  if ($("#verdict-kind").value) params.set("kind", $("#verdict-kind").value);
  const data = await api(`safety/verdicts?${params}`);
  $("#verdict-sources").textContent = `On record: ${data.sources.join("; ")}.`;
  $("#verdicts").replaceChildren(...(data.verdicts.length ? data.verdicts.map(verdictItem)
    : [el("li", { class: "item muted" }, "No verdict on record matches.")]));
}

$("#safety-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = { kind: $("#safety-kind").value, content: $("#safety-content").value };
  const box = $("#safety-result");
  try {
    const { verdict } = await api("safety/check", { method: "POST", body });
    box.replaceChildren(verdictBadge(verdict),
      el("strong", {}, ` ${verdict.risk_level} risk`), el("div", {}, verdict.reason),
      el("div", { class: "muted small" }, [verdict.blocked_by && `blocked by ${verdict.blocked_by}`,
        verdict.category].filter(Boolean).join(" · ")));
    box.dataset.allowed = String(verdict.allowed);
    box.hidden = false;
    say($("#safety-message"), "", true);
    await loadSafety();
  } catch (error) {
    box.hidden = true;
    say($("#safety-message"), error.message, false);
  }
});
for (const id of ["#verdict-allowed", "#verdict-kind"]) {
  $(id).addEventListener("change", () => loadSafety().catch((e) => say($("#safety-message"), e.message, false)));
}

// ---- agents -------------------------------------------------------------------------------
const epochTime = (at) => (at ? new Date(at * 1000).toISOString().slice(0, 16).replace("T", " ") : "–");

function routeResult(r) {
  return r.ok ? `ok in ${r.latency_ms} ms` : `failed: ${r.error}`;
}

function agentItem(agent) {
  const last = agent.last_result;
  return el("li", { class: "item", "data-agent": agent.agent_name },
    el("div", { class: "item-head" }, el("strong", {}, agent.agent_name),
      ...agent.capabilities.map((c) => el("span", { class: "badge" }, c)),
      el("span", { class: "badge" }, `${agent.successes} ok`),
      el("span", { class: `badge ${agent.failures ? "verdict-blocked" : ""}` },
        `${agent.failures} recent failure(s)`)),
    el("code", { class: "item-body" }, agent.endpoint),
    el("div", { class: "muted small last-result" }, `registered ${epochTime(agent.created_at)} · updated `
      + `${epochTime(agent.updated_at)}` + (last ? ` · last route ${opsTime(last.ts)} ${last.task}: `
      + routeResult(last) : " · no route on record")));
}

function resultItem(r) {
  return el("li", { class: "item", "data-agent": r.agent, "data-ok": String(r.ok) },
    el("div", { class: "item-head" }, el("strong", {}, r.agent), el("span", { class: "badge" }, r.task),
      el("span", { class: `badge verdict-${r.ok ? "allowed" : "blocked"}` }, r.ok ? "ok" : "failed"),
      el("span", { class: "muted" }, opsTime(r.ts))), el("div", {}, routeResult(r)));
}

async function loadAgents() {
  const data = await api("agents");
  $("#agents").replaceChildren(...(data.agents.length ? data.agents.map(agentItem)
    : [el("li", { class: "item muted" }, "No agent is registered.")]));
  const heading = $("#agents-note").previousElementSibling;
  if (heading && heading.tagName === "H2") heading.textContent = "Recent route results";
  $("#agents-note").textContent = data.note;
  $("#agent-failures").replaceChildren(...(data.results.length ? data.results.map(resultItem)
    : [el("li", { class: "item muted" }, "No route result on record.")]));
}

// ---- jobs ---------------------------------------------------------------------------------
function dueText(seconds) {
  // How far off the firing is (or how late): easier to read than the timestamp alone.
  const abs = Math.abs(seconds);
  const span = abs < 90 ? `${Math.round(abs)} s` : abs < 3600 ? `${Math.round(abs / 60)} min`
    : abs < 129600 ? `${Math.round(abs / 3600)} h` : `${Math.round(abs / 86400)} d`;
  return seconds >= 0 ? `in ${span}` : `${span} overdue`;
}

function jobItem(job, now) {
  const cancel = el("button", { type: "button", class: "danger cancel", "data-id": job.id }, "Cancel");
  cancel.addEventListener("click", () => cancelJob(job));
  return el("li", { class: `item job-${job.state}`, "data-id": job.id, "data-state": job.state },
    el("div", { class: "item-head" }, el("span", { class: `badge state-${job.state}` }, job.state),
      el("span", { class: "badge" }, job.mode), el("strong", {}, job.next_run),
      el("span", { class: "muted" }, dueText(job.due_at - now)),
      el("span", { class: "muted" }, job.cron ? `cron ${job.cron}` : "once"), cancel),
    el("div", { class: "item-body" }, job.text),
    el("div", { class: "muted small" }, `user ${job.user_id} · chat ${job.chat_id} · id ${job.id}`));
}

async function loadJobs() {
  const off = $("#jobs-off");
  let data;
  try {
    data = await api("jobs");
  } catch (error) {
    off.hidden = false;
    off.textContent = error.message;
    $("#jobs").replaceChildren();
    return;
  }
  off.hidden = true;
  $("#jobs-tz").textContent = data.timezone;
  const channels = Object.keys(data.channels).sort();
  $("#jobs").replaceChildren(...(channels.length ? channels.map((channel) => el("div",
    { class: "channel", "data-channel": channel },
    el("h2", {}, `${channel} `, el("span", { class: "badge" }, data.channels[channel])),
    el("ul", { class: "items" }, ...data.jobs.filter((j) => j.channel === channel).map((j) => jobItem(j, data.now)))))
    : [el("p", { class: "muted" }, "No job is pending.")]));
  showDeliveries(data.deliveries);
}

function deliveryItem(d) {
  return el("li", { class: "item", "data-id": d.id, "data-late": String(d.late) },
    el("div", { class: "item-head" }, el("span", { class: `badge state-${d.late ? "late" : "pending"}` },
      d.late ? "delivered late" : "delivered"), el("span", { class: "badge" }, d.channel),
      el("strong", {}, epochTime(d.delivered_at)), el("span", { class: "muted" }, `due ${epochTime(d.due_at)}`),
      el("span", { class: "muted" }, d.cron ? `cron ${d.cron}` : "once")),
    el("div", { class: "item-body" }, d.text),
    el("div", { class: "muted small" }, `user ${d.user_id} · chat ${d.chat_id} · id ${d.id}`));
}

function showDeliveries(deliveries) {
  // The page's markup has no place for these: made once, after the pending jobs.
  let list = $("#jobs-delivered");
  if (!list) {
    list = el("ul", { id: "jobs-delivered", class: "items" });
    $("#jobs").after(el("h2", {}, "Recently delivered"), list);
  }
  list.replaceChildren(...(deliveries.length ? deliveries.map(deliveryItem)
    : [el("li", { class: "item muted" }, "No delivery on record.")]));
}

async function cancelJob(job) {
  const what = job.cron ? `the cron job "${job.text}" (${job.cron})` : `the reminder "${job.text}"`;
  if (!window.confirm(`Cancel ${what} of ${job.user_id}? It will not fire again.`)) return;
  try {
    await api(`jobs/${encodeURIComponent(job.id)}`, { method: "DELETE" });
    say($("#jobs-message"), `cancelled ${job.id}`, true);
  } catch (error) {
    say($("#jobs-message"), error.message, false);
  }
  await loadJobs();
}

loaders.safety = loadSafety;
loaders.agents = loadAgents;
loaders.jobs = loadJobs;
