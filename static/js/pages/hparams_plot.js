// pages/hparams_plot.js — the HParams view's parallel coordinates (Plotly's, or SVG without WebGL) and its brushing.
import { loadPlotly } from "../plotly_loader.js";
import { drawParcoords, hasWebGL } from "../parcoords_svg.js";

export const missing = (v) => v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v));

/** A parcoords dimension; bools and strings become ticks at 0..k-1 (domain order when known, else sorted). */
export function dimensionOf(col, rows) {
  const vals = rows.map((r) => col.get(r));
  if (col.type === "number") {
    return { label: col.label, values: vals.map((v) => (missing(v) ? NaN : Number(v))) };
  }
  let cats = Array.isArray(col.domain) && col.domain.length ? col.domain.map(String) : [];
  for (const v of vals) if (!missing(v) && !cats.includes(String(v))) cats.push(String(v));
  if (!col.domain) cats = cats.sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const at = new Map(cats.map((c, i) => [c, i]));
  return { label: col.label, values: vals.map((v) => (missing(v) ? NaN : at.get(String(v)))), tickvals: cats.map((_, i) => i),
    ticktext: cats, range: [0, Math.max(1, cats.length - 1)] };
}

/** Does value v pass a parcoords constraintrange ([lo, hi] or [[lo, hi], ...])? */
export function inRange(v, range) {
  if (!range || !range.length) return true;
  if (!Number.isFinite(v)) return false;
  const spans = Array.isArray(range[0]) ? range : [range];
  return spans.some(([lo, hi]) => v >= lo && v <= hi);
}

/** Draw hp.plot from hp.res / hp.cols / hp.ranges; brushing sets hp.ranges and calls onBrush(). */
export async function drawPlot(hp, onBrush) {
  const { plot } = hp;
  const dimCols = hp.cols.filter((c) => c.kind !== "meta");
  hp.dims = dimCols.map((c) => c.key);
  if (!hp.res.sessions.length || !dimCols.length) {
    plot.hidden = true;
    return;
  }
  plot.hidden = false;
  const dimensions = dimCols.map((c) => {
    const d = dimensionOf(c, hp.res.sessions);
    if (hp.ranges.has(c.key)) d.constraintrange = hp.ranges.get(c.key);
    return d;
  });
  const colorCol = dimCols.find((c) => c.kind === "metric") || dimCols[dimCols.length - 1];
  const color = dimensionOf(colorCol, hp.res.sessions).values.map((v) => (Number.isFinite(v) ? v : 0));
  const drawSvg = () => { // Plotly's parcoords is WebGL only: the SVG version has the same brushing semantics
    const byIndex = new Map(hp.dims.map((k, i) => [i, hp.ranges.get(k)]).filter(([, r]) => r));
    drawParcoords(plot, dimensions, color, byIndex, (brushed) => {
      hp.ranges = new Map([...brushed].map(([i, r]) => [hp.dims[i], r]));
      onBrush();
    });
  };
  if (hp.noWebGL || !hasWebGL()) {
    drawSvg();
    return;
  }
  const Plotly = await loadPlotly();
  const trace = { type: "parcoords", dimensions, line: { color, colorscale: "Viridis", showscale: true,
    colorbar: { title: { text: colorCol.label }, thickness: 10 } } };
  await Plotly.react(plot, [trace], { margin: { l: 60, r: 60, t: 40, b: 20 }, height: 360, font: { size: 11 } },
    { responsive: true, displaylogo: false });
  if (plot.querySelector(".no-webgl")) { // a context exists but Plotly's regl could not use it (software GL)
    hp.noWebGL = true;
    Plotly.purge(plot);
    drawSvg();
    return;
  }
  if (!plot.dataset.bound) {
    plot.dataset.bound = "1";
    // Brushing restyles `dimensions[i].constraintrange`: read them all back and filter the table.
    plot.on("plotly_restyle", () => {
      const ds = (plot.data && plot.data[0] && plot.data[0].dimensions) || [];
      hp.ranges = new Map();
      ds.forEach((d, i) => { if (d.constraintrange && d.constraintrange.length && hp.dims[i]) hp.ranges.set(hp.dims[i], d.constraintrange); });
      onBrush();
    });
  }
}
