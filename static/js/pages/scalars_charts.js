// pages/scalars_charts.js — the Scalars view's charts: one card per tag, sectioned by prefix, raw + smoothed lines.
import { h, plotlyText } from "../dom.js";
import { loadPlotly } from "../plotly_loader.js";
import { regexError, regexMatcher, robustRange, smooth } from "../smoothing.js";
import { colorOf, shownRuns } from "./scalars_controls.js";
import { cardTools } from "./scalars_card_tools.js";
import { HOVER_LAYOUT, hoverFields } from "./scalars_hover.js";
import { bandInfo, bandTraces } from "./seed_groups.js";

/** Section of a tag: the text before its first "/" (a tag without one is its own section). */
export const sectionOf = (tag) => String(tag).split("/")[0];

/** Seconds -> the unit a relative axis reads best in, by the longest span shown. */
function relUnit(span) {
  if (span < 120) return [1, "s"];
  if (span < 7200) return [60, "min"];
  return [3600, "h"];
}

function sectionEl(sc, name) {
  let s = sc.secs.get(name);
  if (!s) {
    const body = h("div", { class: "grid sc-grid" });
    const el = h("section", { class: "sc-section", dataset: { section: name } },
      h("h2", { class: "sc-section-title", text: name }), body);
    const after = [...sc.secs.keys()].sort().find((k) => k > name);
    sc.sections.insertBefore(el, after ? sc.secs.get(after).el : null); // sections in name order
    s = { el, body };
    sc.secs.set(name, s);
  }
  return s;
}

/** Plotly traces of one tag: per series the raw points faded underneath and the smoothed line on top. */
function tracesOf(sc, pane) {
  const { state } = sc;
  const out = [];
  let unit = [1, "s"];
  let noWalls = false;
  if (state.xmode === "relative") {
    let span = 0;
    for (const t of pane.traces) {
      const w = t.wall || [];
      if (w.length) span = Math.max(span, w[w.length - 1] - w[0]);
    }
    unit = relUnit(span);
  }
  for (const t of pane.traces) {
    const ys = Array.isArray(t.y) ? t.y : [];
    let xs = Array.isArray(t.x) ? t.x : [];
    const w = Array.isArray(t.wall) && t.wall.length === ys.length ? t.wall : null;
    if (state.xmode !== "step" && !w) noWalls = true;
    else if (state.xmode === "relative") xs = w.map((v) => (v - w[0]) / unit[0]);
    else if (state.xmode === "wall") xs = w.map((v) => v * 1000);
    const color = colorOf(sc, t.env);
    // A single point (an hparams metric, a final score) is invisible as a line: give it a marker.
    const mode = ys.length === 1 ? "lines+markers" : "lines";
    const base = { type: "scatter", mode, x: xs, connectgaps: false, legendgroup: t.env };
    out.push({ ...base, y: ys, name: plotlyText(`${t.label} (raw)`), showlegend: false, hoverinfo: "skip", opacity: 0.25,
      line: { width: 1, color }, meta: { env: t.env, win: t.win, role: "raw" } });
    out.push({ ...base, y: smooth(ys, state.smoothing), name: plotlyText(t.label), line: { width: 1.6, color },
      marker: { size: 7, color }, meta: { env: t.env, win: t.win, role: "smoothed" },
      ...hoverFields(t.label, ys, Array.isArray(t.x) ? t.x : [], w) });
  }
  return { traces: out, unit, noWalls };
}

function layoutOf(state, traces, unit) {
  const yaxis = { type: state.logY ? "log" : "linear", automargin: true, gridcolor: "#eceef1" };
  if (state.outliers) {
    const vals = traces.filter((t) => t.meta.role === "raw").flatMap((t) => t.y);
    const r = robustRange(vals, state.logY);
    if (r) yaxis.range = r;
    else yaxis.autorange = true;
  } else yaxis.autorange = true;
  const xtitle = { step: "step", relative: `relative (${unit[1]})`, wall: "wall time" }[state.xmode];
  return {
    autosize: true, margin: { l: 48, r: 10, t: 8, b: 36 }, font: { size: 11 }, showlegend: true,
    legend: { orientation: "h", y: 1.02, yanchor: "bottom", font: { size: 10 } }, ...HOVER_LAYOUT,
    xaxis: { type: state.xmode === "wall" ? "date" : "linear", title: { text: xtitle, standoff: 4 }, automargin: true,
      gridcolor: "#eceef1" },
    yaxis,
    // Zoom survives live refreshes, but a new axis mode or scale starts from the computed ranges again.
    uirevision: `${state.xmode}|${state.logY}|${state.outliers}`,
  };
}

