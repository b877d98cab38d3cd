// pages/runs.js — the runs table (/runs): one row per run, a query box (`lr < 0.01 and tags:baseline`, errors shown
// at their position), sortable columns, a column chooser and saved filters (both kept in localStorage), and the
// ticked runs (a saved selection) or the query opened in Scalars, Compare or HParams; projects (the name before the
// first "/") as groups above. It is the home page. Data: GET api/v1/runs?q= (WIRE: server/runs/query.py).
import * as api from "../api.js";
import { h, throttled } from "../dom.js";
import { ROW_H, columnsOf, defaultVisible, drawBody, drawHead, windowOf } from "./runs_table.js";
import { getJSON, setJSON } from "../storage.js";
import { firstRunHelp } from "../empty_states.js";
import { saveSelection, scopedPageUrl } from "../scope.js";
import { drawProjects } from "./runs_projects.js";
import { shareLabel, sharePanel } from "./runs_share.js";

const $ = (id) => document.getElementById(id);
const COLS_KEY = "paneboard.runs.columns";
const FILTERS_KEY = "paneboard.runs.filters";
const TYPE_MS = 250;      // the query runs once typing pauses this long
const REFRESH_MS = 1000;  // live changes refetch at most this often
const PAGE = 200;         // runs per fetched window (the first covers a tall screen)

const stored = (key, fallback) => getJSON("local", key, fallback);
const store = (key, v) => setJSON("local", key, v);

export function runsPage({ connect, notice }) {
  const params = new URLSearchParams(window.location.search);
  // rows: one slot per matching run in the server's order, filled a window (PAGE) at a time; envs: all of them.
  const t = { notice, loaded: false, rows: [], envs: [], cols: [], visible: null, sort: { key: "updated", dir: "desc" }, selected: new Set(),
    query: params.get("q") || "", seq: 0, pages: new Set() };
  buildChrome(t);

  const pageQuery = (offset) => ({ sort: t.sort.key, order: t.sort.dir, offset: String(offset), limit: String(PAGE) });

  async function load() {
    const seq = ++t.seq;
    const t0 = performance.now();
    let res;
    try {
      res = await api.listRuns(t.query, pageQuery(0));
    } catch (err) {
      if (err.status !== 400) throw err;
      if (seq === t.seq) showError(t, err);
      return;
    }
    if (seq !== t.seq) return; // a newer query answered first
    const t1 = performance.now();
    t.loaded = true;
    showError(t, null);
    t.envs = res.envs || [];
    t.rows = new Array(res.total || 0);
    (res.runs || []).forEach((r, i) => { t.rows[i] = r; });
    t.pages = new Set([0]);
    t.cols = columnsOf(res.columns);
    t.visible = visibleColumns(t.cols, t.rows.filter(Boolean));
    const known = new Set(t.envs);
    for (const env of [...t.selected]) if (!known.has(env)) t.selected.delete(env);
    redraw(t);
    drawPicker(t);
    drawProjects(t);
    notice("");
    // For bench/runs_table.py and the tests: how long the answer took and how long drawing it took.
    document.body.dataset.runsFetchMs = (t1 - t0).toFixed(1);
    document.body.dataset.runsRenderMs = (performance.now() - t1).toFixed(1);
    document.body.dataset.runsShown = String(t.rows.length);
  }
  t.load = () => load().catch((err) => notice(`cannot load runs: ${err.message}`, "error"));

  /** Fetch the windows of rows in view that are still placeholders, then draw them. */
  t.fill = async () => {
    const [first, last] = windowOf(t);
    const seq = t.seq;
    const wanted = [];
    for (let p = Math.floor(first / PAGE); p * PAGE < last; p++) if (!t.pages.has(p)) wanted.push(p);
    if (!wanted.length) return;
    wanted.forEach((p) => t.pages.add(p));
    try {
      const answers = await Promise.all(wanted.map((p) => api.listRuns(t.query, pageQuery(p * PAGE))));
      if (seq !== t.seq) return;
      answers.forEach((res, k) => (res.runs || []).forEach((r, i) => { t.rows[wanted[k] * PAGE + i] = r; }));
      drawBody(t, (env, on) => pick(t, env, on));
    } catch (err) {
      wanted.forEach((p) => t.pages.delete(p));
      notice(`cannot load runs: ${err.message}`, "error");
    }
  };
  t.resort = (key) => {
    t.sort = { key, dir: t.sort.key === key && t.sort.dir === "asc" ? "desc" : "asc" };
    t.load();
  };

  const typed = throttled(() => {
    const q = t.input.value.trim();
    if (q === t.query) return;
    t.query = q;
    const url = new URL(window.location.href);
    if (q) url.searchParams.set("q", q); else url.searchParams.delete("q");
    window.history.replaceState(null, "", url);
    t.load();
  }, TYPE_MS);
  t.input.addEventListener("input", typed);
  t.input.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { t.query = null; typed(); } });

  const refresh = throttled(() => t.load(), REFRESH_MS);
  connect(null, load, (m, reload) => {
    if (m.type === "resync" && reload) reload();
    else if (["env", "env_deleted", "run", "meta", "run_color"].includes(m.type)) refresh();
  });
}

