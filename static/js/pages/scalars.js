// pages/scalars.js — TensorBoard-style Scalars view: every `line` pane of the picked runs (envs) overlaid by title, sectioned by tag prefix, smoothed, live.
import * as api from "../api.js";
import { h } from "../dom.js";
import { customPanes, loadLayouts } from "./custom_scalars.js";
import { applyTagFilter, redraw } from "./scalars_charts.js";
import { colorOf, drawRuns, shownRuns, sideBar } from "./scalars_controls.js";
import { abTable, fetchGroups, groupState } from "./seed_groups.js";

const REFRESH_MS = 300; // live changes of a shown run refetch the charts at most this often

const $ = (id) => document.getElementById(id);

/** Runs named in ?envs=a,b; null when the URL names none (then every run starts picked, as in TensorBoard). */
function envsFromUrl() {
  const raw = new URLSearchParams(window.location.search).get("envs");
  if (raw === null) return null;
  return new Set(raw.split(",").map((s) => s.trim()).filter(Boolean));
}

export function scalarsPage({ connect, points, notice }) {
  document.title = "scalars · paneboard";
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← envs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: "scalars" }));
  const urlRuns = envsFromUrl();
  const sc = {
    points, notice, urlRuns,
    state: { smoothing: 0.6, xmode: "step", logY: false, outliers: true },
    picked: new Set(urlRuns || []),
    known: new Map(), // run -> colour, in order of first sight
    runs: [], // every env, sorted by name
    cards: new Map(), // tag -> {card, plot, first}
    secs: new Map(), // section name -> {el, body}
    res: { panes: [] }, // the last compare read (line panes of the shown runs)
    drawing: Promise.resolve(),
    // Custom-scalars layouts live in each run's meta and change rarely: read again when the runs change, or after 5 s.
    layoutCache: { key: null, at: 0, layout: {} },
    fetchSeq: 0, // a (re)connect's load and a live refresh may overlap: only the newest read is drawn
    groups: groupState(), // seed groups: when on, each chart shows one mean ± band per config group
    groupRes: null,
  };
  const refresh = refresher(sc);
  sc.tagFilter = h("input", { type: "search", class: "filter tag-filter", placeholder: "filter tags (regex)",
    "aria-label": "filter tags", oninput: () => applyTagFilter(sc) });
  $("tools").replaceChildren(sc.tagFilter);
  const side = sideBar(sc, { redraw: () => redraw(sc), refresh });
  sc.sections = h("div", { class: "sc-sections" });
  sc.empty = h("div", { class: "empty", hidden: true });
  sc.abBox = h("div", { class: "ab-holder" });
  // On a narrow screen the sidebar folds behind this button (CSS shows it there only).
  const sideToggle = h("button", { type: "button", class: "btn-small sc-side-toggle", "aria-expanded": "false",
    onclick: () => {
      const open = page.dataset.side !== "open";
      page.dataset.side = open ? "open" : "";
      sideToggle.setAttribute("aria-expanded", String(open));
    } }, "settings and runs");
  const page = h("div", { class: "scalars" }, sideToggle, side,
    h("div", { class: "sc-content" }, sc.abBox, sc.sections, sc.empty));
  $("main").replaceChildren(page);

  // The env-list subscription tells about every change of every env (summaries at most every 0.5 s per env):
  // one socket keeps any number of runs live, and new runs appear in the list as they start.
  connect(null, async () => {
    await loadRuns(sc, refresh);
    notice("");
    await fetchCharts(sc, refresh);
  }, (m) => {
    if (m.type === "env" && m.env && typeof m.env.name === "string") {
      if (!sc.runs.includes(m.env.name)) {
        loadRuns(sc, refresh).then(refresh, () => {});
      } else if (shownRuns(sc).includes(m.env.name)) refresh();
    } else if (m.type === "env_deleted") {
      sc.runs = sc.runs.filter((r) => r !== m.env);
      sc.picked.delete(m.env);
      drawRuns(sc, refresh);
      refresh();
    }
  });
}

/** refresh(): fetch the charts again within REFRESH_MS, once however often it is called, never two reads at once. */
function refresher(sc) {
  let timer = null;
  let loading = null;
  function refresh() {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      if (loading) {
        loading.then(refresh);
        return;
      }
      loading = fetchCharts(sc, refresh).catch((err) => sc.notice(`cannot load: ${err.message}`, "error"))
        .finally(() => { loading = null; });
    }, REFRESH_MS);
  }
  return refresh;
}

async function layoutsOf(sc, shown) {
  const key = shown.join("\n");
  if (key !== sc.layoutCache.key || Date.now() - sc.layoutCache.at > 5000) {
    sc.layoutCache = { key, at: Date.now(), layout: await loadLayouts(shown) };
  }
  return sc.layoutCache.layout;
}

const compareQuery = (sc, runs) => `envs=${runs.map(encodeURIComponent).join(",")}&points=${sc.points | 0}&walls=1`;

/** Read the line panes of the shown runs (plus custom-scalars charts) and draw them. */
async function fetchCharts(sc, refresh) {
  const seq = ++sc.fetchSeq;
  const shown = shownRuns(sc);
  let next;
  if (!shown.length || sc.groups.on) {
    next = { panes: [] };
  } else {
    try {
      next = await api.getJson(`api/v1/compare?${compareQuery(sc, shown)}`);
    } catch (err) {
      if (err.status !== 404) throw err;
      await loadRuns(sc, refresh); // a run was deleted meanwhile: read the run list again and retry once
      const again = shownRuns(sc);
      next = again.length ? await api.getJson(`api/v1/compare?${compareQuery(sc, again)}`) : { panes: [] };
    }
  }
  let groupRes = null;
  if (shown.length && sc.groups.on) {
    // Grouped: one chart per series, each group's mean ± band on the steps all its runs share.
    groupRes = await fetchGroups(sc.groups, shown, sc.points);
    next = { panes: groupRes.series.map((s) => ({ title: s.title, kind: "line", group: s, traces: [] })) };
  } else if (shown.length) {
    next = { ...next, panes: [...(next.panes || []), ...customPanes(next.panes || [], await layoutsOf(sc, shown))] };
  }
  if (seq !== sc.fetchSeq) return;
  sc.res = next;
  sc.groupRes = groupRes;
  sc.abBox.replaceChildren(...(groupRes && groupRes.tests.length ? [abTable(groupRes)] : []));
  await redraw(sc);
}

async function loadRuns(sc, refresh) {
  const r = await api.listEnvs();
  sc.runs = (r.envs || []).map((e) => String(e.name)).sort();
  if (!sc.urlRuns) for (const name of sc.runs) if (!sc.known.has(name)) sc.picked.add(name); // new runs start picked
  for (const name of sc.runs) colorOf(sc, name);
  drawRuns(sc, refresh);
}
