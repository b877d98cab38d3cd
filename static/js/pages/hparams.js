// pages/hparams.js — the HParams view (TensorBoard's HParams dashboard): one row per session across envs with its
// hparams and final metrics; sortable table with column picker, parallel coordinates (Plotly's, or SVG without
// WebGL) whose brushing filters the table, CSV download of what the table shows. Data: GET api/v1/hparams (WIRE.md §3).
import * as api from "../api.js";
import { h } from "../dom.js";
import { loadPlotly } from "../plotly_loader.js";
import { drawParcoords, hasWebGL } from "../parcoords_svg.js";

const REFRESH_MS = 500; // live changes refetch at most this often

function envsFromUrl() {
  const raw = new URLSearchParams(window.location.search).get("envs");
  return raw === null ? null : [...new Set(raw.split(",").map((s) => s.trim()).filter(Boolean))];
}

/** Columns: env, session, every hparam, every metric; `get(row)` reads the cell value. */
export function columnsOf(res) {
  return [
    { key: "env", label: "env", kind: "meta", type: "string", get: (r) => r.env },
    { key: "session", label: "session", kind: "meta", type: "string", get: (r) => r.session },
    ...(res.hparams || []).map((c) => ({ key: `h:${c.name}`, label: c.name, kind: "hparam", type: c.type, domain: c.domain,
      get: (r) => (r.hparams || {})[c.name] })),
    ...(res.metrics || []).map((m) => ({ key: `m:${m}`, label: m, kind: "metric", type: "number",
      get: (r) => (r.metrics || {})[m] })),
  ];
}

const missing = (v) => v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v));

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

/** A parcoords dimension; bools and strings become ticks at 0..k-1 (domain order when known, else sorted). */
export function dimensionOf(col, rows) {
  const vals = rows.map((r) => col.get(r));
  if (col.type === "number") {
    return { label: col.label, values: vals.map((v) => (missing(v) ? NaN : Number(v))) };
  }
  let cats = Array.isArray(col.domain) && col.domain.length ? col.domain.map(String) : [];
  for (const v of vals) if (!missing(v) && !cats.includes(String(v))) cats.push(String(v));
  if (!col.domain) cats = cats.sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const at = new Map(cats.map((c, i) => [c, i]));
  return { label: col.label, values: vals.map((v) => (missing(v) ? NaN : at.get(String(v)))), tickvals: cats.map((_, i) => i),
    ticktext: cats, range: [0, Math.max(1, cats.length - 1)] };
}

/** Does value v pass a parcoords constraintrange ([lo, hi] or [[lo, hi], ...])? */
export function inRange(v, range) {
  if (!range || !range.length) return true;
  if (!Number.isFinite(v)) return false;
  const spans = Array.isArray(range[0]) ? range : [range];
  return spans.some(([lo, hi]) => v >= lo && v <= hi);
}

