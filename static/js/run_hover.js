// run_hover.js — the runs' tooltip (the few runs nearest the cursor, sorted by value, Δ% to a baseline) and the
// hovered run highlighted on every chart at once; shared by Scalars and Compare.
//
// Our own tooltip rather than Plotly's: Plotly's hover walks every point of every trace and cannot sort or cap its
// list, which on a sweep of 1,000 runs is slow and unreadable. Here a hover is one binary search per series.
import { axesOf } from "./canvas_lines.js";

export const TIP_MAX = 5; // runs listed besides pinned ones and the baseline (TensorBoard 2.21 shows the 5 nearest)
const NEAR_PX = 24; // a series whose points end this far left/right of the cursor is not at the hovered x

const charts = new Set(); // {plot, series: () => [{env, label, color, x, y, raw?, step?, wall?}], svg}
let tip = null;
let hovered = null; // env highlighted on every chart

/** Index of the x nearest to v in an ascending array (nulls are not expected here). */
export function nearestIndex(xs, v) {
  let lo = 0;
  let hi = xs.length - 1;
  if (hi < 0) return -1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < v) lo = mid;
    else hi = mid;
  }
  return Math.abs(xs[lo] - v) <= Math.abs(xs[hi] - v) ? lo : hi;
}

/**
 * Rows of the tooltip at plot-area pixel (px, py): the TIP_MAX series nearest the cursor's value, plus every
 * pinned series and the baseline's, sorted by value (highest first). Each row: {env, label, color, x, y, raw,
 * step, wall, delta (% to the baseline at that x, or null), near (the nearest of all)}.
 */
export function tipRows(series, ax, px, py, { pinned = new Set(), baseline = null } = {}) {
  const { xa, ya } = ax;
  const cx = xa.p2c(px);
  const at = [];
  for (const s of series) {
    const i = nearestIndex(s.x, cx);
    if (i < 0) continue;
    const sx = xa.c2p(s.x[i]);
    const y = s.y[i];
    if (Math.abs(sx - px) > NEAR_PX && (s.x[i] < cx ? i === s.x.length - 1 : i === 0)) continue; // ended before
    if (y === null || !Number.isFinite(y)) continue;
    const dy = Math.abs(ya.c2p(y) - py);
    at.push({ s, i, y, dy: Number.isFinite(dy) ? dy : Infinity });
  }
  if (!at.length) return [];
  at.sort((a, b) => a.dy - b.dy);
  const base = baseline === null ? null : at.find((r) => r.s.env === baseline);
  const keep = new Set(at.slice(0, TIP_MAX));
  for (const r of at) if (pinned.has(r.s.env) || r === base) keep.add(r);
  const near = at[0];
  const rows = [...keep].sort((a, b) => b.y - a.y).map((r) => ({
    env: r.s.env, label: r.s.label, color: r.s.color, x: r.s.x[r.i], y: r.y,
    raw: r.s.raw ? r.s.raw[r.i] : null, step: r.s.step ? r.s.step[r.i] : r.s.x[r.i],
    wall: r.s.wall ? r.s.wall[r.i] - r.s.wall[0] : null, pinned: pinned.has(r.s.env), baseline: r === base,
    delta: base && base.y !== 0 && r !== base ? ((r.y - base.y) / Math.abs(base.y)) * 100 : null, near: r === near,
  }));
  return rows;
}

const fmt = (v) => (v === null || v === undefined || !Number.isFinite(v) ? "–" : Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3)
  ? v.toExponential(3) : Number(v.toPrecision(4)).toString());
const fmtDelta = (d) => (d === null ? "" : `${d >= 0 ? "+" : ""}${Math.abs(d) >= 100 ? d.toFixed(0) : d.toFixed(1)}%`);

