// pages/scalars_charts.js — the Scalars view's charts: one card per tag, sectioned (user tags before hook groups),
// raw + smoothed lines in each run's own colour, drawn only when in view.
import { legendPlacement } from "../chart_prefs.js";
import { h, plotlyText } from "../dom.js";
import { boundsTrace, showLines } from "../canvas_lines.js";
import { DENSE_MIN, markDense, PACK_MIN, packSeries } from "../packed_traces.js";
import { loadPlotly } from "../plotly_loader.js";
import { styleSeries } from "../run_colors.js";
import { flatRange, robustRange, smooth } from "../smoothing.js";
import { cardTools } from "./scalars_card_tools.js";
import { attachHover, rehighlight } from "../run_hover.js";
import { bandInfo, bandTraces } from "./seed_groups.js";

// Charts the SDK's hooks log, told by their win prefix: drawn after the user's own metrics, under these names.
const HOOK_SECTIONS = [["sys_", "system"], ["model_", "model hooks"], ["data_", "data loader"]];
const CUSTOM = "custom: "; // custom-scalars charts (custom_scalars.js PREFIX): a section per category
const LEGEND_MAX = 12; // more series than this: the run list is the legend, and the tooltip shows the nearest one

/**
 * Section of a chart: a hook group by its win, else the tag's path prefix before the first "/" when that reads
 * as a path segment (no spaces: "disk I/O (MiB/s)" keeps its text), else the whole title.
 */
export function sectionOf(title, wins = []) {
  for (const [prefix, name] of HOOK_SECTIONS) if (wins.length && wins.every((w) => String(w).startsWith(prefix))) return name;
  const t = String(title);
  if (t.startsWith(CUSTOM)) return CUSTOM + sectionOf(t.slice(CUSTOM.length));
  const cut = t.indexOf("/");
  return cut > 0 && cut < t.length - 1 && !/\s/.test(t.slice(0, cut)) ? t.slice(0, cut) : t;
}

/** Sort key of a section: custom-scalars charts, then the user's tags, then the hooks' groups, each by name. */
export function sectionRank(name) {
  const hook = HOOK_SECTIONS.findIndex(([, n]) => n === name);
  return hook >= 0 ? `2${hook}` : name.startsWith(CUSTOM) ? `0${name}` : `1${name}`;
}

/** Seconds -> the unit a relative axis reads best in, by the longest span shown. */
function relUnit(span) {
  if (span < 120) return [1, "s"];
  if (span < 7200) return [60, "min"];
  return [3600, "h"];
}

/** A chart's card, not yet in the page (scalars_window.js places it); the caller observes it for lazy loading. */
export function chartCard(sc, chart) {
  const plot = h("div", { class: "xy-plot" });
  const card = h("section", { class: "card sc-card", dataset: { tag: chart.title } },
    h("header", { class: "card-bar" }, h("span", { class: "card-title", text: chart.title }),
      h("span", { class: "card-info" }), ...cardTools(plot, chart.title)), h("div", { class: "card-body" }, plot));
  Object.assign(chart, { card, plot, first: true });
  // Our tooltip (nearest runs sorted by value, Δ% to the baseline) on run charts; seed bands keep Plotly's.
  attachHover(plot, () => (chart.group ? [] : chart.tipSeries || []),
    () => ({ pinned: sc.sel.pinned, baseline: sc.sel.baseline, smoothed: true }));
}

/** Take a chart's card out for good (its chart goes); emptied sections go at the next layoutCards. */
export function removeCard(sc, chart) {
  if (!chart.card) return;
  sc.vis.unobserve(chart);
  if (window.Plotly && !chart.first) window.Plotly.purge(chart.plot);
  chart.card.remove();
  sc.plotted.delete(chart);
  chart.card = null;
}

/** Series of a chart in run order: [{...series, label, color, dash}]; one run's keys get distinct colours. */
function styled(sc, chart) {
  const order = new Map(sc.runs.map((r, i) => [r, i]));
  const list = [...chart.held.values()].filter((s) => sc.shownSet.has(s.env));
  // Stable: a run's series keep the server's order (its panes, then each pane's traces as logged).
  list.sort((a, b) => (order.get(a.env) - order.get(b.env)) || (a.part || 0) - (b.part || 0));
  return styleSeries(list).map((st, i) => ({ ...list[i], ...st }));
}

