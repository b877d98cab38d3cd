// chart_prefs.js — what Scalars, Compare and run pages share: one smoothing setting with its slider, and where a
// chart's legend goes (beside the plot only while its names are short, so long names never eat the plot).
import { h } from "./dom.js";
import { getItem, setItem } from "./storage.js";

const KEY = "paneboard.smoothing";
const EVENT = "paneboard:smoothing";

/** The smoothing weight (0..0.99) chosen on any page, or `fallback` when none was (Scalars 0.6, run pages 0). */
export function smoothingOf(fallback) {
  const raw = getItem("local", KEY);
  const v = raw === null ? NaN : Number(raw);
  return Number.isFinite(v) && v >= 0 && v < 1 ? v : fallback;
}

/** Keep `weight` for every page and tell this page's other charts (run pages redraw their line panes). */
export function setSmoothing(weight) {
  setItem("local", KEY, String(weight));
  window.dispatchEvent(new CustomEvent(EVENT, { detail: weight }));
}

/** Call fn(weight) after each change of the setting on this page; returns the unsubscribe function. */
export function onSmoothing(fn) {
  const listener = (e) => fn(e.detail);
  window.addEventListener(EVENT, listener);
  return () => window.removeEventListener(EVENT, listener);
}

/** The smoothing slider and its value, as Scalars shows it; onChange(weight) after the shared setting changed. */
export function smoothingControl(fallback, onChange = () => {}) {
  const start = smoothingOf(fallback);
  const value = h("span", { class: "smoothing-value", text: start.toFixed(2) });
  const input = h("input", { type: "range", class: "smoothing", min: "0", max: "0.99", step: "0.01", value: String(start),
    "aria-label": "smoothing", title: "smoothing (TensorBoard's EMA): the same on Scalars, Compare and run pages",
    oninput: () => {
      const w = Number(input.value);
      value.textContent = w.toFixed(2);
      setSmoothing(w);
      onChange(w);
    } });
  return { input, value, el: h("label", { class: "smoothing-control" }, h("span", { class: "sc-label", text: "smoothing" }), input, value) };
}

const CHAR_PX = 6.2; // a 10 px legend font's average character
const LEGEND_SHARE = 0.15; // beside the plot, a legend may take this much of the chart's width

/**
 * Plotly legend options for a chart `width` px wide whose series are `names`: beside the plot when it is wide
 * and the longest name fits in a sixth of it, else in rows under the plot.
 */
export function legendPlacement(width, names) {
  const longest = Math.max(0, ...names.map((n) => String(n ?? "").length));
  const beside = width >= 560 && longest * CHAR_PX + 40 <= width * LEGEND_SHARE;
  return beside ? { x: 1.02, xanchor: "left", y: 1, yanchor: "top", font: { size: 10 } }
    : { orientation: "h", x: 0, xanchor: "left", y: -0.22, yanchor: "top", font: { size: 10 } };
}
