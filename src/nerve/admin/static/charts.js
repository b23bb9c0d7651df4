// nerve admin charts: the dashboard's stats over time, drawn as SVG by this file (no library,
// no CDN: the page's CSP allows only this origin). Data: /admin/api/series?window=&by=, one
// array per metric for the total and for each route or model. Charts take their container's
// width, so they stay readable on a phone; they are redrawn on resize from the last data.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const CHART_HEIGHT = 170;
const PAD = { left: 46, right: 10, top: 10, bottom: 24 };
const COLORS = ["#2f5bea", "#0f7773", "#c25e00", "#6b3fb5", "#137a3a", "#b5358c", "#5b6b00", "#1f8fbf"];
const MAX_LINES = 8;  // the busiest names; more lines than colours cannot be told apart
const chartState = { window: "1h", by: "route", data: null };

const CHARTS = [
  { id: "requests", title: "Requests", metrics: [["calls", ""]], unit: "int" },
  { id: "errors", title: "Errors (solid) and fallbacks (dashed)",
    metrics: [["errors", ""], ["fallbacks", "dash"]], unit: "int" },
  { id: "latency", title: "Latency p50 (solid) and p95 (dashed), ms",
    metrics: [["p50_ms", ""], ["p95_ms", "dash"]], unit: "ms", spanGaps: true },
  { id: "tokens", title: "Tokens", metrics: [["tokens", ""]], unit: "int" },
  { id: "cost", title: "Cost (USD)", metrics: [["cost_usd", ""]], unit: "usd" },
];

