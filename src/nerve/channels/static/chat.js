// The web chat: one WebSocket to /chat/ws; messages in, typing indicators and replies out.
// What came while the tab was closed arrives on connect (marked with queued_at); a message
// with an id is shown once even if the server delivers it again (after a replica died).
"use strict";
(function () {
  const messages = document.getElementById("messages");
  const input = document.getElementById("input");
  const typing = document.getElementById("typing");
  const status = document.getElementById("status");
  const form = document.getElementById("composer");
  const key = "nerve-chat-id";
  let chatId = localStorage.getItem(key);
  if (!chatId) {
    chatId = (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random())
      .replace(/[^A-Za-z0-9_-]/g, "");
    localStorage.setItem(key, chatId);
  }
  const user = new URLSearchParams(location.search).get("user"); // else the key's, or "web"
  let socket = null;
  let retry = 500;
  const queue = [];
  const shownKey = "nerve-chat-shown:" + chatId;
  const shown = JSON.parse(localStorage.getItem(shownKey) || "[]");

  function firstTime(id) {
    if (!id) return true;
    if (shown.includes(id)) return false;
    shown.push(id);
    localStorage.setItem(shownKey, JSON.stringify(shown.slice(-200)));
    return true;
  }

  // Shown on an empty chat: who answers and what it can do; gone with the first message.
  function greet() {
    if (messages.children.length) return;
    const hello = document.createElement("div");
    hello.className = "greeting";
    hello.appendChild(nerveMarkdown.render(
      "**Hi, I am nerve's assistant.** Ask me anything, in English or in Hindi, Tamil, " +
      "Telugu, Kannada, Malayalam or Bengali (romanized is fine). I can:\n" +
      "- remember what you tell me, and recall it later\n" +
      "- keep your tasks and notes\n" +
      "- set reminders (\"remind me at 18:00 to call Asha\"), shown here when due\n" +
      "- read and write files in the workspace, and run safe shell commands\n" +
      "- search the web and check the weather, when configured"
    ));
    messages.appendChild(hello);
  }

  function show(kind, text, files, note) {
    const hello = messages.querySelector(".greeting");
    if (hello) hello.remove();
    const item = document.createElement("div");
    item.className = "msg " + kind;
    if (kind === "assistant") {
      item.appendChild(nerveMarkdown.render(text)); // DOM nodes, never HTML: see markdown.js
    } else {
      item.textContent = text;
    }
    for (const path of files || []) {
      const file = document.createElement("span");
      file.className = "file";
      file.textContent = "file: " + path;
      item.appendChild(file);
    }
    if (note) {
      const small = document.createElement("span");
      small.className = "note";
      small.textContent = note;
      item.appendChild(small);
    }
    messages.appendChild(item);
    messages.scrollTop = messages.scrollHeight;
  }

  // A reply as the model writes it: plain text that grows, replaced by the rendered reply.
  function liveFor(replyTo) {
    for (const item of messages.querySelectorAll(".msg.assistant.live")) {
      if (item.dataset.reply === (replyTo || "")) return item;
    }
    return null;
  }

  function grow(replyTo, text) {
    let live = liveFor(replyTo);
    if (!live) {
      const hello = messages.querySelector(".greeting");
      if (hello) hello.remove();
      live = document.createElement("div");
      live.className = "msg assistant live";
      live.dataset.reply = replyTo || "";
      messages.appendChild(live);
    }
    live.textContent += text;
    messages.scrollTop = messages.scrollHeight;
  }

  function setStatus(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  // A server with API keys wants one on the socket (a browser cannot set headers on it, so it
  // travels as a subprotocol), from this machine too. It is asked for when a socket is refused
  // before it opens and a plain GET says 401 (a missing or wrong key, not a server that is down),
  // and kept for the tab.
  function protocols() {
    const key = sessionStorage.getItem("nerve-key");
    return key ? ["nerve", "nerve.key." + key] : ["nerve"];
  }

  function keyRefused() {
    const key = sessionStorage.getItem("nerve-key");
    const headers = key ? { authorization: "Bearer " + key } : {};
    return fetch("/chat/ws", { headers: headers }).then(
      function (answer) { return answer.status === 401; },
      function () { return false; }
    );
  }

  function askKey() {
    sessionStorage.removeItem("nerve-key");
    const key = (window.prompt("API key for this nerve server") || "").trim();
    if (key) sessionStorage.setItem("nerve-key", key);
    return Boolean(key);
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const params = new URLSearchParams({ chat: chatId });
    if (user) params.set("user", user);
    let opened = false;
    socket = new WebSocket(scheme + "//" + location.host + "/chat/ws?" + params, protocols());
    socket.onopen = function () {
      opened = true;
      retry = 500;
      setStatus("online", "online");
      while (queue.length) socket.send(queue.shift());
    };
    socket.onmessage = function (event) {
      const msg = JSON.parse(event.data);
      if (msg.kind === "typing") {
        typing.hidden = false;
      } else if (msg.kind === "delta") {
        typing.hidden = true;
        grow(msg.reply_to, msg.text);
      } else if (msg.kind === "message") {
        typing.hidden = true;
        const live = liveFor(msg.reply_to);
        if (live) live.remove(); // the whole reply replaces what was written so far
        if (!firstTime(msg.id)) return;
        const away = msg.queued_at
          ? "sent while you were away, " + new Date(msg.queued_at * 1000).toLocaleString()
          : null;
        show("assistant", msg.text, msg.files, away);
      } else if (msg.kind === "error") {
        show("error", msg.text);
      }
    };
    socket.onclose = function () {
      typing.hidden = true;
      setStatus("offline", "offline, reconnecting…");
      const wait = retry;
      retry = Math.min(retry * 2, 10000);
      if (opened) {
        setTimeout(connect, wait);
        return;
      }
      keyRefused().then(function (refused) {
        if (!refused) setTimeout(connect, wait);
        else if (askKey()) connect();
        else setStatus("offline", "this server needs an API key: reload the page to enter one");
      });
    };
  }

  function send() {
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    show("user", text);
    const wire = JSON.stringify({ text: text });
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(wire);
    else queue.push(wire);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    send();
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      send();
    }
  });
  greet();
  connect();
})();
