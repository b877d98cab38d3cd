// panes/histogram.js — histogram panes as TensorBoard draws them: OFFSET ridgelines by step, OVERLAY by recency, DISTRIBUTION bands.
import { loadPlotly } from "../plotly_loader.js";
import { isDark } from "../theme.js";
import { counted } from "../dom.js";

const BINS = 30; // TensorBoard's DEFAULT_BIN_COUNT: every step re-binned to 30 equal bins over the union range
const MODES = [["offset", "Offset"], ["overlay", "Overlay"], ["distribution", "Distribution"]];
const CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
const BAND = "31, 119, 180"; // distribution bands: one hue, nested bands darker towards the median

/** Union [lo, hi] of every histogram's buckets; a single value gets a unit-wide range (bins need a width). */
export function unionRange(hists) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const hst of hists) {
    for (const [l, r] of hst.buckets || []) {
      if (Number.isFinite(l)) lo = Math.min(lo, l);
      if (Number.isFinite(r)) hi = Math.max(hi, r);
    }
  }
  if (!(lo <= hi)) return [0, 1];
  if (lo === hi) return [lo - 0.5, hi + 0.5];
  return [lo, hi];
}

/**
 * Counts of `buckets` ([[left, right, count], ...]) re-binned into `n` equal bins over [lo, hi]: each bucket's count
 * is spread over the bins it overlaps in proportion to the overlap (a zero-width bucket goes whole to its bin).
 */
export function rebin(buckets, lo, hi, n = BINS) {
  const out = new Array(n).fill(0);
  const width = (hi - lo) / n;
  const binOf = (v) => Math.min(n - 1, Math.max(0, Math.floor((v - lo) / width)));
  for (const [l, r, c] of buckets || []) {
    if (!Number.isFinite(c) || c === 0 || !Number.isFinite(l) || !Number.isFinite(r)) continue;
    if (r <= l) {
      out[binOf(l)] += c;
      continue;
    }
    for (let i = binOf(l); i <= binOf(r) && i < n; i += 1) {
      const a = Math.max(l, lo + i * width);
      const b = Math.min(r, lo + (i + 1) * width);
      if (b > a) out[i] += (c * (b - a)) / (r - l);
    }
  }
  return out;
}

/** Colour of step k of n by recency (TensorBoard's overlay): light and pale for the oldest, dark for the newest. */
function recency(k, n) {
  const t = n > 1 ? k / (n - 1) : 1;
  const mix = (a, b) => Math.round(a + (b - a) * t);
  return `rgb(${mix(198, 8)}, ${mix(219, 48)}, ${mix(239, 107)})`;
}

function baseLayout(xTitle, yTitle) {
  const axis = (title) => ({ title: { text: title, standoff: 4 }, automargin: true, gridcolor: "#eceef1", zeroline: false });
  return {
    autosize: true, margin: { l: 48, r: 10, t: 8, b: 34 }, font: { size: 11 }, showlegend: false, hovermode: "closest",
    xaxis: axis(xTitle), yaxis: axis(yTitle),
  };
}

/** Re-binned histograms of every returned step, oldest first: {step, wall, x (bin centres), counts}. */
function binned(hists) {
  const [lo, hi] = unionRange(hists);
  const w = (hi - lo) / BINS;
  const x = Array.from({ length: BINS }, (_, i) => lo + (i + 0.5) * w);
  return { lo, hi, rows: hists.map((hst) => ({ step: hst.step, wall: hst.wall, x, counts: rebin(hst.buckets, lo, hi) })) };
}

/** OFFSET: one ridgeline per step on a depth axis of steps (oldest at the back/top, newest in front). */
function offsetFigure(hists) {
  const { lo, hi, rows } = binned(hists);
  const steps = rows.map((r) => r.step);
  const span = Math.max(...steps) - Math.min(...steps);
  const maxCount = Math.max(1e-12, ...rows.flatMap((r) => r.counts));
  // A ridge as high as ~2.5 step gaps: neighbours overlap a little, as in TensorBoard's offset view.
  const gap = rows.length > 1 && span > 0 ? span / (rows.length - 1) : 1;
  const k = (2.5 * gap) / maxCount;
  const traces = rows.map((r, i) => ({
    type: "scatter", mode: "lines", name: `step ${r.step}`,
    x: [lo, ...r.x, hi], y: [r.step, ...r.counts.map((c) => r.step - c * k), r.step],
    customdata: [0, ...r.counts, 0], hovertemplate: `step ${r.step}<br>%{x:.4g}: %{customdata:.4g}<extra></extra>`,
    fill: "toself", fillcolor: isDark() ? "rgba(22,27,34,0.85)" : "rgba(255,255,255,0.85)", line: { width: 1.2, color: recency(i, rows.length) },
    meta: { mode: "offset", step: r.step },
  }));
  const layout = baseLayout("value", "step");
  layout.yaxis.autorange = "reversed"; // later steps lower, in front: each ridge rises towards the older ones
  // The depth axis is made of steps, but ridges rise above the first one: label the real steps only (2 steps 0 and
  // 100 would otherwise read -150...100).
  const every = Math.ceil(steps.length / 8);
  const ticks = steps.filter((_, i) => i % every === 0 || i === steps.length - 1);
  Object.assign(layout.yaxis, { tickmode: "array", tickvals: ticks, ticktext: ticks.map((v) => String(v)) });
  return { traces, layout };
}