/** "5.2 s", "3m 4s", "1h 2m": a duration as TensorBoard's tooltip shows it. */
export function fmtRelative(sec) {
  if (sec === null || !Number.isFinite(sec)) return "";
  if (sec < 60) return `${sec.toFixed(1)} s`;
  const m = Math.floor(sec / 60);
  if (m < 60) return `${m}m ${Math.floor(sec % 60)}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

function cell(tag, cls, text) {
  const el = document.createElement(tag);
  el.className = cls;
  if (text !== undefined) el.textContent = text;
  return el;
}

function showTip(rows, clientX, clientY, { smoothed }) {
  if (!tip) {
    tip = cell("div", "run-tip");
    tip.setAttribute("role", "tooltip");
    document.body.append(tip);
  }
  const head = cell("div", "run-tip-head", `step ${fmt(rows[0].step)}`);
  const table = cell("table", "run-tip-rows");
  for (const r of rows) {
    const tr = cell("tr", `run-tip-row${r.near ? " near" : ""}${r.pinned ? " pinned" : ""}${r.baseline ? " baseline" : ""}`);
    tr.dataset.env = r.env;
    const sw = cell("span", "chip");
    sw.style.background = r.color;
    const name = cell("td", "tip-name");
    name.append(sw, document.createTextNode(` ${r.pinned ? "★ " : ""}${r.label}${r.baseline ? " (baseline)" : ""}`));
    tr.append(name, cell("td", "tip-val", fmt(r.y)));
    if (smoothed) tr.append(cell("td", "tip-raw", `value ${fmt(r.raw)}`));
    tr.append(cell("td", "tip-delta", fmtDelta(r.delta)), cell("td", "tip-time", fmtRelative(r.wall)));
    table.append(tr);
  }
  tip.replaceChildren(head, table);
  tip.hidden = false;
  // Beside the cursor, on the side with room.
  const w = tip.offsetWidth;
  const hgt = tip.offsetHeight;
  const left = clientX + 16 + w > window.innerWidth ? Math.max(4, clientX - 16 - w) : clientX + 16;
  const top = Math.min(Math.max(4, clientY - hgt / 2), window.innerHeight - hgt - 4);
  tip.style.left = `${left}px`;
  tip.style.top = `${top}px`;
}

function hideTip() {
  if (tip) tip.hidden = true;
}

/** Draw (or clear) the highlighted run's line over one chart: an SVG of our own, so no Plotly redraw is needed. */
function drawHighlight(c) {
  const ax = axesOf(c.plot);
  const s = hovered === null || !ax ? null : c.series().find((x) => x.env === hovered);
  c.plot.classList.toggle("hl-on", !!s); // the other runs fade (CSS), so the one stands out among hundreds
  if (!s) {
    if (c.svg) c.svg.replaceChildren();
    return;
  }
  if (!c.svg || !c.svg.isConnected) {
    c.svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    c.svg.setAttribute("class", "run-hl");
    c.plot.append(c.svg);
  }
  const { xa, ya, size } = ax;
  Object.assign(c.svg.style, { left: `${size.l}px`, top: `${size.t}px`, width: `${size.w}px`, height: `${size.h}px` });
  let d = "";
  let pen = "M";
  for (let i = 0; i < s.x.length; i++) {
    const y = s.y[i];
    if (y === null || !Number.isFinite(y) || s.x[i] === null) {
      pen = "M";
      continue;
    }
    const px = xa.c2p(s.x[i]);
    const py = ya.c2p(y);
    if (!Number.isFinite(px) || !Number.isFinite(py)) continue;
    d += `${pen}${px.toFixed(1)},${py.toFixed(1)}`;
    pen = "L";
  }
  const halo = document.createElementNS("http://www.w3.org/2000/svg", "path");
  halo.setAttribute("d", d);
  halo.setAttribute("class", "run-hl-halo");
  const line = halo.cloneNode();
  line.setAttribute("class", "run-hl-line");
  line.setAttribute("stroke", s.color);
  c.svg.replaceChildren(halo, line);
  c.svg.dataset.env = hovered;
}

/** Highlight one run (null: none) on every registered chart. */
export function highlightRun(env) {
  if (env === hovered) return;
  hovered = env;
  document.body.dataset.hoveredRun = env || "";
  for (const c of [...charts]) {
    if (!c.plot.isConnected) charts.delete(c);
    else drawHighlight(c);
  }
}

/** After a chart's redraw (new axes): its highlight follows. */
export function rehighlight(plot) {
  for (const c of charts) if (c.plot === plot) drawHighlight(c);
}

/**
 * Give a Plotly chart our tooltip and cross-chart highlight. series(): what it draws now ([] for a chart that keeps
 * Plotly's own hover); opts(): {pinned, baseline, smoothed}. Call once per plot element.
 */
export function attachHover(plot, series, opts = () => ({})) {
  const c = { plot, series, svg: null };
  charts.add(c);
  let frame = 0;
  let last = null;
  const move = () => {
    frame = 0;
    const ax = axesOf(plot);
    const drag = plot.querySelector(".nsewdrag");
    const list = series();
    if (!ax || !drag || !list.length) return;
    const r = drag.getBoundingClientRect();
    const px = last.clientX - r.left;
    const py = last.clientY - r.top;
    if (px < 0 || py < 0 || px > r.width || py > r.height) {
      hideTip();
      highlightRun(null);
      return;
    }
    const o = opts();
    const rows = tipRows(list, ax, px, py, o);
    if (!rows.length) {
      hideTip();
      highlightRun(null);
      return;
    }
    const near = rows.find((x) => x.near);
    showTip(rows, last.clientX, last.clientY, { smoothed: !!o.smoothed });
    highlightRun(near ? near.env : null);
    document.body.dataset.tipMs = String(performance.now() - last.t0);
  };
  plot.addEventListener("mousemove", (ev) => {
    last = { clientX: ev.clientX, clientY: ev.clientY, t0: performance.now() };
    if (!frame) frame = requestAnimationFrame(move);
  });
  plot.addEventListener("mouseleave", () => {
    // A move still waiting for its frame would bring back the run under the old position, after whatever the
    // cursor reached next (a row of the run list) has highlighted its own.
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    hideTip();
    highlightRun(null);
  });
  return c;
}