function showError(t, err) {
  t.input.setAttribute("aria-invalid", err ? "true" : "false");
  t.error.hidden = !err;
  if (!err) return;
  const pos = err.data && Number.isInteger(err.data.position) ? err.data.position : null;
  const q = t.input.value;
  t.error.replaceChildren(err.message, pos === null ? "" : h("code", { class: "runs-error-at" },
    ` ${q.slice(Math.max(0, pos - 20), pos)}▲${q.slice(pos, pos + 20)}`));
}

function redraw(t) {
  const onPick = (env, on) => pick(t, env, on);
  drawHead(t, t.resort, onPick);
  drawBody(t, onPick);
  t.fill();
  t.count.textContent = `${t.rows.length.toLocaleString("en-US")} run${t.rows.length === 1 ? "" : "s"}` +
    (t.selected.size ? ` · ${t.selected.size} selected` : "");
  const scoped = t.selected.size > 0 || !!t.query;
  t.compareBtn.disabled = t.selected.size === 1 || !scoped || (!t.selected.size && t.rows.length < 1);
  t.compareBtn.title = scoped ? `compare ${t.selected.size ? "the ticked runs" : "the runs of this query"}` : "tick runs or type a query to compare them";
  for (const btn of [t.scalarsBtn, t.hparamsBtn]) {
    btn.title = `open ${t.selected.size ? `the ${t.selected.size} ticked runs` : t.query ? "the runs of this query" : "every run"}`;
  }
  const shareBtn = t.shareBody && t.shareBody.querySelector(".act-share");
  if (shareBtn) shareBtn.textContent = shareLabel(t);
  // No run at all teaches how to log one; a query that matches none says so (the table would just be empty).
  const none = t.rows.length === 0;
  t.wrap.hidden = none;
  t.emptyBox.hidden = !none;
  if (none && t.loaded) {
    t.emptyBox.replaceChildren(t.query ? h("div", { class: "empty no-match" }, "No run matches this query. ",
      h("a", { href: api.runsPageUrl(""), text: "Show every run" }), ".") : firstRunHelp());
  }
}

/** Open a page on the ticked runs (saved as a short selection) or else on the current query. */
async function openScoped(t, page) {
  let scope = t.query ? { q: t.query } : null;
  try {
    if (t.selected.size) scope = await saveSelection([...t.selected]);
  } catch (err) {
    t.notice(`cannot save the selection: ${err.message}`, "error");
    return;
  }
  window.location.href = scopedPageUrl(page, scope);
}

function pick(t, env, on) {
  const envs = env === null ? t.envs : [env];
  for (const e of envs) if (on) t.selected.add(e); else t.selected.delete(e);
  redraw(t);
}

/**
 * Columns shown: the user's choice for the columns it knew, the defaults (from the runs the query matched) for the
 * others, so a sweep's metric is in view even after columns were picked on another query.
 */
function visibleColumns(cols, rows) {
  const saved = stored(COLS_KEY, null);
  const defaults = defaultVisible(cols, rows);
  if (!saved) return defaults;
  const shown = new Set(Array.isArray(saved) ? saved : saved.shown || []);
  const known = new Set(Array.isArray(saved) ? saved : saved.known || []);
  return new Set(cols.filter((c) => c.fixed || (known.has(c.key) ? shown.has(c.key) : defaults.has(c.key))).map((c) => c.key));
}

/** The column chooser: every column with a checkbox; the choice is kept for the next visit. */
function drawPicker(t) {
  const groups = [["run", (c) => !c.group], ["config", (c) => c.group === "config"], ["summaries", (c) => c.group === "summary"]];
  t.pickList.replaceChildren(...groups.flatMap(([name, test]) => {
    const cols = t.cols.filter((c) => test(c) && !c.fixed);
    return cols.length ? [h("div", { class: "muted", text: name }), ...cols.map((c) => {
      const box = h("input", { type: "checkbox", onchange: () => {
        if (box.checked) t.visible.add(c.key); else t.visible.delete(c.key);
        // Kept with the columns there were: a column first seen later (a new sweep's metric) shows by default.
        store(COLS_KEY, { shown: [...t.visible], known: t.cols.map((x) => x.key) });
        redraw(t);
      } });
      box.checked = t.visible.has(c.key);
      return h("label", null, box, ` ${c.label}`);
    })] : [];
  }));
}