function svgEl(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function axisText(value, unit) {
  if (unit === "usd") return value === 0 ? "$0" : value < 0.01 ? `$${value.toPrecision(2)}` : `$${value.toFixed(2)}`;
  if (value >= 1e6) return `${+(value / 1e6).toFixed(1)}M`;
  if (value >= 1e3) return `${+(value / 1e3).toFixed(1)}k`;
  return `${+value.toFixed(value < 10 ? 1 : 0)}`;
}

function niceMax(max, unit) {
  if (!(max > 0)) return unit === "usd" ? 0.01 : 3;
  if (unit === "int" && max <= 30) return Math.ceil(max / 3) * 3;  // whole numbers on 3 gridlines
  const power = 10 ** Math.floor(Math.log10(max));
  const nice = [1, 2, 2.5, 5, 10].map((m) => m * power).find((m) => m >= max);
  return unit === "int" ? Math.max(1, Math.ceil(nice)) : nice;
}

function clock(ts, withDay) {
  const d = new Date(ts * 1000);
  const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
  return withDay ? `${d.toLocaleDateString([], { weekday: "short" })} ${hm}` : hm;
}

// The lines to draw: each route/model with its colour, busiest first, plus a total when the
// names are more than one (a single name's line would only repeat it).
function linesOf(data) {
  const names = Object.keys(data.series);
  const sum = (name) => data.series[name].calls.reduce((a, b) => a + b, 0);
  const busiest = names.sort((a, b) => sum(b) - sum(a) || a.localeCompare(b)).slice(0, MAX_LINES);
  const lines = busiest.map((name, i) => ({ name, color: COLORS[i % COLORS.length], arrays: data.series[name] }));
  if (names.length !== 1) lines.unshift({ name: "total", color: "#1d2330", arrays: data.total, total: true });
  return lines;
}

function drawChart(figure, spec, data, lines) {
  const width = Math.max(260, Math.floor((figure.clientWidth || 616) - 16));
  const height = CHART_HEIGHT;
  const innerW = width - PAD.left - PAD.right;
  const innerH = height - PAD.top - PAD.bottom;
  const n = data.timestamps.length;
  const values = lines.flatMap((line) => spec.metrics.flatMap(([m]) => line.arrays[m]))
    .filter((v) => v !== null);
  const top = niceMax(Math.max(0, ...values), spec.unit);
  const x = (i) => PAD.left + (n <= 1 ? innerW : (i / (n - 1)) * innerW);
  const y = (v) => PAD.top + innerH - (v / top) * innerH;
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": spec.title, "data-chart": spec.id, class: "chart-svg" });
  for (let k = 0; k <= 3; k++) {
    const v = (top * k) / 3;
    svg.append(svgEl("line", { x1: PAD.left, x2: width - PAD.right, y1: y(v), y2: y(v), class: "grid" }));
    svg.append(svgEl("text", { x: PAD.left - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" },
      axisText(v, spec.unit)));
  }
  const withDay = data.window === "24h";
  for (const i of [0, Math.floor((n - 1) / 2), n - 1]) {
    const anchor = i === 0 ? "start" : i === n - 1 ? "end" : "middle";
    svg.append(svgEl("text", { x: x(i), y: height - 6, class: "tick", "text-anchor": anchor },
      clock(data.timestamps[i], withDay && i === 0)));
  }
  for (const line of lines) {
    for (const [metric, style] of spec.metrics) {
      const arr = line.arrays[metric];
      let d = "";
      // A null is a bucket without a sample: it breaks the line, except for latency, where an
      // idle minute says nothing about speed and the line goes on to the next sample.
      let pen = false;
      arr.forEach((v, i) => {
        if (v === null) { pen = pen && !!spec.spanGaps; return; }
        d += `${pen ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
        pen = true;
      });
      if (!d) continue;
      svg.append(svgEl("path", { d, stroke: line.color, class: `line ${style}${line.total ? " total" : ""}`,
        "data-name": line.name, "data-metric": metric }));
      arr.forEach((v, i) => {
        if (v === null || v === 0) return;  // only buckets with something in them get a dot
        const dot = svgEl("circle", { cx: x(i), cy: y(v), r: 2.5, fill: line.color, class: "point",
          "data-metric": metric });
        dot.append(svgEl("title", {}, `${clock(data.timestamps[i], withDay)} ${line.name} ${metric}: ${axisText(v, spec.unit)}`));
        svg.append(dot);
      });
    }
  }
  figure.querySelector("svg")?.remove();
  figure.querySelector("figcaption").after(svg);
}

function drawCharts() {
  const data = chartState.data;
  const box = document.getElementById("charts");
  if (!data || !box || box.offsetParent === null) return;  // hidden: drawn when shown
  const lines = linesOf(data);
  for (const spec of CHARTS) drawChart(document.getElementById(`chart-${spec.id}`), spec, data, lines);
  const legend = document.getElementById("chart-legend");
  legend.replaceChildren(...lines.map((line) => {
    const item = document.createElement("span");
    item.className = "legend-item";
    item.dataset.name = line.name;
    const swatch = document.createElement("i");
    swatch.style.background = line.color;
    item.append(swatch, line.name);
    return item;
  }));
  const span = data.bucket_seconds === 60 ? "1 minute" : `${data.bucket_seconds / 60} minutes`;
  document.getElementById("chart-note").textContent =
    `One point per ${span}; ${Object.keys(data.series).length} ${data.by === "route" ? "route(s)" : "model(s)"}.`;
}

async function loadCharts() {
  const query = new URLSearchParams({ window: chartState.window, by: chartState.by });
  chartState.data = await api(`series?${query}`);
  drawCharts();
}

function chartButtons(attr) {
  for (const button of document.querySelectorAll(`[data-${attr}]`)) {
    button.classList.toggle("active", button.dataset[attr] === chartState[attr]);
    button.setAttribute("aria-pressed", String(button.dataset[attr] === chartState[attr]));
  }
}

for (const attr of ["window", "by"]) {
  chartButtons(attr);
  for (const button of document.querySelectorAll(`[data-${attr}]`)) {
    button.addEventListener("click", () => {
      chartState[attr] = button.dataset[attr];
      chartButtons(attr);
      loadCharts().catch((error) => console.warn("charts", error.message));
    });
  }
}

let resizeFrame = 0;
new ResizeObserver(() => {
  cancelAnimationFrame(resizeFrame);
  resizeFrame = requestAnimationFrame(drawCharts);
}).observe(document.getElementById("charts"));
