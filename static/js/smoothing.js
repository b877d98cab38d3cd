// smoothing.js — pure math of the Scalars view: TensorBoard's debiased EMA, percentiles and the y ranges (outlier-robust, flat).

/**
 * TensorBoard's classic smoothing (webapp line_chart_v2 classicSmoothing), kept identical so users see the curves
 * they know: an EMA over the points as given (x spacing ignored) divided by 1 - w^n (Adam-style debiasing), so the
 * first points are not dragged towards 0. Non-finite y values (null for NaN from the server) pass through unchanged
 * and do not advance the average; a constant series is returned as is.
 */
export function smooth(ys, weight) {
  const w = Math.min(Math.max(Number.isFinite(weight) ? weight : 0, 0), 1);
  const out = new Array(ys.length);
  // Loose equality on purpose: TensorBoard compares with ==, so null == null counts as constant, NaN never does.
  // eslint-disable-next-line eqeqeq
  const constant = ys.length > 0 && ys.every((v) => v == ys[0]);
  let last = 0;
  let n = 0;
  for (let i = 0; i < ys.length; i += 1) {
    const y = ys[i];
    if (constant || typeof y !== "number" || !Number.isFinite(y)) {
      out[i] = y;
      continue;
    }
    last = last * w + (1 - w) * y;
    n += 1;
    out[i] = w === 1 ? last : last / (1 - w ** n);
  }
  return out;
}

/** Linearly interpolated quantile (d3.quantile / numpy's default) of sorted numbers; NaN when empty. */
export function quantileSorted(sorted, p) {
  const n = sorted.length;
  if (!n) return NaN;
  const i = (n - 1) * Math.min(Math.max(p, 0), 1);
  const lo = Math.floor(i);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (i - lo);
}

/**
 * The y range of "ignore outliers in chart scaling": the 5th..95th percentile of the visible values (TensorBoard's
 * computeDataSeriesExtent), widened to the lowest and highest values within one such span of it, plus 5%
 * padding on each side, so a curve's own extremes are not cut in half. On a log axis only positive values count and the range
 * is in log10 units, as Plotly wants it. null when nothing usable is visible (Plotly autoscales then).
 */
export function robustRange(values, log = false) {
  const all = [];
  for (const v of values) {
    if (typeof v === "number" && Number.isFinite(v) && (!log || v > 0)) all.push(log ? Math.log10(v) : v);
  }
  if (!all.length) return null;
  // A typed array sorts numerically in native code: 240,000 values (a multi-metric chart) in a fifth of the time
  // of a comparator's sort.
  const ok = Float64Array.from(all).sort();
  let lo = quantileSorted(ok, 0.05);
  let hi = quantileSorted(ok, 0.95);
  // The extremes within one 5–95% span of it are the curve itself (a loss's first steps), not outliers: keep
  // them in view, so only far-off spikes fall outside.
  const reach = hi - lo;
  let i = 0;
  while (ok[i] < lo - reach) i += 1; // ok is sorted: the lowest value within reach
  let j = ok.length - 1;
  while (ok[j] > hi + reach) j -= 1;
  lo = Math.min(lo, ok[i]);
  hi = Math.max(hi, ok[j]);
  if (isFlat(lo, hi)) return aroundValue(lo, hi);
  const pad = (hi - lo) * 0.05;
  return [lo - pad, hi + pad];
}

// Spans below a millionth of the value are float noise (float32's step is 1.2e-7): the series is constant.
const NEAR_FLAT = 1e-6;
const isFlat = (lo, hi) => hi - lo <= Math.abs((lo + hi) / 2) * NEAR_FLAT;

/** A tenth of the value either side of it (1 around zero), plus the 5% padding every range gets. */
function aroundValue(lo, hi) {
  const mid = (lo + hi) / 2;
  const d = mid !== 0 ? Math.abs(mid) * 0.1 : 1;
  return [mid - d * 1.05, mid + d * 1.05];
}

/**
 * The y range of a constant or near-constant series, centred on its value as TensorBoard draws it; null when the
 * values vary (Plotly autoscales then). Plotly opens an equal-valued axis by ±1, so a learning rate of 3e-4 at every
 * step would read as a line on zero. Same units as robustRange (log10 on a log axis).
 */
export function flatRange(values, log = false) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (typeof v !== "number" || !Number.isFinite(v) || (log && v <= 0)) continue;
    const u = log ? Math.log10(v) : v;
    if (u < lo) lo = u;
    if (u > hi) hi = u;
  }
  return lo <= hi && isFlat(lo, hi) ? aroundValue(lo, hi) : null;
}

/** Case-insensitive, unanchored regex test as TensorBoard's filters: empty matches all, an invalid regex nothing. */
/** Why `text` is not a valid regex (the browser's message), or null when it is one (or empty). */
export function regexError(text) {
  try {
    new RegExp(String(text || ""), "i"); // eslint-disable-line no-new
    return null;
  } catch (err) {
    return err && err.message ? err.message : "invalid regex";
  }
}

export function regexMatcher(text) {
  const src = String(text || "");
  if (!src) return () => true;
  try {
    const re = new RegExp(src, "i");
    return (s) => re.test(String(s));
  } catch {
    return () => false;
  }
}
