// The Access page: API keys as objects (/admin/api/access). Loaded after admin.js, whose
// helpers it uses ($, el, api, fill, say, fmt, loaders). Key names, globs and users are chosen
// by whoever made the key, so they go in as text, never as HTML.
"use strict";

const accessMessage = () => $("#access-message");
const globsText = (list) => (list === null ? "any" : list.join(", ") || "none");
const whenText = (at) => (at ? new Date(at * 1000).toISOString().slice(0, 16).replace("T", " ") : "–");

function limitsText(key) {
  const limits = [["rpm", key.rpm], ["tpm", key.tpm], ["parallel", key.max_parallel]];
  return limits.filter(([, value]) => value !== null)
    .map(([name, value]) => `${name} ${fmt.int(value)}`).join(", ") || "–";
}

function accessAction(key) {
  if (key.revoked_at) return `revoked ${whenText(key.revoked_at)}`;
  if (!key.managed) return "config file";
  const button = el("button", { type: "button", class: "revoke", "data-name": key.name }, "Revoke");
  button.addEventListener("click", () => revokeKey(key.name));
  return button;
}

function accessRow(key) {
  const spend = key.spend;
  const held = spend && spend.held_usd ? ` (+${fmt.usd(spend.held_usd)} in flight)` : "";
  const left = spend && spend.left_usd !== null ? fmt.usd(spend.left_usd) : "–";
  return el("tr", { "data-key": key.name, class: key.revoked_at ? "revoked" : "" },
    el("td", {}, key.name), el("td", {}, key.key || "–"),
    el("td", {}, key.managed ? "store" : "config"),
    el("td", {}, globsText(key.routes)), el("td", {}, globsText(key.models)),
    el("td", {}, globsText(key.users)), el("td", {}, limitsText(key)),
    el("td", {}, key.budget ? `$${key.budget.usd}/${key.budget.period}` : "–"),
    el("td", { class: "num", title: held }, spend ? fmt.usd(spend.usd) : "–"),
    el("td", { class: "num" }, left),
    el("td", {}, whenText(key.created_at)), el("td", {}, accessAction(key)));
}

async function loadAccess() {
  const data = await api("access");
  const warning = $("#access-spend-error");
  warning.hidden = !data.spend_error;
  warning.textContent = data.spend_error ? `Spend is unknown right now: ${data.spend_error}` : "";
  fill($("#access-keys tbody"), data.keys.map(accessRow));
}

async function revokeKey(name) {
  const question = `Revoke the key "${name}"? Every nerve on this store refuses it within a `
    + "second. This cannot be undone, and the name cannot be used again.";
  if (!window.confirm(question)) return;
  try {
    await api(`access/${encodeURIComponent(name)}/revoke`, { method: "POST", body: {} });
    say(accessMessage(), `${name}: revoked`, true);
  } catch (error) {
    say(accessMessage(), error.message, false);
  }
  await loadAccess();
}

$("#access-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const body = {};
  for (const input of form.querySelectorAll("input")) {
    const value = input.value.trim();
    if (value !== "") body[input.name] = input.type === "number" ? Number(value) : value;
  }
  try {
    const result = await api("access", { method: "POST", body });
    form.reset();
    $("#access-secret-name").textContent = result.record.name;
    $("#access-secret-value").value = result.key;
    $("#access-secret").hidden = false;
    $("#access-secret-value").select();
    say(accessMessage(), `${result.record.name}: created`, true);
    await loadAccess();
  } catch (error) {
    say(accessMessage(), error.message, false);
  }
});

$("#access-secret-done").addEventListener("click", () => {
  $("#access-secret-value").value = "";  // shown once: gone from the page too
  $("#access-secret").hidden = true;
});

loaders.access = loadAccess;