/** Plotly traces of one chart: per series the raw points faded underneath and the smoothed line on top. */
function tracesOf(sc, chart) {
  const { state } = sc;
  const series = styled(sc, chart);
  const out = [];
  let unit = [1, "s"];
  let noWalls = false;
  if (state.xmode === "relative") {
    let span = 0;
    for (const t of series) if (t.wall && t.wall.length) span = Math.max(span, t.wall[t.wall.length - 1] - t.wall[0]);
    unit = relUnit(span);
  }
  const packed = series.length >= PACK_MIN;
  const smooths = [];
  const tips = []; // what the tooltip and the highlight read: the drawn x and smoothed y, the raw value and step
  for (const t of series) {
    const ys = t.y;
    let xs = t.x;
    const w = t.wall && t.wall.length === ys.length ? t.wall : null;
    if (state.xmode !== "step" && !w) noWalls = true;
    else if (state.xmode === "relative") xs = w.map((v) => (v - w[0]) / unit[0]);
    else if (state.xmode === "wall") xs = w.map((v) => v * 1000);
    const sm = smooth(ys, state.smoothing);
    tips.push({ env: t.env, label: t.label, color: t.color, x: xs, y: sm, raw: ys, step: t.x, wall: w });
    if (packed) {
      smooths.push({ env: t.env, color: t.color, dash: t.dash, x: xs, y: sm });
      continue;
    }
    // A single point (an hparams metric, a final score) is invisible as a line: give it a marker.
    const mode = ys.length === 1 ? "lines+markers" : "lines";
    const base = { type: "scatter", mode, x: xs, connectgaps: false, legendgroup: t.env };
    out.push({ ...base, y: ys, name: plotlyText(`${t.label} (raw)`), showlegend: false, hoverinfo: "skip", opacity: 0.25,
      line: { width: 1, color: t.color, dash: t.dash }, meta: { env: t.env, win: t.win, role: "raw" } });
    out.push({ ...base, y: sm, name: plotlyText(String(t.label)), line: { width: 1.6, color: t.color, dash: t.dash },
      marker: { size: 7, color: t.color }, meta: { env: t.env, win: t.win, role: "smoothed" }, hoverinfo: "none" });
  }
  let lines = null;
  if (packed) {
    // A sweep: its lines are painted on a canvas (canvas_lines.js), one path per (colour, dash); Plotly draws the
    // axes around one invisible trace spanning them. No faded raw underlay: under hundreds of runs it is noise.
    lines = packSeries(smooths);
    out.push(boundsTrace(lines, state.logY));
  }
  const points = series.reduce((n, t) => n + t.y.length, 0);
  // The raw values the y range is taken from (read only when the range must be computed again).
  const raw = () => series.flatMap((t) => t.y);
  return { traces: out, lines, unit, noWalls, count: series.length, points, raw, tips };
}

/**
 * The outlier-robust y range of a chart's raw values, kept while the chart's points, the runs shown and the scale
 * stay the same: a smoothing change (the slider fires dozens) does not sort a sweep's values again.
 */
function yRange(sc, chart, raw) {
  const key = `${chart.version || 0}|${sc.shownSig}|${sc.state.logY}|${sc.state.outliers}`;
  if (chart.rangeKey !== key) {
    // Without outlier scaling Plotly autoscales, except a flat chart: it is centred on its value (flatRange).
    chart.range = (sc.state.outliers ? robustRange : flatRange)(raw(), sc.state.logY);
    chart.rangeKey = key;
  }
  return chart.range;
}

function layoutOf(state, unit, { count, width, range = null, bands = false, names = [] }) {
  const yaxis = { type: state.logY ? "log" : "linear", automargin: true, gridcolor: "#eceef1" };
  if (range) yaxis.range = range;
  else yaxis.autorange = true;
  const xtitle = { step: "step", relative: `relative (${unit[1]})`, wall: "wall time" }[state.xmode];
  // The legend sits outside the plot area: at the right of a wide chart with short names, else under it.
  const legend = legendPlacement(width, names);
  const many = count > LEGEND_MAX;
  return {
    // Groups are named by the legend above the charts (seed_groups.js groupLegend), not once more in each chart.
    autosize: true, margin: { l: 48, r: 10, t: 8, b: 36 }, font: { size: 11 }, showlegend: !many && !bands, legend,
    // Run charts: run_hover.js's tooltip, not Plotly's (which would walk every point of a sweep per move).
    hovermode: bands ? (many ? "closest" : "x unified") : false, hoverlabel: { font: { size: 11 } },
    xaxis: { type: state.xmode === "wall" ? "date" : "linear", title: { text: xtitle, standoff: 4 }, automargin: true,
      gridcolor: "#eceef1" },
    yaxis,
    // Zoom survives live refreshes, but a new axis mode or scale starts from the computed ranges again.
    uirevision: `${state.xmode}|${state.logY}|${state.outliers}`,
  };
}