/** OVERLAY: every step on one baseline, coloured by recency (newest drawn last, on top). */
function overlayFigure(hists) {
  const { rows } = binned(hists);
  const traces = rows.map((r, i) => ({
    type: "scatter", mode: "lines", name: `step ${r.step}`, x: r.x, y: r.counts,
    hovertemplate: `step ${r.step}<br>%{x:.4g}: %{y:.4g}<extra></extra>`,
    line: { width: 1.2, color: recency(i, rows.length), shape: "linear" }, meta: { mode: "overlay", step: r.step },
  }));
  return { traces, layout: baseLayout("value", "count") };
}

/** DISTRIBUTION: nested bands min..max, ±1.5σ, ±1σ, ±0.5σ around the median line, over steps. */
function distributionFigure(dist) {
  const x = dist.map((d) => d.step);
  const q = (j) => dist.map((d) => (Array.isArray(d.q) ? d.q[j] : null));
  const names = ["min/max", "±1.5σ", "±1σ", "±0.5σ"];
  const traces = [];
  for (let j = 0; j < 4; j += 1) {
    const alpha = 0.15 + 0.15 * j;
    const common = { type: "scatter", mode: "lines", x, line: { width: 0, color: `rgb(${BAND})` }, hoverinfo: "skip" };
    traces.push({ ...common, y: q(j), name: `${names[j]} low`, meta: { mode: "distribution", band: j, edge: "low" } });
    traces.push({ ...common, y: q(8 - j), name: names[j], fill: "tonexty", fillcolor: `rgba(${BAND}, ${alpha})`,
      meta: { mode: "distribution", band: j, edge: "high" } });
  }
  traces.push({ type: "scatter", mode: "lines", x, y: q(4), name: "median", line: { width: 1.5, color: `rgb(${BAND})` },
    hovertemplate: "step %{x}<br>median %{y:.4g}<extra></extra>", meta: { mode: "distribution", band: 4, edge: "median" } });
  return { traces, layout: baseLayout("step", "value") };
}

export function render(el, pane, ctx) {
  let mode = "offset";
  const bar = document.createElement("div");
  bar.className = "hist-modes";
  const buttons = MODES.map(([value, label]) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "btn-small hist-mode";
    b.dataset.mode = value;
    b.textContent = label;
    b.addEventListener("click", () => {
      mode = value;
      draw().catch((err) => ctx.setInfo("render failed", err && err.message));
    });
    bar.appendChild(b);
    return b;
  });
  const div = document.createElement("div");
  div.className = "stepped-plot hist-plot";
  const wrap = document.createElement("div");
  wrap.className = "stepped-pane"; // a flex column: the plot takes the card's height left by the mode buttons
  wrap.append(bar, div);
  el.append(wrap);
  let first = true;
  let destroyed = false;

  async function draw() {
    const Plotly = await loadPlotly();
    if (destroyed) return;
    const d = pane.data || {};
    const hists = Array.isArray(d.histograms) ? d.histograms : [];
    const dist = Array.isArray(d.distribution) ? d.distribution : [];
    const fig = mode === "distribution" ? distributionFigure(dist)
      : mode === "overlay" ? overlayFigure(hists) : offsetFigure(hists);
    fig.layout.uirevision = mode; // zoom kept across live refreshes, reset when the mode changes
    for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
    div.dataset.mode = mode;
    if (first) await Plotly.newPlot(div, fig.traces, fig.layout, CONFIG);
    else await Plotly.react(div, fig.traces, fig.layout, CONFIG);
    first = false;
    const n = Number(d.count) || 0;
    const shown = mode === "distribution" ? dist.length : hists.length;
    ctx.setInfo(counted(n, "step"), shown < n ? `${shown} of ${counted(n, "step")} shown` : "");
  }

  return {
    ready: draw(),
    update(p) {
      pane = p;
      return draw();
    },
    extend: () => ctx.refetch(), // records arrive as `pane` messages; anything else: refetch
    destroy() {
      destroyed = true;
      if (window.Plotly) window.Plotly.purge(div);
      wrap.remove();
    },
  };
}
