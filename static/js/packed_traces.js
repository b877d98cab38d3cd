// packed_traces.js — many series drawn as few Plotly traces: one per (colour, dash), the series joined by gaps and
// each point carrying its series' label for the tooltip. Plotly's cost grows with traces far more than with
// points, so a sweep of 1,000 runs draws as about 30 traces.
import { plotlyText } from "./dom.js";

/** Above this many series a chart is packed (its legend is off then: the run list is the legend). */
export const PACK_MIN = 13;

/** From this many series a chart is dense: each colour's trace is drawn translucent (CSS .runs-dense), so the
 * colour drawn last does not cover the hundreds of runs under it. */
export const DENSE_MIN = 100;

/** Mark a plot element as dense (or not) for the series it draws. */
export const markDense = (plot, count) => plot.classList.toggle("runs-dense", count >= DENSE_MIN);

/**
 * items: [{env, label, color, dash, x, y, custom?}] (custom: one array per point, for the tooltip).
 * Returns [{color, dash, envs, x, y, text, customdata}], one per (colour, dash), in first-seen order.
 */
export function packSeries(items) {
  const groups = new Map();
  for (const it of items) {
    const key = `${it.color}|${it.dash}`;
    let g = groups.get(key);
    if (!g) {
      g = { color: it.color, dash: it.dash, envs: [], x: [], y: [], text: [], customdata: it.custom ? [] : null };
      groups.set(key, g);
    }
    if (g.x.length) { // a gap: the line of one series does not run on into the next
      g.x.push(null);
      g.y.push(null);
      g.text.push("");
      if (g.customdata) g.customdata.push(null);
    }
    g.envs.push(it.env);
    for (let i = 0; i < it.x.length; i++) {
      g.x.push(it.x[i]);
      g.y.push(it.y[i]);
      g.text.push(plotlyText(it.label)); // a run name is text: Plotly would draw its tags (links) in the tooltip
      if (g.customdata) g.customdata.push(it.custom[i]);
    }
  }
  return [...groups.values()];
}
