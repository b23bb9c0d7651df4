// A small Markdown renderer for the assistant's replies that builds DOM nodes and never HTML:
// every piece of text lands in a text node, so `<img src=x onerror=...>` in a reply is shown as
// those characters, not run. Covers what models write: fenced code blocks, `inline code`,
// **bold**, *italic* / _italic_, [links](https://...) (http, https and mailto only), headings,
// bullet and numbered lists, and paragraphs with line breaks kept.
"use strict";
(function (global) {
  const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*|_[^_\n]+_)|(\[[^\]\n]+\]\([^)\s]+\))/;
  const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

  function inline(parent, text) {
    while (text) {
      const m = INLINE.exec(text);
      if (!m) { parent.appendChild(document.createTextNode(text)); return; }
      if (m.index) parent.appendChild(document.createTextNode(text.slice(0, m.index)));
      const token = m[0];
      let node;
      if (m[1]) {
        node = document.createElement("code");
        node.textContent = token.slice(1, -1);
      } else if (m[2]) {
        node = document.createElement("strong");
        inline(node, token.slice(2, -2));
      } else if (m[3]) {
        node = document.createElement("em");
        inline(node, token.slice(1, -1));
      } else {
        const close = token.indexOf("](");
        const label = token.slice(1, close);
        const href = token.slice(close + 2, -1);
        if (SAFE_LINK.test(href)) {
          node = document.createElement("a");
          node.href = href;
          node.rel = "noopener noreferrer";
          node.target = "_blank";
          node.textContent = label;
        } else {
          node = document.createTextNode(token); // javascript: and friends stay text
        }
      }
      parent.appendChild(node);
      text = text.slice(m.index + token.length);
    }
  }

  function paragraph(parent, lines) {
    const p = document.createElement("p");
    lines.forEach(function (line, i) {
      if (i) p.appendChild(document.createElement("br"));
      inline(p, line);
    });
    parent.appendChild(p);
  }

  function render(text) {
    const root = document.createElement("div");
    root.className = "md";
    const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
    let para = [];
    let list = null;
    const flush = function () {
      if (para.length) paragraph(root, para);
      para = [];
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
      if (fence) {
        flush(); list = null;
        const code = [];
        for (i += 1; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) code.push(lines[i]);
        const pre = document.createElement("pre");
        const block = document.createElement("code");
        if (fence[1]) block.dataset.lang = fence[1];
        block.textContent = code.join("\n");
        pre.appendChild(block);
        root.appendChild(pre);
        continue;
      }
      const heading = /^(#{1,4})\s+(.*)$/.exec(line);
      const item = /^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/.exec(line);
      if (heading) {
        flush(); list = null;
        const h = document.createElement("h" + Math.min(6, heading[1].length + 2));
        inline(h, heading[2]);
        root.appendChild(h);
      } else if (item) {
        flush();
        const kind = item[1] ? "OL" : "UL";
        if (!list || list.tagName !== kind) {
          list = document.createElement(kind.toLowerCase());
          root.appendChild(list);
        }
        const li = document.createElement("li");
        inline(li, item[2]);
        list.appendChild(li);
      } else if (!line.trim()) {
        flush(); list = null;
      } else {
        list = null;
        para.push(line);
      }
    }
    flush();
    return root;
  }

  global.nerveMarkdown = { render: render };
})(window);
