// pages/runs_table.js — the runs table's columns (run fields, config keys, series summaries) and a windowed body:
// only the rows in view (plus a margin) are in the DOM, and only those are fetched (the server sorts and pages),
// so 10,000 runs draw as fast as 50.
import * as api from "../api.js";
import { h, relTime, toMs } from "../dom.js";
import { fmtDuration, statusBadge } from "./run_panel.js";
import { runColor } from "../run_colors.js";

export const ROW_H = 24;       // px; fixed, so the window is arithmetic
const MARGIN = 20;             // rows drawn beyond the visible ones, each side
const DEFAULT_CONFIG = 6;      // config columns shown until the user picks (those that vary across the runs first)
const DEFAULT_SERIES = 4;      // summary columns shown until the user picks (those most runs have first)

const fmtNum = (v) => (typeof v !== "number" ? (v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v))
  : Number.isInteger(v) ? String(v) : Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(3) : String(+v.toPrecision(4)));

/** The value a config column names: a literal key first ("a.b"), else a path into nested config ("model.depth"),
 * as the server lists the columns and the runs query reads them. */
export function configValue(config, path) {
  if (Object.hasOwn(config, path)) return config[path];
  let node = config;
  for (const part of path.split(".")) {
    if (node === null || typeof node !== "object" || Array.isArray(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

/** Every column: fixed run fields, then the config keys and series the server listed ({config, series}). */
export function columnsOf(columns) {
  const cols = [
    { key: "env", label: "run", get: (r) => r.env, fixed: true },
    { key: "status", label: "status", get: (r) => r.status },
    { key: "tags", label: "tags", get: (r) => (r.tags || []).join(" ") },
    { key: "started", label: "age", get: (r) => r.started, num: true },
    { key: "updated", label: "updated", get: (r) => r.updated, num: true },
    { key: "duration", label: "duration", get: (r) => (r.started ? ((r.ended ? toMs(r.ended) : Date.now()) - toMs(r.started)) / 1000 : null), num: true },
    { key: "host", label: "host", get: (r) => (r.provenance || {}).host },
    { key: "commit", label: "commit", get: (r) => (((r.provenance || {}).git || {}).commit || "").slice(0, 10) },
  ];
  // Summaries before config: a sweep's metric must be on screen, not past fifty config keys.
  for (const [name, dir] of Object.entries((columns && columns.series) || {})) {
    const main = dir ? "best" : "last";
    for (const stat of [main, ...["last", "min", "max", "count"].filter((x) => x !== main)]) {
      cols.push({ key: `series:${name}.${stat}`, label: `${name}.${stat}`, group: "summary", num: true, extra: stat !== main,
        get: (r) => { const s = (r.summaries || {})[name]; return s ? s[stat] : null; } });
    }
  }
  for (const k of (columns && columns.config) || []) {
    cols.push({ key: `config:${k}`, label: k, group: "config", get: (r) => configValue(r.config || {}, k), num: true });
  }
  return cols;
}

/**
 * Columns shown by default, from the runs the query matched (`rows`, the first page): the fixed ones, the summaries
 * most of them have, and the config keys whose values differ between them (a sweep's hparams), most common first.
 */
export function defaultVisible(cols, rows = []) {
  const values = (c) => rows.map((r) => c.get(r)).filter((v) => v !== undefined && v !== null);
  const have = (c) => values(c).length;
  // A key worth a column varies between the runs that have it; text unique to each run (a name) says little.
  const worth = (c) => {
    const vs = values(c);
    const distinct = new Set(vs.map((v) => JSON.stringify(v))).size;
    if (distinct < 2) return 0;
    return vs.every((v) => typeof v === "string") && distinct === vs.length ? 1 : 2;
  };
  const rank = (list, score) => list.map((c, i) => [c, score(c), i]).sort((a, b) => b[1] - a[1] || a[2] - b[2]).map(([c]) => c);
  const series = rank(cols.filter((c) => c.group === "summary" && !c.extra), have).slice(0, DEFAULT_SERIES);
  const config = rank(cols.filter((c) => c.group === "config"), (c) => worth(c) * (rows.length + 1) + have(c))
    .slice(0, DEFAULT_CONFIG);
  const fixed = cols.filter((c) => !c.group && !["host", "commit", "duration", "updated"].includes(c.key));
  return new Set([...fixed, ...series, ...config].map((c) => c.key));
}

function cell(col, run) {
  const v = col.get(run);
  if (col.key === "env") { // the run's colour, as on Scalars and Compare
    return h("td", { class: "col-env" }, h("span", { class: "chip run-chip", style: `background:${runColor(run.env)}` }),
      " ", h("a", { href: api.envPageUrl(run.env), text: run.env, title: run.env }));
  }
  if (col.key === "status") return h("td", null, statusBadge(run.status, (run.provenance || {}).source));
  if (col.key === "updated" || col.key === "started") {
    return h("td", { class: "num", title: v ? new Date(toMs(v)).toLocaleString() : "", text: v ? relTime(toMs(v)) : "" });
  }
  if (col.key === "duration") return h("td", { class: "num", text: v === null ? "" : fmtDuration(v) });
  const text = fmtNum(v);
  return h("td", { class: typeof v === "number" ? "num" : null, title: text, text });
}

/** Draw the header and the rows in view into `t` ({table, wrap, head, body, rows, cols, visible, sort, selected}). */
export function drawHead(t, onSort, onPick) {
  const shown = t.cols.filter((c) => t.visible.has(c.key));
  const all = h("input", { type: "checkbox", "aria-label": "select every run shown", onchange: (ev) => onPick(null, ev.target.checked) });
  all.checked = t.envs.length > 0 && t.envs.every((e) => t.selected.has(e));
  t.head.replaceChildren(h("tr", null, h("th", { class: "col-pick" }, all), shown.map((c) => h("th", {
    dataset: { key: c.key, sort: t.sort.key === c.key ? t.sort.dir : null }, title: c.label,
    onclick: () => onSort(c.key) }, c.label))));
  t.shown = shown;
}

/** The rows [first, last) the body should hold for the current scroll position. */
export function windowOf(t) {
  const first = Math.max(0, Math.floor(t.wrap.scrollTop / ROW_H) - MARGIN);
  const last = Math.min(t.rows.length, Math.ceil((t.wrap.scrollTop + Math.max(t.wrap.clientHeight, 600)) / ROW_H) + MARGIN);
  return [first, last];
}

/** Draw the rows in view; a row not fetched yet is a placeholder (the caller fetches its page). */
export function drawBody(t, onPick) {
  const { rows } = t;
  const [first, last] = windowOf(t);
  const span = t.shown.length + 1;
  const pad = (n) => h("tr", { class: "pad", "aria-hidden": "true" }, h("td", { colspan: span, style: `height:${n * ROW_H}px;padding:0;border:0` }));
  const out = [];
  if (first > 0) out.push(pad(first));
  for (let i = first; i < last; i++) {
    const run = rows[i];
    if (!run) {
      out.push(h("tr", { class: "loading" }, h("td", { colspan: span, class: "muted", text: "…" })));
      continue;
    }
    const box = h("input", { type: "checkbox", "aria-label": `select ${run.env}`, onchange: (ev) => onPick(run.env, ev.target.checked) });
    box.checked = t.selected.has(run.env);
    out.push(h("tr", { class: t.selected.has(run.env) ? "selected" : null, dataset: { env: run.env } },
      h("td", { class: "col-pick" }, box), t.shown.map((c) => cell(c, run))));
  }
  if (last < rows.length) out.push(pad(rows.length - last));
  t.body.replaceChildren(...out);
  t.window = [first, last];
}
