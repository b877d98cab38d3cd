// pages/runs_table.js — the runs table's columns (run fields, config keys, series summaries), sorting and a
// windowed body: only the rows in view (plus a margin) are in the DOM, so 10,000 runs draw as fast as 50.
import * as api from "../api.js";
import { h, relTime, toMs } from "../dom.js";
import { fmtDuration, statusBadge } from "./run_panel.js";

export const ROW_H = 24;       // px; fixed, so the window is arithmetic
const MARGIN = 20;             // rows drawn beyond the visible ones, each side
const DEFAULT_CONFIG = 8;      // config / summary columns shown until the user picks
const STATUS_ORDER = { running: 0, stalled: 1, crashed: 2, finished: 3 };

const fmtNum = (v) => (typeof v !== "number" ? (v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v))
  : Number.isInteger(v) ? String(v) : Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(3) : String(+v.toPrecision(4)));

/** Every column the runs offer: fixed ones, then config keys, then <series>.best (or .last when no direction). */
export function columnsOf(runs) {
  const cols = [
    { key: "env", label: "run", get: (r) => r.env, fixed: true },
    { key: "status", label: "status", get: (r) => r.status, sortVal: (r) => STATUS_ORDER[r.status] ?? 9 },
    { key: "tags", label: "tags", get: (r) => (r.tags || []).join(" ") },
    { key: "updated", label: "updated", get: (r) => r.updated, num: true },
    { key: "duration", label: "duration", get: (r) => (r.started ? ((r.ended ? toMs(r.ended) : Date.now()) - toMs(r.started)) / 1000 : null), num: true },
    { key: "host", label: "host", get: (r) => (r.provenance || {}).host },
    { key: "commit", label: "commit", get: (r) => (((r.provenance || {}).git || {}).commit || "").slice(0, 10) },
  ];
  const configKeys = new Set();
  const series = new Map();
  for (const r of runs) {
    for (const k of Object.keys(r.config || {})) configKeys.add(k);
    for (const [name, s] of Object.entries(r.summaries || {})) if (!series.has(name)) series.set(name, s.direction);
  }
  for (const k of [...configKeys].sort()) {
    cols.push({ key: `config:${k}`, label: k, group: "config", get: (r) => (r.config || {})[k], num: true });
  }
  for (const [name, dir] of [...series].sort((a, b) => a[0].localeCompare(b[0]))) {
    const stat = dir ? "best" : "last";
    cols.push({ key: `series:${name}.${stat}`, label: `${name}.${stat}`, group: "summary", num: true,
      get: (r) => { const s = (r.summaries || {})[name]; return s ? s[stat] : null; } });
    for (const other of ["last", "min", "max", "count"].filter((x) => x !== stat)) {
      cols.push({ key: `series:${name}.${other}`, label: `${name}.${other}`, group: "summary", num: true, extra: true,
        get: (r) => { const s = (r.summaries || {})[name]; return s ? s[other] : null; } });
    }
  }
  return cols;
}

/** Columns shown by default: the fixed ones, the first config keys and each series' best. */
export function defaultVisible(cols) {
  let nConfig = 0;
  let nSeries = 0;
  return new Set(cols.filter((c) => {
    if (!c.group) return !["host", "commit", "duration"].includes(c.key);
    if (c.extra) return false;
    if (c.group === "config") return nConfig++ < DEFAULT_CONFIG;
    return nSeries++ < DEFAULT_CONFIG;
  }).map((c) => c.key));
}

function compare(a, b) {
  const na = a === null || a === undefined || a === "";
  const nb = b === null || b === undefined || b === "";
  if (na || nb) return na === nb ? 0 : na ? 1 : -1; // blanks last in either direction
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/** The runs in the table's order (a new array; blanks last). */
export function sorted(runs, col, dir) {
  if (!col) return runs.slice();
  const key = col.sortVal || col.get;
  const vals = new Map(runs.map((r) => [r, key(r)]));
  return runs.slice().sort((x, y) => {
    const a = vals.get(x);
    const b = vals.get(y);
    const blank = (v) => v === null || v === undefined || v === "";
    if (blank(a) || blank(b)) return compare(a, b);
    return dir === "desc" ? -compare(a, b) : compare(a, b);
  });
}

function cell(col, run) {
  const v = col.get(run);
  if (col.key === "env") return h("td", { class: "col-env" }, h("a", { href: api.envPageUrl(run.env), text: run.env, title: run.env }));
  if (col.key === "status") return h("td", null, statusBadge(run.status));
  if (col.key === "updated") return h("td", { class: "num", title: new Date(toMs(v)).toLocaleString(), text: relTime(toMs(v)) });
  if (col.key === "duration") return h("td", { class: "num", text: v === null ? "" : fmtDuration(v) });
  const text = fmtNum(v);
  return h("td", { class: typeof v === "number" ? "num" : null, title: text, text });
}

/** Draw the header and the rows in view into `t` ({table, wrap, head, body, rows, cols, visible, sort, selected}). */
export function drawHead(t, onSort, onPick) {
  const shown = t.cols.filter((c) => t.visible.has(c.key));
  const all = h("input", { type: "checkbox", "aria-label": "select every run shown", onchange: (ev) => onPick(null, ev.target.checked) });
  all.checked = t.rows.length > 0 && t.rows.every((r) => t.selected.has(r.env));
  t.head.replaceChildren(h("tr", null, h("th", { class: "col-pick" }, all), shown.map((c) => h("th", {
    dataset: { key: c.key, sort: t.sort.key === c.key ? t.sort.dir : null }, title: c.label,
    onclick: () => onSort(c.key) }, c.label))));
  t.shown = shown;
}

export function drawBody(t, onPick) {
  const { wrap, rows } = t;
  const first = Math.max(0, Math.floor(wrap.scrollTop / ROW_H) - MARGIN);
  const last = Math.min(rows.length, Math.ceil((wrap.scrollTop + wrap.clientHeight) / ROW_H) + MARGIN);
  const span = t.shown.length + 1;
  const pad = (n) => h("tr", { class: "pad", "aria-hidden": "true" }, h("td", { colspan: span, style: `height:${n * ROW_H}px;padding:0;border:0` }));
  const out = [];
  if (first > 0) out.push(pad(first));
  for (let i = first; i < last; i++) {
    const run = rows[i];
    const box = h("input", { type: "checkbox", "aria-label": `select ${run.env}`, onchange: (ev) => onPick(run.env, ev.target.checked) });
    box.checked = t.selected.has(run.env);
    out.push(h("tr", { class: t.selected.has(run.env) ? "selected" : null, dataset: { env: run.env } },
      h("td", { class: "col-pick" }, box), t.shown.map((c) => cell(c, run))));
  }
  if (last < rows.length) out.push(pad(rows.length - last));
  t.body.replaceChildren(...out);
  t.window = [first, last];
}
