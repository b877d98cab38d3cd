// packed_traces.js — many series drawn as few Plotly traces: one per (colour, dash), the series joined by gaps.
// Plotly's cost grows with traces far more than with points, so a sweep of 1,000 runs draws as about 30 traces.

/** Above this many series a chart is packed (its legend is off then: the run list is the legend). */
export const PACK_MIN = 13;

/** From this many series a chart is dense: each colour's trace is drawn translucent (CSS .runs-dense), so the
 * colour drawn last does not cover the hundreds of runs under it. */
export const DENSE_MIN = 100;

/** Mark a plot element as dense (or not) for the series it draws. */
export const markDense = (plot, count) => plot.classList.toggle("runs-dense", count >= DENSE_MIN);

/**
 * items: [{env, color, dash, x, y}] (null or NaN for a missing value).
 * Returns [{color, dash, envs, x, y}], one per (colour, dash), in first-seen order. x and y are Float64Arrays with
 * NaN between series (a gap: one run's line does not run on into the next). Typed arrays, and no per-point
 * labels (the pages' own tooltips name the runs from their series), keep a sweep's redraw from allocating a
 * boxed number and a string per point, which Plotly then walked again.
 */
export function packSeries(items) {
  const groups = new Map();
  for (const it of items) {
    const key = `${it.color}|${it.dash}`;
    let g = groups.get(key);
    if (!g) {
      g = { color: it.color, dash: it.dash, envs: [], items: [], n: 0 };
      groups.set(key, g);
    }
    g.n += (g.items.length ? 1 : 0) + it.x.length;
    g.envs.push(it.env);
    g.items.push(it);
  }
  const out = [];
  for (const g of groups.values()) {
    const x = new Float64Array(g.n);
    const y = new Float64Array(g.n);
    let k = 0;
    for (const it of g.items) {
      if (k) { // the gap
        x[k] = NaN;
        y[k] = NaN;
        k += 1;
      }
      const xs = it.x;
      const ys = it.y;
      for (let i = 0; i < xs.length; i++, k++) {
        const xv = xs[i];
        const yv = ys[i];
        x[k] = xv === null ? NaN : xv;
        y[k] = yv === null ? NaN : yv;
      }
    }
    out.push({ color: g.color, dash: g.dash, envs: g.envs, x, y });
  }
  return out;
}
