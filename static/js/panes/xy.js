// panes/xy.js — line/scatter panes: Plotly "scatter" traces; live points go through Plotly.extendTraces, never a re-plot.
import { getPane } from "../api.js";
import { plotlyText } from "../dom.js";
import { loadPlotly } from "../plotly_loader.js";
import { defaultMode, mathReady, normalizeLayout, normalizeTrace } from "./plotly_compat.js";
import { counted } from "../dom.js";
import { checkpointShapes, onCheckpoints } from "../checkpoints.js";
import { flatRange } from "../smoothing.js";
import { legendPlacement, onSmoothing, smoothingOf } from "../chart_prefs.js";
import { rawTraces, resmooth, withSmoothed } from "./xy_smooth.js";

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
const GRID = "#eceef1";
const CONFIG = {
  responsive: true,
  displaylogo: false,
  modeBarButtonsToRemove: ["select2d", "lasso2d"],
};

const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Plotly trace for one data.traces entry: x/y/name plus its style (mode, line, marker ...) merged in. */
function plotlyTrace(t, i, pane) {
  const opts = pane.opts || {};
  const legend = Array.isArray(opts.legend) ? opts.legend : [];
  const scatter = pane.kind === "scatter";
  const tr = {
    type: "scatter",
    x: Array.isArray(t.x) ? t.x : [],
    y: Array.isArray(t.y) ? t.y : [],
    mode: scatter ? "markers" : opts.markers ? "lines+markers" : "lines",
    connectgaps: false, // null y values are gaps
    line: { width: 1.5 },
    marker: { size: scatter ? 5 : 4 },
  };
  const name = t.name ?? legend[i];
  if (name !== undefined && name !== null) tr.name = String(name);
  if (isObj(t.style)) {
    const style = normalizeTrace(t.style);
    // A raw Plotly trace (it names its type) without a mode gets plotly's default, as Visdom's plotly drew it.
    if (style.type !== undefined && style.mode === undefined) tr.mode = defaultMode(Number.isFinite(t.total) ? t.total : tr.y.length);
    for (const [k, v] of Object.entries(style)) {
      if (k === "x" || k === "y" || k === "type" || k === "visdom_ints") continue; // data comes from the pane; always SVG scatter
      tr[k] = isObj(v) && isObj(tr[k]) ? { ...tr[k], ...v } : v;
    }
  }
  if (tr.name !== undefined && tr.name !== null) tr.name = plotlyText(tr.name); // a name is text, never a link
  // A lone point draws no line: it gets a marker (Plotly shows nothing for a one-point line), whatever the style says.
  if (tr.mode === "lines" && tr.y.length === 1) tr.mode = "lines+markers";
  return tr;
}

function plotlyLayout(pane, ntraces, { width = 600, names = [] } = {}) {
  const o = pane.opts || {};
  const axis = (label, type) => ({
    title: { text: label === undefined || label === null ? "" : plotlyText(label), standoff: 6 },
    type: type === "log" ? "log" : "-",
    automargin: true,
    gridcolor: GRID,
    zerolinecolor: "#d0d4da",
    linecolor: "#c4c9d0",
    ticks: "outside",
    ticklen: 3,
    tickcolor: "#c4c9d0",
  });
  const layout = {
    autosize: true,
    // The pane title is in the card's title bar; the plot itself keeps all its height for data.
    margin: { l: 44, r: 10, t: 8, b: 32, pad: 0 },
    font: { family: FONT, size: 11, color: "#24292f" },
    paper_bgcolor: "#fff",
    plot_bgcolor: "#fff",
    xaxis: axis(o.xlabel, o.xtype),
    yaxis: axis(o.ylabel, o.ytype),
    showlegend: ntraces > 1 || !!o.showlegend,
    legend: legendPlacement(width, names), // Scalars' and Compare's placement: long names go under the plot
    hovermode: "closest",
    hoverlabel: { font: { family: FONT, size: 11 } },
    uirevision: "keep", // keep the user's zoom and legend toggles across re-renders
  };
  // A Visdom window's own Plotly layout (axis ranges, ticks, log axes, legend place, shapes): merged over
  // ours, except what the card decides (title bar, size, compact margins).
  const stored = o.plotly_layout;
  if (isObj(stored)) {
    for (const [k, v] of Object.entries(normalizeLayout(stored))) {
      if (["title", "width", "height", "margin", "autosize", "uirevision"].includes(k)) continue;
      const mine = layout[k];
      const both = v && typeof v === "object" && !Array.isArray(v) && mine && typeof mine === "object";
      layout[k] = both ? { ...mine, ...v } : v;
    }
  }
  return layout;
}

