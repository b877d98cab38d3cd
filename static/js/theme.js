// theme.js — light/dark theme: follows prefers-color-scheme until the user picks one; Plotly figures follow too.
import { getItem, setItem } from "./storage.js";

const KEY = "paneboard.theme";
const media = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
// Light figure colors (ours in panes/*.js and Plotly's own defaults) and their dark counterparts; a color not listed
// here was chosen by the figure (a Visdom layout, a matplotlib export) and is kept.
const PAIRS = [
  ["#fff", "#161b22"], ["#24292f", "#e6edf3"], ["#444", "#c9d1d9"], ["#eceef1", "#2a313a"], ["#eee", "#2a313b"],
  ["#d0d4da", "#3d444d"], ["#c4c9d0", "#484f58"], ["#e3e7ec", "#2a313c"],
];
const ALIASES = { "#ffffff": "#fff", white: "#fff", "rgb(255, 255, 255)": "#fff", "#444444": "#444", "rgb(68, 68, 68)": "#444" };
const TO_DARK = new Map(PAIRS);
const TO_LIGHT = new Map(PAIRS.map(([l, d]) => [d, l]));
// Layout paths that carry theme colors, with Plotly's default when unset.
const PATHS = [["paper_bgcolor", "#fff"], ["plot_bgcolor", "#fff"], ["font.color", "#444"]];
const AXIS_PATHS = [["gridcolor", "#eee"], ["zerolinecolor", "#444"], ["linecolor", "#444"], ["tickcolor", "#444"]];
const CARTESIAN = new Set([undefined, "scatter", "bar", "histogram", "box", "violin", "heatmap", "contour", "scattergl",
  "histogram2d", "histogram2dcontour", "ohlc", "candlestick", "waterfall", "funnel"]);

const chosen = () => {
  const v = getItem("local", KEY);
  return v === "dark" || v === "light" ? v : null;
};

/** The theme in effect: the user's pick, else the system's. */
export const isDark = () => (chosen() || (media && media.matches ? "dark" : "light")) === "dark";

const get = (obj, path) => path.split(".").reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), obj);

/** Plotly relayout updates ({path: color}) that move a layout's theme colors to the current theme. */
export function themeUpdates(layout, data) {
  const map = isDark() ? TO_DARK : TO_LIGHT;
  const out = {};
  const axes = Object.keys(layout || {}).filter((k) => /^[xy]axis\d*$/.test(k));
  if ((data || []).some((t) => CARTESIAN.has(t && t.type))) for (const a of ["xaxis", "yaxis"]) if (!axes.includes(a)) axes.push(a);
  const paths = [...PATHS, ...axes.flatMap((a) => AXIS_PATHS.map(([p, d]) => [`${a}.${p}`, d]))];
  for (const [path, fallback] of paths) {
    let cur = get(layout, path);
    if (cur === undefined || cur === null) cur = fallback;
    if (typeof cur !== "string") continue;
    const key = ALIASES[cur.toLowerCase()] || cur.toLowerCase();
    const to = map.get(key);
    if (to && to !== key) out[path] = to;
  }
  return out;
}

/** A copy of layout with updates (dotted paths) applied, sharing everything else. */
function withUpdates(layout, updates) {
  const root = { ...(layout || {}) };
  for (const [path, v] of Object.entries(updates)) {
    const keys = path.split(".");
    let o = root;
    for (const k of keys.slice(0, -1)) o = o[k] = { ...(o[k] && typeof o[k] === "object" ? o[k] : {}) };
    o[keys[keys.length - 1]] = v;
  }
  return root;
}

/** Make every newPlot/react draw in the current theme (called once by plotly_loader.js). */
export function themePlotly(Plotly) {
  for (const name of ["newPlot", "react"]) {
    const orig = Plotly[name];
    Plotly[name] = function (gd, data, layout, config) {
      if (data && !Array.isArray(data) && typeof data === "object") { // the figure form: (gd, {data, layout, config})
        return orig.call(this, gd, { ...data, layout: withUpdates(data.layout, themeUpdates(data.layout, data.data)) });
      }
      return orig.call(this, gd, data, withUpdates(layout, themeUpdates(layout, data)), config);
    };
  }
}

function restyleFigures() {
  const Plotly = window.Plotly;
  if (!Plotly) return;
  for (const gd of document.querySelectorAll(".js-plotly-plot")) {
    const updates = themeUpdates(gd.layout, gd.data);
    if (Object.keys(updates).length) Plotly.relayout(gd, updates).catch(() => {});
  }
}

function apply() {
  const pick = chosen();
  if (pick) document.documentElement.dataset.theme = pick;
  else delete document.documentElement.dataset.theme;
  document.documentElement.dataset.dark = isDark() ? "1" : "";
  for (const b of document.querySelectorAll(".theme-toggle")) label(b);
  restyleFigures();
  // Run colours are capped per theme (run_palette.js): pages drawing runs redraw in the new theme's colours.
  document.dispatchEvent(new Event("paneboard:theme"));
}

function label(btn) {
  const dark = isDark();
  btn.textContent = dark ? "\u2600" : "\u263E";
  btn.title = dark ? "switch to the light theme" : "switch to the dark theme";
  btn.setAttribute("aria-label", btn.title);
}

/** Switch to the other theme; picking what the system shows anyway goes back to following the system. */
export function toggleTheme() {
  const next = isDark() ? "light" : "dark";
  const system = media && media.matches ? "dark" : "light";
  setItem("local", KEY, next === system ? null : next); // refused storage keeps the pick for this page
  apply();
}

/** The header's theme button. */
export function themeButton() {
  const btn = document.createElement("button");
  btn.type = "button";
  btn.className = "theme-toggle";
  btn.addEventListener("click", toggleTheme);
  label(btn);
  return btn;
}

if (media && media.addEventListener) media.addEventListener("change", () => { if (!chosen()) apply(); });
apply();
