// pages/hparams.js — the HParams view (TensorBoard's HParams dashboard): one row per session across envs with its
// hparams and final metrics; sortable table with column picker, parallel coordinates (Plotly's, or SVG without
// WebGL) whose brushing filters the table, CSV download of what the table shows. Data: GET api/v1/hparams (WIRE.md §3).
import * as api from "../api.js";
import { counted, h, throttled } from "../dom.js";
import { drawPlot } from "./hparams_plot.js";
import { columnsOf, download, drawPicker, drawTable } from "./hparams_table.js";

const REFRESH_MS = 500; // live changes refetch at most this often

const $ = (id) => document.getElementById(id);

function envsFromUrl() {
  const raw = new URLSearchParams(window.location.search).get("envs");
  return raw === null ? null : [...new Set(raw.split(",").map((s) => s.trim()).filter(Boolean))];
}

export function hparamsPage({ connect, notice }) {
  const envs = envsFromUrl();
  const hp = {
    res: { hparams: [], metrics: [], sessions: [] },
    cols: [],
    hidden: new Set(), // column keys the user hid (kept across reloads)
    sort: { key: null, dir: "asc" },
    ranges: new Map(), // column key -> constraintrange from brushing
    dims: [], // column keys of the parcoords dimensions, in order
    noWebGL: false, // Plotly failed to draw parcoords once: SVG from then on
  };
  buildChrome(hp, envs);

  async function load() {
    const q = envs === null ? "" : `?envs=${envs.map(encodeURIComponent).join(",")}`;
    hp.res = await api.getJson(`api/v1/hparams${q}`);
    hp.cols = columnsOf(hp.res);
    const known = new Set(hp.cols.map((c) => c.key));
    hp.ranges = new Map([...hp.ranges].filter(([k]) => known.has(k)));
    hp.empty.hidden = hp.res.sessions.length > 0;
    drawPicker(hp);
    drawTable(hp);
    await drawPlot(hp, () => drawTable(hp));
    notice("");
  }

  const refresh = throttled(() => load().catch((err) => notice(`cannot load: ${err.message}`, "error")), REFRESH_MS);
  connect(null, load, (m) => {
    const name = m.type === "env" ? m.env && m.env.name : m.env;
    if (!["env", "env_deleted", "meta", "resync"].includes(m.type)) return;
    if (envs === null || envs.includes(name)) refresh();
  });
}

/** Breadcrumbs and CSV button in the header; column picker, session count, plot and table in #main. */
function buildChrome(hp, envs) {
  document.title = "hparams · paneboard";
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← envs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: envs ? `hparams of ${counted(envs.length, "env")}` : "hparams" }));
  const csvBtn = h("button", { type: "button", class: "btn hp-csv", text: "download CSV", onclick: () => download(hp) });
  $("tools").replaceChildren(csvBtn);

  const picker = h("details", { class: "hp-columns" }, h("summary", { text: "columns" }));
  hp.pickList = h("div", { class: "hp-column-list" });
  picker.append(hp.pickList);
  hp.count = h("span", { class: "hp-count" });
  hp.plot = h("div", { class: "hp-parcoords" });
  hp.table = h("table", { class: "hp-table" });
  hp.empty = h("div", { class: "empty", hidden: true, text: "No hparams logged yet (SummaryWriter.add_hparams or the hparams op)." });
  $("main").replaceChildren(h("div", { class: "hp-head" }, picker, hp.count), hp.plot,
    h("div", { class: "hp-table-wrap" }, hp.table), hp.empty);
}
