// run_colors.js — one colour per run, derived from its name (same on every page and after a reload), user overrides kept.

// Colour-blind-safe first (Okabe–Ito without black, then Paul Tol's muted set), then further distinct hues, so the
// runs most likely to meet on one chart are told apart by everyone. Every entry reads on a light and a dark page.
export const PALETTE = [
  "#0072b2", "#e69f00", "#009e73", "#d55e00", "#56b4e9", "#cc79a7",
  "#882255", "#44aa99", "#999933", "#aa4499", "#6655cc", "#cc6677", "#117733", "#88ccee", "#ddcc77",
  "#ee3377", "#8c564b", "#7f7f7f", "#bcbd22", "#ffaabb", "#17becf", "#a6761d", "#1b9e77", "#e7298a",
];
// Series of one run share its colour and differ by dash (train vs val of a run stay one colour).
export const DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"];

const STORE_KEY = "paneboard.runColors";
let overrides = null; // run -> "#rrggbb", read once from localStorage (kept in memory where storage is refused)

/** FNV-1a over the UTF-16 code units, then a murmur3 finaliser: "run-1" and "run-2" land far apart. */
export function hashName(name) {
  let h = 0x811c9dc5;
  const s = String(name);
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function loaded() {
  if (overrides) return overrides;
  overrides = new Map();
  try {
    const raw = window.localStorage.getItem(STORE_KEY); // throws where the browser refuses storage
    const obj = raw ? JSON.parse(raw) : {};
    for (const [k, v] of Object.entries(obj && typeof obj === "object" ? obj : {})) {
      if (typeof v === "string" && /^#[0-9a-f]{6}$/i.test(v)) overrides.set(k, v);
    }
  } catch {
    // No storage (private mode, a sandboxed frame) or a corrupt entry: colours come from names alone.
  }
  return overrides;
}

/** The palette slot of a name (no override). */
export const hashedColor = (name) => PALETTE[hashName(name) % PALETTE.length];

/** The colour of a run: the user's choice if any, else its name's palette colour. */
export function runColor(name) {
  return loaded().get(String(name)) || hashedColor(name);
}

/**
 * Keep a user's colour for a run (null forgets it). Returns whether it was stored for later visits too;
 * where storage is refused it still holds for this page.
 */
export function setRunColor(name, color) {
  const map = loaded();
  if (color) map.set(String(name), String(color).toLowerCase());
  else map.delete(String(name));
  try {
    window.localStorage.setItem(STORE_KEY, JSON.stringify(Object.fromEntries(map)));
    return true;
  } catch {
    return false;
  }
}

/**
 * Colours of the keys of one run's chart (an add_scalars pane): the run's colour first, then the next palette
 * slots, so the keys are all distinct however their names hash.
 */
export function keyColors(run, n) {
  const own = runColor(run);
  const start = PALETTE.indexOf(own);
  return Array.from({ length: n }, (_, k) => (k === 0 ? own : PALETTE[((start < 0 ? 0 : start) + k) % PALETTE.length]));
}

/** The dash of the k-th series of a run on one chart. */
export const dashOf = (k) => DASHES[k % DASHES.length];

/**
 * Colour, dash and label of each series of one chart ([{env, win, name, suffix?}], in drawing order). Several
 * runs: each run's colour, its own series told apart by dash. One run: its keys (an add_scalars pane) in
 * distinct colours. The label is the run, with the key when the run has several series.
 */
export function styleSeries(list) {
  const perEnv = new Map();
  for (const s of list) perEnv.set(s.env, (perEnv.get(s.env) || 0) + 1);
  const oneRun = perEnv.size === 1;
  const colors = oneRun ? keyColors(list[0].env, list.length) : null;
  const seen = new Map();
  return list.map((s, i) => {
    const k = seen.get(s.env) || 0;
    seen.set(s.env, k + 1);
    const key = s.name && s.name !== s.win ? s.name : s.win;
    const label = s.suffix ? `${s.env} · ${s.suffix}` : perEnv.get(s.env) > 1 ? `${s.env}/${key}` : String(s.env);
    return { label, color: oneRun ? colors[i] : runColor(s.env), dash: oneRun ? "solid" : dashOf(k) };
  });
}

/** rgba() of a "#rrggbb" colour, for bands and faded raw lines. */
export function rgba(hex, alpha) {
  const n = parseInt(String(hex).slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
}
