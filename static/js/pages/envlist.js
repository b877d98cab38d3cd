// pages/envlist.js — Visdom's env list (/envs; the home page is the runs table): search, sort, tree grouped by the
// prefix before the first "_", fork/rename/delete, the ticked envs opened as runs in Compare, Scalars or HParams.
import * as api from "../api.js";
import { h, toMs } from "../dom.js";
import { drawTable } from "./envlist_table.js";
import { firstRunHelp } from "../empty_states.js";
import { saveSelection, scopedPageUrl } from "../scope.js";

const $ = (id) => document.getElementById(id);
// Up to this many ticked envs travel in the URL by name (readable, shareable as is); more are saved as a selection
// (POST api/v1/selections, as /runs does) so the URL stays short: ?sel=<id>, not sixty names.
const NAMED_IN_URL = 4;
const COLUMNS = [["name", "Env"], ["panes", "Panes"], ["points", "Points"], ["updated", "Updated"], ["created", "Created"]];

/**
 * Render the env list into #main. connect(subscribe, load, handle) follows the live channel (app.js);
 * notice(text, kind) shows a status line.
 */
export function envListPage({ connect, notice }) {
  document.title = "Visdom envs · paneboard";
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← runs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: "Visdom envs" }));
  const list = { notice, envs: new Map(), selected: new Set(), collapsed: new Set(), sort: { key: "name", dir: 1 },
    filter: "", scheduled: false };
  buildChrome(list);
  const redraw = () => {
    if (!list.scheduled) {
      list.scheduled = true;
      requestAnimationFrame(() => drawTable(list));
    }
  };

  connect(null, async () => {
    const res = await api.listEnvs();
    list.envs.clear();
    for (const e of res.envs || []) list.envs.set(e.name, e);
    notice("");
    drawTable(list);
  }, (m, reload) => {
    if (m.type === "env" && m.env && typeof m.env.name === "string") {
      const old = list.envs.get(m.env.name);
      if (!old || !(toMs(old.updated) > toMs(m.env.updated))) list.envs.set(m.env.name, m.env);
      redraw();
    } else if (m.type === "env_deleted") {
      list.envs.delete(m.env);
      list.selected.delete(m.env);
      list.compareBtn.disabled = list.selected.size < 2;
      redraw();
    } else if (m.type === "resync" && reload) reload();
  });
}

/** Open `page` on the ticked envs: by name when a few (url(envs)), else as a saved selection. */
async function openTicked(list, page, url) {
  const envs = [...list.selected];
  if (envs.length <= NAMED_IN_URL) {
    window.location.href = url(envs);
    return;
  }
  try {
    window.location.href = scopedPageUrl(page, await saveSelection(envs));
  } catch (err) {
    list.notice(`cannot save the selection: ${err.message}`, "error");
  }
}

/** Sortable header, filter box and the Compare / Scalars / HParams buttons that take the ticked envs. */
function buildChrome(list) {
  list.head = h("tr", null, h("th", { class: "col-pick" }), COLUMNS.map(([key, label]) =>
    h("th", { class: `col-${key}`, dataset: { key }, onclick: () => {
      list.sort = { key, dir: list.sort.key === key ? -list.sort.dir : key === "name" ? 1 : -1 };
      drawTable(list);
    } }, label)), h("th", { class: "col-actions" }));
  list.body = h("tbody");
  list.empty = h("div", { hidden: true }, firstRunHelp("No envs yet"));
  const search = h("input", { type: "search", class: "filter", placeholder: "filter envs", "aria-label": "filter envs",
    oninput: () => { list.filter = search.value.trim().toLowerCase(); drawTable(list); } });
  list.compareBtn = h("button", { type: "button", class: "btn compare-btn", disabled: true, onclick: () => {
    openTicked(list, "compare", api.comparePageUrl);
  } }, "Compare");
  // Scalars view (TensorBoard-style): the ticked envs as its runs, every env when none is ticked.
  const scalarsBtn = h("button", { type: "button", class: "btn scalars-btn", onclick: () => {
    openTicked(list, "scalars", api.scalarsPageUrl);
  } }, "Scalars");
  const hparamsBtn = h("button", { type: "button", class: "btn hparams-btn", onclick: () => {
    openTicked(list, "hparams", api.hparamsPageUrl);
  } }, "HParams");
  const runsLink = h("a", { class: "btn runs-link", href: api.runsPageUrl(""), text: "Runs table" });
  $("tools").replaceChildren(search, list.compareBtn, scalarsBtn, hparamsBtn, runsLink);
  $("main").replaceChildren(h("div", { class: "env-list" },
    h("table", { class: "envs" }, h("thead", null, list.head), list.body), list.empty));
}