/** Saved filters: named queries in localStorage; pick one to run it. */
function drawSaved(t) {
  const filters = stored(FILTERS_KEY, {});
  const names = Object.keys(filters).sort();
  t.savedList.replaceChildren(
    h("button", { type: "button", class: "btn-small act-save-filter", disabled: !t.input.value.trim(), onclick: () => {
      const name = window.prompt("Save this filter as", t.input.value.trim().slice(0, 40));
      if (!name) return;
      store(FILTERS_KEY, { ...stored(FILTERS_KEY, {}), [name]: t.input.value.trim() });
      drawSaved(t);
    } }, "save current filter"),
    ...(names.length ? names : ["(none saved)"]).map((name) => (filters[name] === undefined ? h("div", { class: "muted", text: name })
      : h("div", { class: "saved-row" },
        h("a", { href: "#", class: "saved-filter", title: filters[name], text: name, onclick: (ev) => {
          ev.preventDefault();
          t.input.value = filters[name];
          t.input.dispatchEvent(new Event("input"));
          t.saved.open = false;
        } }),
        h("button", { type: "button", class: "btn-small danger", title: `forget ${name}`, onclick: () => {
          const all = stored(FILTERS_KEY, {});
          delete all[name];
          store(FILTERS_KEY, all);
          drawSaved(t);
        } }, "×")))));
}

function buildChrome(t) {
  document.title = "runs · paneboard";
  $("crumbs").replaceChildren(h("span", { class: "crumb-current", text: "runs" }));
  const opener = (cls, page, label) => h("button", { type: "button", class: `btn ${cls}`, onclick: () => openScoped(t, page) }, label);
  t.scalarsBtn = opener("scalars-btn", "scalars", "Scalars");
  t.compareBtn = opener("compare-btn", "compare", "Compare");
  t.hparamsBtn = opener("hparams-btn", "hparams", "HParams");
  // Visdom users look for their envs list: it stays, one click away, under the Visdom word.
  const envsLink = h("a", { class: "btn-small envs-link", href: api.url("envs"), title: "the Visdom view: envs and their panes",
    text: "Visdom envs" });
  $("tools").replaceChildren(h("span", { class: "muted open-label", text: "open in" }), t.scalarsBtn, t.compareBtn, t.hparamsBtn, envsLink);
  t.input = h("input", { type: "search", class: "runs-query", placeholder: 'query: lr < 0.01 and tags:baseline and loss.min < 0.3',
    "aria-label": "run query", spellcheck: "false" });
  t.input.value = t.query;
  t.error = h("div", { class: "runs-error", role: "alert", hidden: true });
  t.count = h("span", { class: "runs-count" });
  t.pickList = h("div", { class: "list" });
  const columns = h("details", { class: "runs-columns" }, h("summary", { class: "btn-small", text: "columns" }), t.pickList);
  t.savedList = h("div", { class: "list" });
  t.saved = h("details", { class: "runs-saved", ontoggle: () => drawSaved(t) }, h("summary", { class: "btn-small", text: "saved filters" }), t.savedList);
  t.head = h("thead");
  t.body = h("tbody");
  t.table = h("table", { class: "runs-table" }, t.head, t.body);
  t.wrap = h("div", { class: "runs-wrap" }, t.table);
  let frame = 0;
  t.wrap.addEventListener("scroll", () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      const [first, last] = t.window || [0, 0];
      const top = Math.floor(t.wrap.scrollTop / ROW_H);
      if (top < first + 5 || top + t.wrap.clientHeight / ROW_H > last - 5) {
        drawBody(t, (env, on) => pick(t, env, on));
        t.fill();
      }
    });
  });
  t.projects = h("div", { class: "runs-projects", role: "navigation", "aria-label": "projects" });
  t.emptyBox = h("div", { class: "runs-empty", hidden: true });
  // Share links are an admin's: a share link's reader (read-only) is not offered them.
  const share = document.body.dataset.readonly === "1" ? "" : sharePanel(t);
  $("main").replaceChildren(h("div", { class: "runs-head" }, t.input, columns, t.saved, share, t.count, t.error), t.projects,
    t.wrap, t.emptyBox);
}
