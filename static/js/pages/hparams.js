// pages/hparams.js — the HParams view (TensorBoard's HParams dashboard, W&B's sweep view): one row per run or
// add_hparams session across envs; parallel coordinates over the picked axes (the keys that vary, by default) with
// brushing that filters the table, parameter importance against a chosen metric beside it, sortable table, CSV.
// Data: GET api/v1/hparams and api/v1/hparams/importance.
import * as api from "../api.js";
import { counted, h, throttled } from "../dom.js";
import { axesFromUrl, axesToUrl, axisColsOf, drawAxesPicker, syncPicker } from "./hparams_axes.js";
import { drawImportance, fetchImportance } from "./hparams_importance.js";
import { drawPlot } from "./hparams_plot.js";
import { columnsOf, download, drawTable } from "./hparams_table.js";

const REFRESH_MS = 500; // live changes refetch at most this often
const IMPORTANCE_MS = 5_000; // and refit the forest at most this often (it is the costly part)

const $ = (id) => document.getElementById(id);

const envsFromUrl = () => api.envsFromUrl();

export function hparamsPage({ connect, notice }) {
  const envs = envsFromUrl();
  const fromUrl = axesFromUrl();
  const hp = {
    res: { hparams: [], metrics: [], sessions: [], axes: [], metric: null },
    cols: [],
    axisCols: [],
    picked: fromUrl.axes, // column keys the user picked; null: the server's defaults
    wantMetric: fromUrl.metric, // the metric the user picked (kept while it exists)
    metric: null,
    sort: { key: null, dir: "asc" },
    ranges: new Map(), // column key -> constraintrange from brushing
    dims: [], // column keys of the parcoords dimensions, in order
  };
  buildChrome(hp, envs);

  const redraw = () => {
    hp.axisCols = axisColsOf(hp);
    const shown = new Set(hp.axisCols.map((c) => c.key));
    hp.ranges = new Map([...hp.ranges].filter(([k]) => shown.has(k)));
    syncPicker(hp);
    drawTable(hp);
    drawPlot(hp, () => drawTable(hp));
    if (hp.imp) drawImportance(hp, hp.imp, toggleAxis);
  };
  function pickChanged() {
    axesToUrl(hp.picked, hp.wantMetric);
    redraw();
  }
  function toggleAxis(key) {
    const keys = new Set(hp.axisCols.map((c) => c.key));
    if (keys.has(key)) keys.delete(key);
    else keys.add(key);
    hp.picked = hp.cols.filter((c) => keys.has(c.key)).map((c) => c.key);
    pickChanged();
  }

  let impAt = 0;
  async function loadImportance() {
    impAt = Date.now();
    const metric = hp.metric;
    const res = hp.metric ? await fetchImportance(envs, metric) : null;
    if (metric !== hp.metric) return; // the user picked another metric meanwhile: its own fetch draws
    hp.imp = res;
    drawImportance(hp, res, toggleAxis);
  }

  async function load() {
    const q = envs === null ? "" : `?envs=${api.envsQuery(envs)}`;
    hp.res = await api.getJson(`api/v1/hparams${q}`);
    hp.cols = columnsOf(hp.res);
    hp.metric = hp.res.metrics.includes(hp.wantMetric) ? hp.wantMetric : hp.res.metric;
    drawMetricSelect(hp, (m) => {
      hp.wantMetric = m;
      hp.metric = m;
      axesToUrl(hp.picked, m);
      redraw();
      loadImportance().catch((err) => notice(`cannot load importance: ${err.message}`, "error"));
    });
    hp.empty.hidden = hp.res.sessions.length > 0;
    hp.axisCols = axisColsOf(hp);
    drawAxesPicker(hp, pickChanged);
    redraw();
    if (Date.now() - impAt >= IMPORTANCE_MS || !hp.imp || hp.imp.metric !== hp.metric) await loadImportance();
    notice("");
  }

  const reload = () => load().catch((err) => notice(`cannot load: ${err.message}`, "error"));
  const refresh = throttled(reload, REFRESH_MS);
  // A live sweep changes some run every moment: with hundreds of rows the whole table is refetched less often.
  const slowRefresh = throttled(reload, REFRESH_MS * 10);
  connect(null, load, (m) => {
    const name = m.type === "env" ? m.env && m.env.name : m.env;
    if (!["env", "env_deleted", "meta", "run_color", "resync"].includes(m.type)) return;
    if (envs === null || envs.includes(name)) (hp.res.sessions.length > 200 ? slowRefresh : refresh)();
  });
}

function drawMetricSelect(hp, onPick) {
  const sel = h("select", { class: "hp-metric", title: "the metric that colours the lines and ranks the hparams",
    onchange: () => onPick(sel.value) }, hp.res.metrics.map((m) => h("option", { value: m, text: m, selected: m === hp.metric })));
  hp.metricBox.replaceChildren(...(hp.res.metrics.length ? [h("span", { class: "muted", text: "metric " }), sel] : []));
}

/** Breadcrumbs and CSV button in the header; axes picker, metric, count, plot + importance and table in #main. */
function buildChrome(hp, envs) {
  document.title = "hparams · paneboard";
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← envs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: envs ? `hparams of ${counted(envs.length, "env")}` : "hparams" }));
  const csvBtn = h("button", { type: "button", class: "btn hp-csv", text: "download CSV", onclick: () => download(hp) });
  $("tools").replaceChildren(csvBtn);

  hp.pickSummary = h("summary", { text: "axes" });
  const picker = h("details", { class: "hp-columns" }, hp.pickSummary);
  hp.pickList = h("div", { class: "hp-column-list" });
  picker.append(hp.pickList);
  hp.metricBox = h("span", { class: "hp-metric-box" });
  hp.count = h("span", { class: "hp-count" });
  hp.plot = h("div", { class: "hp-parcoords" });
  hp.importance = h("aside", { class: "hp-importance" });
  hp.table = h("table", { class: "hp-table" });
  hp.empty = h("div", { class: "empty", hidden: true,
    text: "No hparams logged yet (Client(config=...), SummaryWriter.add_hparams, an integration or the hparams op)." });
  $("main").replaceChildren(h("div", { class: "hp-head" }, picker, hp.metricBox, hp.count),
    h("div", { class: "hp-top" }, hp.plot, hp.importance), h("div", { class: "hp-table-wrap" }, hp.table), hp.empty);
}