/** Draw a chart from what it holds (no read); charts out of view are drawn when they come into view. */
export async function drawChart(sc, chart) {
  if (!chart.card || !chart.card.isConnected) return;
  if (!chart.visible) {
    chart.stale = true;
    return;
  }
  chart.stale = false;
  const Plotly = await loadPlotly();
  let drawn;
  const width = chart.plot.clientWidth || 600;
  const { smoothing } = sc.state; // the one this draw uses (a slider drag may change it while Plotly draws)
  if (chart.group) {
    // Seed groups are aligned on steps: the axis is the step whatever the picker says.
    const traces = bandTraces(sc.groupRes, chart.group, (ys) => smooth(ys, smoothing));
    chart.card.querySelector(".card-info").textContent = bandInfo(sc.groupRes, chart.group);
    const st = { ...sc.state, xmode: "step", outliers: false };
    drawn = { traces, layout: layoutOf(st, [1, "s"], { count: chart.group.groups.length, width, bands: true,
      names: traces.filter((t) => t.showlegend !== false).map((t) => t.name) }) };
    chart.tipSeries = [];
  } else {
    const { traces, lines, unit, noWalls, count, points, raw, tips } = tracesOf(sc, chart);
    chart.tipSeries = tips;
    chart.card.querySelector(".card-info").textContent = noWalls ? "no wall times: step axis" : `${count} series`;
    const range = yRange(sc, chart, raw);
    drawn = { traces, lines, count, points, layout: layoutOf(sc.state, unit, { count, width, range,
      names: traces.filter((t) => t.showlegend !== false).map((t) => t.name) }) };
  }
  // Plotly's camera button would picture the axes without a sweep's canvas lines: the card's own button does both.
  const config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["toImage"] };
  if (chart.first) await Plotly.newPlot(chart.plot, drawn.traces, drawn.layout, config);
  else await Plotly.react(chart.plot, drawn.traces, drawn.layout, config);
  chart.first = false;
  showLines(chart.plot, drawn.lines || null, { dense: (drawn.count || 0) >= DENSE_MIN });
  markDense(chart.plot, chart.group ? 0 : drawn.count);
  rehighlight(chart.plot);
  // What this draw shows, set once it is on screen: tests and the bench wait for these.
  chart.card.dataset.smoothing = String(smoothing);
  chart.card.dataset.grouped = chart.group ? "1" : "";
  // Points drawn (a series' raw and smoothed lines count once).
  chart.card.dataset.points = String(drawn.points ?? drawn.traces.reduce((n, t) => n + t.x.length, 0));
  chart.card.dataset.series = String(chart.group ? chart.group.groups.length : drawn.count); // drawn, not pending
  chart.drawnFor = drawKey(sc, chart);
  chart.card.dataset.drawn = String((Number(chart.card.dataset.drawn) || 0) + 1);
  sc.onPlotted(chart);
}

/** What a chart's last draw showed: its points, the runs shown, and the last redraw() (any option or style change). */
const drawKey = (sc, chart) => `${chart.version || 0}|${sc.drawGen || 0}|${chart.group ? "g" : ""}|${sc.shownSig}`;

/**
 * Whether a chart must be drawn after a read: not when the read brought nothing and the chart already shows these
 * runs (a run search draws at once from what the charts hold; the reads that follow it find nothing new, and a
 * second draw of a sweep's charts cost as much as the first).
 */
export const needsDraw = (sc, chart) => chart.stale || chart.first || chart.drawnFor !== drawKey(sc, chart);

/** Re-draw the charts in view from what they hold (smoothing, axis and scale changes need no read). */
export function redraw(sc) {
  sc.drawGen = (sc.drawGen || 0) + 1;
  // A slider drag fires dozens of changes: while one redraw runs, the others fold into one more, which draws
  // the latest state (not a queue of stale ones, each seconds long on a sweep).
  if (sc.redrawQueued) return sc.drawing;
  sc.redrawQueued = true;
  sc.drawing = sc.drawing.then(async () => {
    sc.redrawQueued = false;
    for (const chart of sc.charts.values()) if (chart.loaded) await drawChart(sc, chart);
    sc.layout();
  }).catch((err) => sc.notice(`cannot draw: ${err.message}`, "error"));
  return sc.drawing;
}