export function hparamsPage({ connect, notice }) {
  const $ = (id) => document.getElementById(id);
  const envs = envsFromUrl();
  document.title = "hparams · paneboard";
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← envs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: envs ? `hparams of ${envs.length} envs` : "hparams" }));
  const csvBtn = h("button", { type: "button", class: "btn hp-csv", text: "download CSV", onclick: () => download() });
  $("tools").replaceChildren(csvBtn);

  const picker = h("details", { class: "hp-columns" }, h("summary", { text: "columns" }));
  const pickList = h("div", { class: "hp-column-list" });
  picker.append(pickList);
  const count = h("span", { class: "hp-count" });
  const plot = h("div", { class: "hp-parcoords" });
  const table = h("table", { class: "hp-table" });
  const empty = h("div", { class: "empty", hidden: true, text: "No hparams logged yet (SummaryWriter.add_hparams or the hparams op)." });
  $("main").replaceChildren(h("div", { class: "hp-head" }, picker, count), plot, h("div", { class: "hp-table-wrap" }, table), empty);

  let res = { hparams: [], metrics: [], sessions: [] };
  let cols = [];
  const hidden = new Set(); // column keys the user hid (kept across reloads)
  let sort = { key: null, dir: "asc" };
  let ranges = new Map(); // column key -> constraintrange from brushing
  let dims = []; // column keys of the parcoords dimensions, in order
  let noWebGL = false; // Plotly failed to draw parcoords once: SVG from then on

  const visibleCols = () => cols.filter((c) => !hidden.has(c.key));
  function filtered() {
    const byKey = new Map(cols.map((c) => [c.key, c]));
    // Brushed ranges are in dimension units (category index for text/bool columns): map over every session.
    const active = [...ranges].filter(([k]) => byKey.has(k)).map(([k, range]) => [dimensionOf(byKey.get(k), res.sessions).values, range]);
    const shown = res.sessions.filter((r, i) => active.every(([values, range]) => inRange(values[i], range)));
    if (!sort.key || !byKey.has(sort.key)) return shown;
    const col = byKey.get(sort.key);
    return shown.map((r, i) => [r, i]).sort((a, b) => compareValues(col.get(a[0]), col.get(b[0]), sort.dir) || a[1] - b[1])
      .map(([r]) => r);
  }

  function drawPicker() {
    pickList.replaceChildren(...cols.map((c) => h("label", { class: "hp-pick" },
      h("input", { type: "checkbox", checked: !hidden.has(c.key), dataset: { col: c.key }, onchange: (ev) => {
        if (ev.target.checked) hidden.delete(c.key);
        else hidden.add(c.key);
        drawTable();
      } }), ` ${c.kind === "meta" ? "" : `${c.kind}: `}${c.label}`)));
  }

  function drawTable() {
    const vis = visibleCols();
    const rows = filtered();
    const head = h("tr", null, vis.map((c) => h("th", {
      class: `hp-${c.kind}${sort.key === c.key ? ` sorted-${sort.dir}` : ""}`, dataset: { col: c.key }, title: "click to sort",
      text: `${c.label}${sort.key === c.key ? (sort.dir === "asc" ? " ▲" : " ▼") : ""}`,
      onclick: () => {
        sort = { key: c.key, dir: sort.key === c.key && sort.dir === "asc" ? "desc" : "asc" };
        drawTable();
      } })));
    table.replaceChildren(h("thead", null, head), h("tbody", null, rows.map((r) => h("tr", { dataset: { env: r.env, session: r.session } },
      vis.map((c) => {
        const v = c.get(r);
        if (c.key === "env") return h("td", null, h("a", { href: api.envPageUrl(r.env), text: r.env }));
        return h("td", { class: typeof v === "number" ? "num" : null, text: fmt(v) });
      })))));
    count.textContent = `${rows.length} of ${res.sessions.length} sessions`;
  }

  async function drawPlot() {
    const dimCols = cols.filter((c) => c.kind !== "meta");
    dims = dimCols.map((c) => c.key);
    if (!res.sessions.length || !dimCols.length) {
      plot.hidden = true;
      return;
    }
    plot.hidden = false;
    const dimensions = dimCols.map((c) => {
      const d = dimensionOf(c, res.sessions);
      if (ranges.has(c.key)) d.constraintrange = ranges.get(c.key);
      return d;
    });
    const colorCol = dimCols.find((c) => c.kind === "metric") || dimCols[dimCols.length - 1];
    const color = dimensionOf(colorCol, res.sessions).values.map((v) => (Number.isFinite(v) ? v : 0));
    const drawSvg = () => { // Plotly's parcoords is WebGL only: the SVG version has the same brushing semantics
      const byIndex = new Map(dims.map((k, i) => [i, ranges.get(k)]).filter(([, r]) => r));
      drawParcoords(plot, dimensions, color, byIndex, (brushed) => {
        ranges = new Map([...brushed].map(([i, r]) => [dims[i], r]));
        drawTable();
      });
    };
    if (noWebGL || !hasWebGL()) {
      drawSvg();
      return;
    }
    const Plotly = await loadPlotly();
    const trace = { type: "parcoords", dimensions, line: { color, colorscale: "Viridis", showscale: true,
      colorbar: { title: { text: colorCol.label }, thickness: 10 } } };
    await Plotly.react(plot, [trace], { margin: { l: 60, r: 60, t: 40, b: 20 }, height: 360, font: { size: 11 } },
      { responsive: true, displaylogo: false });
    if (plot.querySelector(".no-webgl")) { // a context exists but Plotly's regl could not use it (software GL)
      noWebGL = true;
      Plotly.purge(plot);
      drawSvg();
      return;
    }
    if (!plot.dataset.bound) {
      plot.dataset.bound = "1";
      // Brushing restyles `dimensions[i].constraintrange`: read them all back and filter the table.
      plot.on("plotly_restyle", () => {
        const ds = (plot.data && plot.data[0] && plot.data[0].dimensions) || [];
        ranges = new Map();
        ds.forEach((d, i) => { if (d.constraintrange && d.constraintrange.length && dims[i]) ranges.set(dims[i], d.constraintrange); });
        drawTable();
      });
    }
  }

  function download() {
    const blob = new Blob([toCsv(visibleCols(), filtered())], { type: "text/csv" });
    const a = h("a", { href: URL.createObjectURL(blob), download: "hparams.csv" });
    document.body.append(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  }

  async function load() {
    const q = envs === null ? "" : `?envs=${envs.map(encodeURIComponent).join(",")}`;
    res = await api.getJson(`api/v1/hparams${q}`);
    cols = columnsOf(res);
    const known = new Set(cols.map((c) => c.key));
    ranges = new Map([...ranges].filter(([k]) => known.has(k)));
    empty.hidden = res.sessions.length > 0;
    drawPicker();
    drawTable();
    await drawPlot();
    notice("");
  }

  let timer = null;
  const refresh = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      load().catch((err) => notice(`cannot load: ${err.message}`, "error"));
    }, REFRESH_MS);
  };
  connect(null, load, (m) => {
    const name = m.type === "env" ? m.env && m.env.name : m.env;
    if (!["env", "env_deleted", "meta", "resync"].includes(m.type)) return;
    if (envs === null || envs.includes(name)) refresh();
  });
}
