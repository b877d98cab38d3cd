// run_colors.js — one colour per run, derived from its name (same on every page and after a reload); a user's choice
// is kept on the server (op run_color), so every browser and page draws it alike.
import * as api from "./api.js";
import { PALETTE, themePalette } from "./run_palette.js";
import { getJSON, setJSON } from "./storage.js";
import { isDark } from "./theme.js";

export { PALETTE } from "./run_palette.js";
// Series of one run share its colour and differ by dash (train vs val of a run stay one colour).
export const DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"];

const STORE_KEY = "paneboard.runColors";
const HEX = /^#[0-9a-f]{6}$/i;
const chosen = new Map(); // run -> "#rrggbb": the colours users chose, as the server holds them
const shown = new Map(); // run -> a colour being picked (the picker's drag), shown before it is saved
let local = null; // run -> colour kept in this browser alone: a choice the server refused (a read-only link)
let loading = null;
let saving = Promise.resolve(); // saves in the order they were made: the last pick wins

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

function localOnly() {
  if (local) return local;
  local = new Map();
  const obj = getJSON("local", STORE_KEY, {});
  for (const [k, v] of Object.entries(obj && typeof obj === "object" ? obj : {})) {
    if (typeof v === "string" && HEX.test(v)) local.set(k, v.toLowerCase());
  }
  return local;
}

/**
 * Read the colours users chose (GET api/v1/runs/colors), once per page, before it draws. A page that cannot read
 * them (offline, a link without the runs listing) draws the names' colours.
 */
export function loadRunColors() {
  if (!loading) {
    loading = api.getJson("api/v1/runs/colors").then((r) => {
      for (const [run, c] of Object.entries((r && r.colors) || {})) if (HEX.test(c)) chosen.set(run, c.toLowerCase());
    }, () => {});
  }
  return loading;
}

const theme = () => (isDark() ? "dark" : "light");

/** The palette slot of a name: stable, whatever else is on the page. */
export const slotOf = (name) => hashName(name) % PALETTE.length;

/** The name's palette colour (no user choice), capped for the current theme. */
export const hashedColor = (name) => themePalette(theme())[slotOf(name)];

/** The colour of a run: the user's choice if any, else its name's palette colour. */
export function runColor(name) {
  const key = String(name);
  return shown.get(key) || localOnly().get(key) || chosen.get(key) || hashedColor(key);
}

/** A colour another browser (or this one) kept on the server for a run (null: forgotten), heard live. */
export function heardRunColor(name, color) {
  const key = String(name);
  if (typeof color === "string" && HEX.test(color)) chosen.set(key, color.toLowerCase());
  else chosen.delete(key);
}

/** Show a colour for a run on this page while the user is still picking it (not saved). */
export function previewRunColor(name, color) {
  if (color && HEX.test(color)) shown.set(String(name), String(color).toLowerCase());
}

/**
 * Keep a user's colour for a run (null forgets it) on the server, for every browser and page. Where the server
 * refuses (a read-only share link) or cannot be reached it is kept in this browser instead. Resolves to where it
 * was kept: "server" or "browser".
 */
export function setRunColor(name, color) {
  const key = String(name);
  const value = color ? String(color).toLowerCase() : null;
  shown.delete(key);
  const mine = localOnly();
  if (value) mine.set(key, value); // drawn at once; the server's answer only decides where it is kept
  else mine.delete(key);
  const save = async () => {
    try {
      const r = await api.put(`${api.envPath(key)}/color`, { color: value });
      if (r && r.color) chosen.set(key, r.color);
      else chosen.delete(key);
      mine.delete(key);
      return "server";
    } catch {
      return "browser";
    } finally {
      setJSON("local", STORE_KEY, Object.fromEntries(mine));
    }
  };
  const done = saving.then(save);
  saving = done;
  return done;
}

/**
 * Colours of the keys of one run's chart (an add_scalars pane): the run's colour first, then the next palette
 * slots, so the keys are all distinct however their names hash.
 */
export function keyColors(run, n) {
  const palette = themePalette(theme());
  const start = slotOf(run);
  return Array.from({ length: n }, (_, k) => (k === 0 ? runColor(run) : palette[(start + k) % palette.length]));
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
