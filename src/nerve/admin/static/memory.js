// The Memory page (/admin/api/memory/*): one user's records, the context block a query would
// produce, forgetting a record or a whole user after a confirmation. Loaded after admin.js
// ($, el, api, say, loaders). Memories are written by agents and users: text only, never HTML.
"use strict";

const memoryMessage = () => $("#memory-message");
const memoryTime = (at) => (at ? new Date(at * 1000).toISOString().slice(0, 16).replace("T", " ") : "–");
let memoryKindsFilled = false;

function memoryData(record) {
  // The data as the agent stored it: `text` when that is all there is, else compact JSON.
  const data = record.data || {};
  const keys = Object.keys(data);
  return keys.length === 1 && typeof data.text === "string" ? data.text : JSON.stringify(data);
}

function memoryItem(record) {
  const forget = el("button", { type: "button", class: "danger forget", "data-id": record.id }, "Delete");
  forget.addEventListener("click", () => forgetRecord(record));
  return el("li", { class: "item", "data-id": record.id, "data-kind": record.kind },
    el("div", { class: "item-head" },
      el("span", { class: "badge" }, record.kind),
      el("span", { class: "badge" }, record.tier),
      el("strong", {}, record.intent),
      el("span", { class: "muted" }, `importance ${record.importance}`),
      el("span", { class: "muted" }, memoryTime(record.created_at)),
      record.session_id ? el("span", { class: "muted" }, `session ${record.session_id}`) : "",
      forget),
    el("div", { class: "item-body" }, memoryData(record)),
    el("div", { class: "muted small" }, `id ${record.id}`));
}

function memoryParams(withKind) {
  const params = new URLSearchParams({ user_id: $("#memory-user").value.trim() });
  const query = $("#memory-query").value.trim();
  if (query) params.set("query", query);
  if (withKind && $("#memory-kind").value) params.set("kind", $("#memory-kind").value);
  return params;
}

async function loadMemory() {
  const status = await api("memory");
  const off = $("#memory-off");
  off.hidden = status.enabled;
  off.textContent = status.enabled ? "" : `Memory is off: ${status.reason}`;
  for (const node of $("#memory-form").querySelectorAll("input, select, button")) {
    node.disabled = !status.enabled;
  }
  if (!memoryKindsFilled) {
    $("#memory-kind").append(...status.kinds.map((kind) => el("option", { value: kind }, kind)));
    memoryKindsFilled = true;
  }
  if (status.enabled && $("#memory-user").value.trim()) await showMemory();
}

async function showMemory() {
  try {
    const [found, context] = await Promise.all([
      api(`memory/records?${memoryParams(true)}`), api(`memory/context?${memoryParams(false)}`)]);
    $("#memory-records").replaceChildren(...found.records.map(memoryItem));
    $("#memory-count").textContent = String(found.records.length);
    $("#memory-context").textContent = context.prompt_block || "(nothing: this user has no memory yet)";
    say(memoryMessage(), `${found.user_id}: ${found.records.length} record(s)`, true);
  } catch (error) {
    say(memoryMessage(), error.message, false);
  }
}

async function forgetRecord(record) {
  const question = `Delete this ${record.kind} of ${record.user_id} (${record.intent})? `
    + "It is gone for every nerve on this store, and cannot be undone.";
  if (!window.confirm(question)) return;
  try {
    await api(`memory/records/${encodeURIComponent(record.id)}`, { method: "DELETE" });
    await showMemory();
    say(memoryMessage(), `deleted ${record.id}`, true);
  } catch (error) {
    say(memoryMessage(), error.message, false);
  }
}

$("#memory-forget-user").addEventListener("click", async () => {
  const user = $("#memory-user").value.trim();
  if (!user) { say(memoryMessage(), "Type the user id first.", false); return; }
  const question = `Delete EVERYTHING nerve remembers about "${user}": memories, events, facts, `
    + "turns and summaries? This cannot be undone.";
  if (!window.confirm(question)) return;
  try {
    const result = await api(`memory/users/${encodeURIComponent(user)}`, { method: "DELETE" });
    await showMemory();
    say(memoryMessage(), `${user}: ${result.deleted} record(s) deleted`, true);
  } catch (error) {
    say(memoryMessage(), error.message, false);
  }
});

$("#memory-form").addEventListener("submit", (event) => {
  event.preventDefault();
  showMemory();
});
$("#memory-kind").addEventListener("change", () => { if ($("#memory-user").value.trim()) showMemory(); });

loaders.memory = loadMemory;
