// panes/xy_smooth.js — a line pane's smoothed lines (the shared smoothing setting, chart_prefs.js): the raw line
// fades underneath, the smoothed one is drawn on top in its colour, and live points re-smooth only their traces.
import { smooth } from "../smoothing.js";

const COLORWAY = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

const isSmoothed = (t) => !!(t && t.meta && t.meta.role === "smoothed");

/** Raw traces (given, in order, their indices kept) followed by a smoothed copy of each line of 3+ points. */
export function withSmoothed(traces, weight) {
  const out = [...traces];
  traces.forEach((tr, i) => {
    if (!String(tr.mode || "").includes("lines") || tr.y.length < 3) return;
    const color = (tr.line && tr.line.color) || COLORWAY[i % COLORWAY.length];
    const group = tr.legendgroup || `series${i}`;
    Object.assign(tr, { line: { ...tr.line, color }, opacity: 0.3, legendgroup: group, showlegend: false });
    out.push({ type: "scatter", x: tr.x, y: smooth(tr.y, weight), mode: "lines", name: tr.name, legendgroup: group,
      line: { width: 1.8, color, dash: tr.line.dash }, hoverinfo: "skip", meta: { role: "smoothed", of: i, weight } });
  });
  return out;
}

/** Raw traces only (what a pane's point counts and tooltips read). */
export const rawTraces = (data) => (data || []).filter((t) => !isSmoothed(t));

/** After live points extended raw traces `positions`: smooth those traces again (Plotly.restyle of their copies). */
export function resmooth(Plotly, div, positions) {
  const idx = [];
  const xs = [];
  const ys = [];
  div.data.forEach((t, j) => {
    if (!isSmoothed(t) || !positions.includes(t.meta.of)) return;
    const raw = div.data[t.meta.of];
    idx.push(j);
    xs.push(raw.x);
    ys.push(smooth(raw.y, t.meta.weight));
  });
  return idx.length ? Plotly.restyle(div, { x: xs, y: ys }, idx) : null;
}
