// pages/hparams_plot.js — the HParams view's parallel coordinates (SVG: gaps for missing values, log axes) and its
// brushing, over the axes the user picked; lines are coloured by the chosen metric.
import { drawParcoords, ramp } from "../parcoords_svg.js";
import { h } from "../dom.js";

export const missing = (v) => v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v));

const fmtNum = (v) => String(Number(v.toPrecision(3)));
const fmtReal = (v) => (v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e4) ? v.toExponential(1) : fmtNum(v));

/** Ticks of a log10 axis over [lo, hi] (exponents): every decade inside, else its two ends in real units. */
function logTicks(lo, hi) {
  const decades = [];
  for (let e = Math.ceil(lo - 1e-9); e <= hi + 1e-9; e++) decades.push(e);
  if (decades.length >= 2) {
    const every = Math.ceil(decades.length / 8);
    const kept = decades.filter((_, k) => k % every === 0);
    // One style per axis: plain numbers when every decade reads short, else all as 1eN.
    const plain = kept.every((e) => e >= -2 && e <= 3);
    return { tickvals: kept, ticktext: kept.map((e) => (plain ? fmtNum(10 ** e) : `1e${e}`)) };
  }
  const ends = [lo, (lo + hi) / 2, hi];
  return { tickvals: ends, ticktext: ends.map((e) => fmtReal(10 ** e)) };
}

/** A parcoords dimension; a log column is drawn in log10 units with decade ticks; bools and strings become ticks
 * at 0..k-1 (domain order when known, else sorted). */
export function dimensionOf(col, rows) {
  const vals = rows.map((r) => col.get(r));
  if (col.type === "number") {
    if (col.log) {
      const values = vals.map((v) => (missing(v) || Number(v) <= 0 ? NaN : Math.log10(Number(v))));
      const fin = values.filter(Number.isFinite);
      if (!fin.length) return { label: col.label, values };
      let [lo, hi] = [Math.min(...fin), Math.max(...fin)];
      if (lo === hi) [lo, hi] = [lo - 0.5, hi + 0.5];
      return { label: `${col.label} (log)`, values, range: [lo, hi], ...logTicks(lo, hi) };
    }
    return { label: col.label, values: vals.map((v) => (missing(v) ? NaN : Number(v))) };
  }
  let cats = Array.isArray(col.domain) && col.domain.length ? col.domain.map(String) : [];
  const known = new Set(cats);
  for (const v of vals) if (!missing(v) && !known.has(String(v))) { known.add(String(v)); cats.push(String(v)); }
  if (!col.domain) cats = cats.sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const at = new Map(cats.map((c, i) => [c, i]));
  return { label: col.label, values: vals.map((v) => (missing(v) ? NaN : at.get(String(v)))), tickvals: cats.map((_, i) => i),
    ticktext: cats, range: cats.length > 1 ? [0, cats.length - 1] : [-1, 1] }; // one value: mid-axis
}

/** Does value v pass a parcoords constraintrange ([lo, hi] or [[lo, hi], ...])? */
export function inRange(v, range) {
  if (!range || !range.length) return true;
  if (!Number.isFinite(v)) return false;
  const spans = Array.isArray(range[0]) ? range : [range];
  return spans.some(([lo, hi]) => v >= lo && v <= hi);
}

/** "colour: <metric> low ▭ high" above the plot. */
function legendOf(col, color) {
  const fin = color.filter(Number.isFinite);
  if (!col || !fin.length) return h("div", { class: "hp-legend" });
  const stops = [0, 0.33, 0.66, 1].map(ramp).join(",");
  return h("div", { class: "hp-legend" }, `colour: ${col.label}  ${fmtNum(Math.min(...fin))} `,
    h("span", { class: "hp-ramp", style: `background: linear-gradient(90deg, ${stops})` }), ` ${fmtNum(Math.max(...fin))}`);
}

/** Draw hp.plot from hp.res / hp.axisCols / hp.ranges; brushing sets hp.ranges and calls onBrush(). */
export function drawPlot(hp, onBrush) {
  const { plot } = hp;
  const dimCols = hp.axisCols;
  hp.dims = dimCols.map((c) => c.key);
  if (!hp.res.sessions.length || !dimCols.length) {
    plot.hidden = true;
    return;
  }
  plot.hidden = false;
  const dimensions = dimCols.map((c) => dimensionOf(c, hp.res.sessions));
  const colorCol = hp.cols.find((c) => c.key === `m:${hp.metric}`);
  const color = colorCol ? hp.res.sessions.map((r) => { const v = colorCol.get(r); return missing(v) ? NaN : Number(v); })
    : hp.res.sessions.map(() => NaN);
  const byIndex = new Map(hp.dims.map((k, i) => [i, hp.ranges.get(k)]).filter(([, r]) => r));
  const canvas = h("div", { class: "hp-plot-scroll" });
  plot.replaceChildren(legendOf(colorCol, color), canvas);
  drawParcoords(canvas, dimensions, color, byIndex, (brushed) => {
    hp.ranges = new Map([...brushed].map(([i, r]) => [hp.dims[i], r]));
    onBrush();
  }, hp.res.sessions.map((r, i) => `${r.session === "." ? r.env : `${r.env} / ${r.session}`}`
    + (Number.isFinite(color[i]) ? ` · ${hp.metric} ${fmtNum(color[i])}` : "")));
}