const sameRange = (a, b) => !!a && !!b && a[0] === b[0] && a[1] === b[1];

export function render(el, pane, ctx) {
  const div = document.createElement("div");
  div.className = "xy-plot";
  el.appendChild(div);

  let idxPos = new Map(); // server trace idx -> position in div.data
  let stored = 0; // points the server holds for this pane (sum of traces' total) + points extended since
  let destroyed = false;
  let zoom = null; // [x0, x1] while zoomed in: the pane shows the server's full-budget read of that range
  let zoomSeq = 0; // discards detail reads overtaken by a newer zoom
  let xMap = null; // {map(x), label}: another x axis (e.g. epoch for a step-indexed metric), or null for x as stored
  let flat = null; // the y range a constant series is drawn on, or null while Plotly autoscales

  /** Zoom-aware detail: a new x-range refetches that range at the full point budget; autoscale restores the overview. */
  function onRelayout(ev) {
    if (!ev || destroyed || xMap) return; // mapped x (epochs): the server's reads are by stored x, so no detail

    let a = ev["xaxis.range[0]"], b = ev["xaxis.range[1]"];
    if (Array.isArray(ev["xaxis.range"])) [a, b] = ev["xaxis.range"];
    if (ev["xaxis.autorange"] === true) {
      if (!zoom) return;
      zoom = null;
      zoomSeq += 1;
      delete div.dataset.zoom;
      ctx.refetch();
    } else if (typeof a === "number" && typeof b === "number" && Number.isFinite(a) && Number.isFinite(b)) {
      zoom = [Math.min(a, b), Math.max(a, b)];
      detail().catch((err) => ctx.setInfo("zoom read failed", err && err.message));
    }
  }

  async function detail() {
    const seq = ++zoomSeq;
    const [x0, x1] = zoom;
    const p = await getPane(ctx.env, ctx.win, ctx.points, { x0, x1 });
    if (destroyed || seq !== zoomSeq) return;
    await draw(p, false);
    div.dataset.zoom = `${x0},${x1}`;
    div.dataset.detail = String(seq);
  }

  function report() {
    const shown = rawTraces(div.data).reduce((n, d) => n + (d.x ? d.x.length : 0), 0);
    ctx.setPoints(shown);
    const tip = shown < stored ? `${shown.toLocaleString()} of ${counted(stored, "point")} shown (downsampled)` : "";
    ctx.setInfo(`${stored.toLocaleString()} pts${shown < stored ? " ↓" : ""}`, tip);
  }

  async function draw(p, first) {
    const Plotly = await loadPlotly();
    if (destroyed) return;
    const src = (p.data && Array.isArray(p.data.traces)) ? p.data.traces : [];
    const raw = src.map((t, i) => plotlyTrace(t, i, p));
    if (xMap) for (const tr of raw) tr.x = tr.x.map(xMap.map);
    // Line panes follow the smoothing chosen on any page (none until one is chosen: a Visdom pane stays as drawn).
    const weight = p.kind === "line" ? smoothingOf(0) : 0;
    const traces = weight > 0 ? withSmoothed(raw, weight) : raw;
    idxPos = new Map(src.map((t, i) => [Number.isInteger(t.idx) ? t.idx : i, i]));
    stored = src.reduce((n, t, i) => n + (Number.isFinite(t.total) ? t.total : raw[i].x.length), 0);
    const o = p.opts || {};
    await mathReady({ x: o.xlabel, y: o.ylabel, layout: o.plotly_layout }, traces);
    if (destroyed) return;
    const layout = plotlyLayout(p, raw.length, { width: div.clientWidth || 600, names: raw.map((t) => t.name ?? "") });
    // A constant series is drawn around its value (TensorBoard's axis), unless the window fixes its own y range.
    const own = isObj(o.plotly_layout) && isObj(o.plotly_layout.yaxis) && o.plotly_layout.yaxis.range !== undefined;
    flat = own ? null : flatRange(traces.flatMap((t) => t.y), layout.yaxis.type === "log");
    if (flat) layout.yaxis.range = flat;
    div.dataset.flatY = flat ? "1" : "";
    if (xMap) layout.xaxis.title.text = xMap.label;
    else layout.shapes = withCheckpoints(layout.shapes);
    const h = Number(p.opts && p.opts.height); // Visdom's opts.height, in pixels
    div.style.height = h >= 120 && h <= 1200 ? `${h}px` : "";
    if (first) {
      await Plotly.newPlot(div, traces, layout, CONFIG);
      div.on("plotly_relayout", onRelayout);
    } else await Plotly.react(div, traces, layout, CONFIG);
    report();
  }

  async function extend(msg) {
    const Plotly = window.Plotly;
    if (destroyed || !Plotly || !div.data) return;
    const xs = [];
    const ys = [];
    const pos = [];
    for (const t of msg.traces || []) {
      const i = idxPos.get(t.idx);
      if (i === undefined || i >= div.data.length) {
        ctx.refetch(); // a new trace: the fetched pane brings its name and style
        return;
      }
      const y = Array.isArray(t.y) ? t.y : [];
      const x = Array.isArray(t.x) && t.x.length === y.length ? t.x : y.map((_, k) => div.data[i].x.length + k);
      if (!y.length) continue;
      xs.push(xMap ? x.map(xMap.map) : x);
      ys.push(y);
      pos.push(i);
      stored += y.length;
    }
    if (!pos.length) return;
    await Plotly.extendTraces(div, { x: xs, y: ys }, pos);
    await resmooth(Plotly, div, pos);
    report();
    // A constant series that stops being constant is drawn again, autoscaled (or centred on its new value).
    if (flat && !sameRange(flatRange(div.data.flatMap((d) => d.y || []), div.layout.yaxis.type === "log"), flat)) {
      ctx.refetch();
      return;
    }
    // Keep the browser bounded: past ~4x the budget, refetch the pane downsampled by the server.
    const longest = rawTraces(div.data).reduce((n, d) => Math.max(n, d.x ? d.x.length : 0), 0);
    if (longest > 4 * ctx.points) ctx.refetch();
  }

  /** A line pane's own shapes plus its run's checkpoint steps (x as stored: a mapped axis shows none). */
  function withCheckpoints(shapes) {
    const own = (shapes || []).filter((s) => s.name !== "checkpoint");
    return pane.kind === "line" ? [...own, ...checkpointShapes(ctx.env)] : shapes;
  }
  const unsmoothing = pane.kind === "line" ? onSmoothing(() => { if (!destroyed) ctx.refetch(); }) : () => {};
  const unsubscribe = onCheckpoints((env) => {
    if (env !== ctx.env || destroyed || xMap || !div.data || !window.Plotly) return;
    window.Plotly.relayout(div, { shapes: withCheckpoints(div.layout.shapes) });
  });

  /** Draw against another x axis ({map(x), label}), or as stored with null; live points follow it. */
  function setXMap(next) {
    xMap = next;
    zoom = null;
    ctx.refetch(); // the current points, live ones included, drawn against the new axis
  }

  return {
    ready: draw(pane, true),
    setXMap,
    xMapped: () => xMap !== null,
    update: (p) => (zoom ? detail() : draw(p, false)), // zoomed in: refresh the detail, not the overview
    extend,
    destroy() {
      destroyed = true;
      unsubscribe();
      unsmoothing();
      if (window.Plotly) window.Plotly.purge(div);
      div.remove();
    },
  };
}
