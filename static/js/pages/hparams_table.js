// pages/hparams_table.js — the HParams view's session table: columns, brushing filter, sort, CSV. It shows env,
// session and the picked axes (hparams_axes.js), so the table and the plot always agree.
import * as api from "../api.js";
import { counted, h } from "../dom.js";
import { dimensionOf, inRange, missing } from "./hparams_plot.js";

const TABLE_ROWS = 200;

/** Columns: run, trial (add_hparams sessions: only when a run has some), every hparam, every metric; `get(row)`
 * reads the cell value. */
export function columnsOf(res) {
  const trials = (res.sessions || []).some((r) => r.session !== ".");
  return [
    { key: "env", label: "run", kind: "meta", type: "string", get: (r) => r.env },
    ...(trials ? [{ key: "session", label: "trial", kind: "meta", type: "string", get: (r) => r.session }] : []),
    ...(res.hparams || []).map((c) => ({ key: `h:${c.name}`, label: c.name, kind: "hparam", type: c.type, domain: c.domain,
      log: c.log, varying: c.varying, identifier: c.identifier, get: (r) => (r.hparams || {})[c.name] })),
    ...(res.metrics || []).map((m) => ({ key: `m:${m}`, label: m, kind: "metric", type: "number",
      get: (r) => (r.metrics || {})[m] })),
  ];
}

/** Sort comparator: numbers by value, bools false < true, text naturally; empty cells always last. */
export function compareValues(a, b, dir) {
  if (missing(a) || missing(b)) return missing(a) - missing(b);
  let c;
  if (typeof a === "number" && typeof b === "number") c = a - b;
  else if (typeof a === "boolean" && typeof b === "boolean") c = Number(a) - Number(b);
  else c = String(a).localeCompare(String(b), undefined, { numeric: true });
  return dir === "desc" ? -c : c;
}

function fmt(v) {
  if (missing(v)) return "–";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  return String(v);
}

function csvCell(v) {
  const s = missing(v) ? "" : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(cols, rows) {
  return [cols.map((c) => csvCell(c.label)).join(","), ...rows.map((r) => cols.map((c) => csvCell(c.get(r))).join(","))]
    .join("\n") + "\n";
}

export const visibleCols = (hp) => [...hp.cols.filter((c) => c.kind === "meta"), ...hp.axisCols];

/** Sessions inside every brushed range, in the chosen sort order (ties keep the server's order). */
export function filtered(hp) {
  const { cols, res, sort } = hp;
  const byKey = new Map(cols.map((c) => [c.key, c]));
  // Brushed ranges are in dimension units (category index for text/bool columns): map over every session.
  const active = [...hp.ranges].filter(([k]) => byKey.has(k)).map(([k, range]) => [dimensionOf(byKey.get(k), res.sessions).values, range]);
  const shown = res.sessions.filter((r, i) => active.every(([values, range]) => inRange(values[i], range)));
  if (!sort.key || !byKey.has(sort.key)) return shown;
  const col = byKey.get(sort.key);
  return shown.map((r, i) => [r, i]).sort((a, b) => compareValues(col.get(a[0]), col.get(b[0]), sort.dir) || a[1] - b[1])
    .map(([r]) => r);
}

export function drawTable(hp) {
  const vis = visibleCols(hp);
  const rows = filtered(hp);
  const { sort } = hp;
  const head = h("tr", null, vis.map((c) => h("th", {
    class: `hp-${c.kind}${sort.key === c.key ? ` sorted-${sort.dir}` : ""}`, dataset: { col: c.key }, title: "click to sort",
    text: `${c.label}${sort.key === c.key ? (sort.dir === "asc" ? " ▲" : " ▼") : ""}`,
    onclick: () => {
      hp.sort = { key: c.key, dir: sort.key === c.key && sort.dir === "asc" ? "desc" : "asc" };
      drawTable(hp);
    } })));
  // A sweep of 1,000 runs is 10,000+ cells: draw the first TABLE_ROWS until asked (sort or brush to find others).
  const drawn = hp.allRows ? rows : rows.slice(0, TABLE_ROWS);
  const more = rows.length > drawn.length ? h("tr", { class: "hp-more" }, h("td", { colspan: vis.length },
    h("button", { type: "button", class: "btn", text: `show all ${counted(rows.length, "row")}`,
      onclick: () => { hp.allRows = true; drawTable(hp); } }))) : null;
  hp.table.replaceChildren(h("thead", null, head), h("tbody", null, drawn.map((r) => h("tr", { dataset: { env: r.env, session: r.session } },
    vis.map((c) => {
      const v = c.get(r);
      if (c.key === "env") return h("td", null, h("a", { href: api.envPageUrl(r.env), text: r.env }));
      return h("td", { class: typeof v === "number" ? "num" : null, text: fmt(v) });
    }))), more));
  hp.count.textContent = `${rows.length} of ${counted(hp.res.sessions.length, "run")}`;
}

/** Save what the table shows (visible columns, filtered and sorted rows) as hparams.csv. */
export function download(hp) {
  const blob = new Blob([toCsv(visibleCols(hp), filtered(hp))], { type: "text/csv" });
  const a = h("a", { href: URL.createObjectURL(blob), download: "hparams.csv" });
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
}