async function drawCard(sc, pane) {
  const Plotly = await loadPlotly();
  let c = sc.cards.get(pane.title);
  if (!c) {
    const plot = h("div", { class: "xy-plot" });
    const card = h("section", { class: "card sc-card", dataset: { tag: pane.title } },
      h("header", { class: "card-bar" }, h("span", { class: "card-title", text: pane.title }),
        h("span", { class: "card-info" }), ...cardTools(plot, pane.title)), h("div", { class: "card-body" }, plot));
    sectionEl(sc, sectionOf(pane.title)).body.append(card);
    c = { card, plot, first: true };
    sc.cards.set(pane.title, c);
  }
  let drawn;
  if (pane.group) {
    // Seed groups are aligned on steps: the axis is the step whatever the picker says.
    const traces = bandTraces(sc.groupRes, pane.group, (ys) => smooth(ys, sc.state.smoothing));
    c.card.querySelector(".card-info").textContent = bandInfo(sc.groupRes, pane.group);
    drawn = { traces, layout: layoutOf({ ...sc.state, xmode: "step", outliers: false }, traces, [1, "s"]) };
  } else {
    const { traces, unit, noWalls } = tracesOf(sc, pane);
    c.card.querySelector(".card-info").textContent = noWalls ? "no wall times: step axis" : `${pane.traces.length} series`;
    drawn = { traces, layout: layoutOf(sc.state, traces, unit) };
  }
  c.card.dataset.smoothing = String(sc.state.smoothing);
  c.card.dataset.grouped = pane.group ? "1" : "";
  const config = { responsive: true, displaylogo: false };
  if (c.first) await Plotly.newPlot(c.plot, drawn.traces, drawn.layout, config);
  else await Plotly.react(c.plot, drawn.traces, drawn.layout, config);
  c.first = false;
}

/** Re-draw every chart from the last read (smoothing, axis and scale changes need no refetch). */
export function redraw(sc) {
  sc.drawing = sc.drawing.then(async () => {
    const panes = (sc.res.panes || []).filter((p) => p.kind === "line");
    const seen = new Set(panes.map((p) => p.title));
    for (const [tag, c] of [...sc.cards]) {
      if (seen.has(tag)) continue;
      if (window.Plotly) window.Plotly.purge(c.plot);
      c.card.remove();
      sc.cards.delete(tag);
    }
    for (const p of panes) await drawCard(sc, p);
    for (const [name, s] of [...sc.secs]) {
      if (s.body.children.length) continue;
      s.el.remove();
      sc.secs.delete(name);
    }
    applyTagFilter(sc);
  }).catch((err) => sc.notice(`cannot draw: ${err.message}`, "error"));
  return sc.drawing;
}

/** Hide the charts (and emptied sections) missing the tag regex; say why nothing shows, if nothing does. */
export function applyTagFilter(sc) {
  const bad = regexError(sc.tagFilter.value.trim());
  sc.tagFilter.toggleAttribute("aria-invalid", !!bad);
  const m = regexMatcher(sc.tagFilter.value.trim());
  let shown = 0;
  for (const [tag, c] of sc.cards) {
    c.card.hidden = !m(tag);
    if (!c.card.hidden) shown += 1;
  }
  for (const s of sc.secs.values()) s.el.hidden = ![...s.body.children].some((el) => !el.hidden);
  const none = !shownRuns(sc).length ? "No runs picked: tick runs on the left (or clear the run filter)."
    : !sc.cards.size ? "No line charts in the picked runs." : bad ? `Invalid regex: ${bad}`
      : !shown ? "No tags match the filter." : "";
  sc.empty.textContent = none;
  sc.empty.hidden = !none;
  document.body.dataset.scalarsTags = String(shown);
}
