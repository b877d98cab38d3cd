// pages/scalars.js — TensorBoard-style Scalars view of any number of runs: charts read as they scroll into view (one
// budgeted read of every shown run each), live updates fetch only the new points of the runs that changed.
import { smoothingOf } from "../chart_prefs.js";
import * as api from "../api.js";
import { lastX, listCharts, mergeSeries, readChart, readMatching, seriesKey } from "../chart_reads.js";
import { h } from "../dom.js";
import { afterScroll, pool, visibility } from "../lazy.js";
import { customCharts } from "./custom_scalars.js";
import { drawChart, needsDraw, redraw, removeCard } from "./scalars_charts.js";
import { layoutCards, notePlotted } from "./scalars_window.js";
import { matchCharts, matchTools } from "./scalars_match.js";
import { drawRuns, shownRuns, sideBar } from "./scalars_controls.js";
import { readMarks, setMarks } from "./run_marks.js";
import { heardRunColor } from "../run_colors.js";
import { overlayCharts, viewsListed, viewTools } from "./scalars_views.js";
import { abTable, fetchGroups, groupLegend, groupOffer, groupState } from "./seed_groups.js";
import { scopeBar, scopeEnvs, scopeFromUrl } from "../scope.js";

const REFRESH_MS = 300; // live changes of shown runs are read at most this often
const SCROLL_QUIET_MS = 120; // past MANY_TAGS, charts scrolled into view draw once scrolling pauses this long
const READS = 2; // chart reads in flight at once: one drawn while the next is read
const REREAD_FACTOR = 4; // a series grown by live appends past this many times its share is read afresh

const $ = (id) => document.getElementById(id);


export function scalarsPage({ connect, points, notice }) {
  document.title = "scalars · paneboard";
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← runs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: "scalars" }));
  // The runs in view: ?q= (a runs query), ?sel= (a saved selection) or ?envs=a,b; none: every run (TensorBoard).
  const scope = scopeFromUrl();
  const urlRuns = scope && scope.envs ? new Set(scope.envs) : null;
  const sc = {
    points, notice, urlRuns, scope,
    state: { smoothing: smoothingOf(0.6), xmode: "step", logY: false, outliers: true },
    picked: new Set(urlRuns || []),
    known: new Set(), // runs seen so far (a run first seen later starts picked)
    seen: new Set(), // every run heard of on the live channel, in view or not
    runs: [], // every env, sorted by name
    shown: [], shownSet: new Set(), shownKey: null,
    charts: new Map(), // key (tag) -> {title, envs, wins, held, loaded, visible, card, plot, ...}
    secs: new Map(), // section name -> {el, body}
    drawing: Promise.resolve(),
    paneCounts: new Map(), // run -> its pane count at the last chart list: a change means new tags
    dirty: new Set(), // runs with new points since the last update
    needIndex: true, indexed: false,
    groups: groupState(), // seed groups: when on, each chart shows one mean ± band per config group
    groupRes: null,
    read: pool(READS),
    openSecs: new Map(), // section -> opened (true) or closed (false) by the user; else by the tag count
    secPages: new Map(), // section -> cards shown in it, past MANY_TAGS (its "show more" adds a page)
    plotted: new Set(), // charts drawn now, oldest first (scalars_window.js keeps a bounded number)
  };
  sc.layout = () => layoutCards(sc);
  sc.onPlotted = (chart) => notePlotted(sc, chart);
  sc.sel = { runs: sc.runs, picked: sc.picked, pinned: new Set(), baseline: null }; // run_selector.js
  setMarks(sc.sel, readMarks("scalars")); // pins and baseline kept from the last visit (or named in the URL)
  // Past MANY_TAGS the charts a fast scroll passes draw once it pauses (as run pages do), not while frames are due.
  const settled = afterScroll(SCROLL_QUIET_MS);
  sc.vis = visibility((chart) => {
    if (chart.loaded && !chart.pending.size && !chart.stale && !chart.first) return;
    if (document.body.dataset.scalarsMany !== "1") loadChart(sc, chart);
    else settled(() => { if (chart.visible) loadChart(sc, chart); });
  });
  const refresh = refresher(sc);
  sc.redrawAll = () => redraw(sc);
  sc.tagFilter = h("input", { type: "search", class: "filter tag-filter", placeholder: "filter tags (regex)",
    "aria-label": "filter tags", oninput: () => layoutCards(sc) });
  // A view, overlay or matching chart added changes the specs, not the runs' tags: the last chart list serves.
  sc.viewsChanged = () => {
    if (!sc.needIndex) sc.respecOnly = true;
    sc.needIndex = true;
    refresh(0); // a click: answered now, not after the live updates' REFRESH_MS
  };
  $("tools").replaceChildren(viewTools(sc, sc.viewsChanged), matchTools(sc, sc.viewsChanged), sc.tagFilter);
  // A pick draws at once from what the charts hold (hiding runs needs no read); refresh() then reads what is new.
  const reshow = () => {
    sc.shown = shownRuns(sc);
    sc.shownSet = new Set(sc.shown);
    sc.shownSig = sc.shown.join("\n");
    if (!sc.groups.on) redraw(sc);
  };
  const side = sideBar(sc, { redraw: () => redraw(sc), refresh, reread: () => rereadAll(sc, refresh), reshow });
  sc.sections = h("div", { class: "sc-sections" });
  sc.empty = h("div", { class: "empty", hidden: true });
  sc.abBox = h("div", { class: "ab-holder" }); // under the charts: the bands come first
  sc.groupBox = h("div", { class: "ab-holder" }); // the groups' legend, above the charts
  sc.offerBox = h("div", { class: "offer-holder" });
  // On a narrow screen the sidebar folds behind this button (CSS shows it there only).
  const sideToggle = h("button", { type: "button", class: "btn-small sc-side-toggle", "aria-expanded": "false",
    onclick: () => {
      const open = page.dataset.side !== "open";
      page.dataset.side = open ? "open" : "";
      sideToggle.setAttribute("aria-expanded", String(open));
    } }, "settings and runs");
  sc.scopeBox = h("div", { class: "scope-holder" });
  const page = h("div", { class: "scalars" }, sideToggle, side,
    h("div", { class: "sc-content" }, sc.scopeBox, sc.offerBox, sc.groupBox, sc.sections, sc.abBox, sc.empty));
  $("main").replaceChildren(page);
  // Run colours differ per theme (each capped to read on its background): swatches and lines follow a switch.
  document.addEventListener("paneboard:theme", () => { drawRuns(sc); redraw(sc); });

  // The env-list subscription tells about every change of every env (summaries at most every 0.5 s per env):
  // one socket keeps any number of runs live, and new runs appear in the list as they start.
  connect(null, async () => {
    await loadRuns(sc);
    sc.needIndex = true;
    sc.respecOnly = false;
    for (const c of sc.charts.values()) c.loaded = false; // a reconnect may have missed points: read afresh
    await update(sc);
    notice("");
  }, (m) => {
    if (m.type === "env" && m.env && typeof m.env.name === "string") {
      const name = m.env.name;
      if (!sc.runs.includes(name)) {
        if (sc.scope && sc.seen.has(name)) return; // a run outside the query: asked about once, not per update
        sc.seen.add(name);
        loadRuns(sc).then(() => { Object.assign(sc, { needIndex: true, respecOnly: false }); refresh(); }, () => {});
      } else if (sc.shownSet.has(name)) {
        sc.dirty.add(name);
        if (sc.paneCounts.get(name) !== m.env.panes) Object.assign(sc, { needIndex: true, respecOnly: false });
        refresh();
      }
    } else if (m.type === "run_color") { // kept on the server, maybe by another browser: drawn here at once
      heardRunColor(m.env, m.color);
      drawRuns(sc);
      if (sc.shownSet.has(m.env)) redraw(sc);
    } else if (m.type === "env_deleted") {
      sc.runs = sc.runs.filter((r) => r !== m.env);
      sc.picked.delete(m.env);
      drawRuns(sc);
      refresh();
    }
  });
}

/** refresh(): update within REFRESH_MS (or `wait` ms), once however often it is called, never two updates at once. */
function refresher(sc) {
  let timer = null;
  let loading = null;
  function refresh(wait = REFRESH_MS) {
    if (timer && wait >= REFRESH_MS) return;
    clearTimeout(timer); // a sooner call (a user's action) replaces the live updates' pending one
    timer = setTimeout(() => {
      timer = null;
      if (loading) {
        loading.then(refresh);
        return;
      }
      // A refusal is shown once and not retried on a timer: the next change (a pick, new points) tries again,
      // and a success clears it.
      loading = update(sc).then(() => { if (sc.failed) sc.notice(""); sc.failed = false; }, (err) => {
        sc.failed = true;
        sc.notice(`cannot load: ${err.message}`, "error");
      }).finally(() => { loading = null; });
    }, wait);
  }
  return refresh;
}

/** The runs to name in a read: null (every run) when all are shown, which keeps a sweep's URLs short. */
const envsArg = (sc, envs) => (!sc.scope && envs.length === sc.runs.length && sc.shown.length === sc.runs.length ? null : envs);

/** Bring the charts up to date: the chart list when runs or tags changed, new points of changed runs. */
async function update(sc) {
  const shown = shownRuns(sc);
  const key = shown.join("\n");
  const pickChanged = key !== sc.shownKey;
  sc.shown = shown;
  sc.shownSet = new Set(shown);
  sc.shownKey = key;
  sc.shownSig = key;
  if (sc.groups.on) {
    sc.offerBox.replaceChildren();
    await updateGroups(sc);
    return;
  }
  if (sc.groupRes) { // leaving the grouped view: its charts go
    for (const c of sc.charts.values()) removeCard(sc, c);
    sc.charts.clear();
    sc.groupRes = null;
    sc.abBox.replaceChildren();
    sc.groupBox.replaceChildren();
    sc.needIndex = true;
    sc.respecOnly = false;
  }
  if (pickChanged || sc.needIndex) await loadIndex(sc);
  // A sweep whose runs form groups is offered the grouped view first (once; not awaited: the runs draw meanwhile).
  if (!sc.groups.offered) groupOffer(sc.groups, sc.shown).then((box) => box && sc.offerBox.replaceChildren(box), () => {});
  const dirty = sc.dirty;
  sc.dirty = new Set();
  const work = [];
  for (const chart of sc.charts.values()) {
    for (const env of chart.envs) if (dirty.has(env)) chart.pending.add(env);
    // Runs left the picked set: draw without them (unless a run search already drew these runs).
    if (pickChanged && chart.loaded && needsDraw(sc, chart)) chart.stale = true;
    if (!chart.loaded || chart.pending.size || chart.stale) {
      if (chart.card && (chart.visible || sc.vis.measure(chart))) work.push(loadChart(sc, chart));
    }
  }
  await Promise.all(work);
  layoutCards(sc);
  document.body.dataset.scalarsUpdated = String(sc.shown.length); // tests: the update for these runs is done
}

/** Read the chart list of the shown runs; add, keep or drop cards; new member runs of a chart are read for it. */
async function loadIndex(sc) {
  const reuse = sc.respecOnly && sc.lastIndex && sc.lastIndex.key === sc.shownKey;
  sc.needIndex = false;
  sc.respecOnly = false;
  let idx = { charts: [], panes: {}, custom_scalars: {} };
  if (reuse) idx = sc.lastIndex.idx;
  else if (sc.shown.length) idx = await listCharts(envsArg(sc, sc.shown));
  sc.lastIndex = { key: sc.shownKey, idx };
  sc.indexed = true;
  for (const [env, n] of Object.entries(idx.panes || {})) sc.paneCounts.set(env, n);
  const wanted = new Map();
  for (const c of idx.charts) if (c.kind === "line") wanted.set(c.title, { title: c.title, envs: c.envs, wins: c.wins });
  const tags = [...wanted.keys()];
  viewsListed(sc, idx.views, tags, sc.viewsChanged); // may apply ?view=, which sets sc.overlays
  // Custom scalars and the user's overlays: charts of several tags, each part's tag read for the chart.
  for (const spec of [...customCharts(tags, idx.custom_scalars), ...overlayCharts(sc.overlays, tags)]) {
    const envs = [...new Set(spec.parts.flatMap((p) => wanted.get(p.tag).envs))];
    wanted.set(spec.title, { title: spec.title, envs, wins: [], parts: spec.parts });
  }
  for (const spec of matchCharts(sc.matches)) wanted.set(spec.title, { ...spec, envs: [...sc.shown], wins: [] });
  for (const [tag, chart] of [...sc.charts]) {
    if (wanted.has(tag)) continue;
    removeCard(sc, chart);
    sc.charts.delete(tag);
  }
  for (const [tag, spec] of wanted) {
    let chart = sc.charts.get(tag);
    if (!chart) { // its card is made when layoutCards places it (past MANY_TAGS, maybe never)
      chart = { ...spec, held: new Map(), pending: new Set(), loaded: false, visible: false, stale: false, busy: null,
        card: null };
      sc.charts.set(tag, chart);
      continue;
    }
    const had = new Set(chart.envs);
    for (const env of spec.envs) if (!had.has(env)) chart.pending.add(env);
    if (JSON.stringify(chart.parts) !== JSON.stringify(spec.parts)) chart.loaded = false; // an overlay redefined
    Object.assign(chart, { envs: spec.envs, parts: spec.parts });
  }
  layoutCards(sc);
}

/** Load (or update) one chart's data and draw it; one read per chart at a time. */
function loadChart(sc, chart) {
  if (chart.busy) return chart.busy.then(() => (chart.loaded && !chart.pending.size && !chart.stale ? null
    : loadChart(sc, chart)));
  const draw = () => (needsDraw(sc, chart) ? drawChart(sc, chart) : null);
  chart.busy = sc.read(() => fillChart(sc, chart)).then(draw).catch((err) => {
    if (err && err.status === 404) {
      sc.needIndex = true; // a run went away meanwhile: the next update lists the charts again
      sc.respecOnly = false;
      return;
    }
    throw err;
  }).finally(() => { chart.busy = null; });
  return chart.busy;
}

async function fillChart(sc, chart) {
  if (!chart.card || !chart.card.isConnected) return;
  const width = chart.plot.clientWidth || 600;
  const walls = sc.state.xmode !== "step";
  const shownMembers = chart.envs.filter((e) => sc.shownSet.has(e));
  if (chart.pattern) { // every tag matching a glob, one batched read (live changes read it whole again)
    chart.pending.clear();
    const res = sc.shown.length ? await readMatching(envsArg(sc, sc.shown), { pattern: chart.pattern, width }) : { series: [] };
    chart.held = new Map(res.series.map((s) => [seriesKey(s), { ...s, suffix: s.title }]));
    chart.version = (chart.version || 0) + 1;
    chart.loaded = true;
    return;
  }
  if (chart.parts) { // custom scalars: each part's tag, read whole (these charts are few and small)
    chart.pending.clear();
    const held = new Map();
    await Promise.all(chart.parts.map(async (p, i) => {
      if (!shownMembers.length) return;
      const res = await readChart(envsArg(sc, shownMembers), { title: p.tag, width, walls });
      for (const s of res.series) held.set(`${i}\n${seriesKey(s)}`, { ...s, part: i, suffix: p.role || p.tag });
    }));
    chart.held = held;
    chart.version = (chart.version || 0) + 1;
    chart.loaded = true;
    return;
  }
  const full = !chart.loaded || (walls && !chart.walls);
  if (full) {
    chart.pending.clear();
    const res = shownMembers.length ? await readChart(envsArg(sc, shownMembers), { title: chart.title, width, walls })
      : { perSeries: 0, series: [] };
    chart.held = new Map(res.series.map((s) => [seriesKey(s), s]));
    chart.version = (chart.version || 0) + 1;
    chart.perSeries = res.perSeries;
    chart.walls = walls;
    chart.loaded = true;
    return;
  }
  const envs = [...chart.pending].filter((e) => sc.shownSet.has(e));
  chart.pending.clear();
  if (!envs.length) return;
  const res = await readChart(envs, { title: chart.title, width, walls: chart.walls, after: lastX(chart.held, envs) });
  if (mergeSeries(chart.held, res.series)) chart.version = (chart.version || 0) + 1;
  const cap = REREAD_FACTOR * Math.max(chart.perSeries || 0, 64);
  if ([...chart.held.values()].some((s) => s.x.length > cap)) chart.loaded = false; // next time in view: afresh
}

/** Axis mode needs wall times the charts may not hold: read the charts in view again. */
function rereadAll(sc, refresh) {
  for (const c of sc.charts.values()) if (sc.state.xmode !== "step" && !c.walls) c.loaded = false;
  redraw(sc);
  refresh();
}

/** Grouped: one chart per series, each group's mean ± band on the steps all its runs share. */
async function updateGroups(sc) {
  const groupRes = sc.shown.length ? await fetchGroups(sc.groups, sc.shown, sc.points) : { series: [], tests: [], groups: [] };
  sc.groupRes = groupRes;
  const wanted = new Set(groupRes.series.map((s) => s.title));
  for (const [tag, chart] of [...sc.charts]) {
    if (chart.group && wanted.has(tag)) continue;
    removeCard(sc, chart);
    sc.charts.delete(tag);
  }
  for (const s of groupRes.series) {
    let chart = sc.charts.get(s.title);
    if (!chart) {
      chart = { title: s.title, envs: [], wins: [], held: new Map(), pending: new Set(), loaded: true, visible: true,
        card: null };
      sc.charts.set(s.title, chart);
    }
    chart.group = s;
  }
  sc.groupBox.replaceChildren(...(groupRes.groups.length ? [groupLegend(groupRes)] : []));
  sc.abBox.replaceChildren(...(groupRes.tests.length ? [abTable(groupRes, sc.groups)] : []));
  layoutCards(sc);
  for (const chart of sc.charts.values()) await drawChart(sc, chart);
  sc.needIndex = true;
  sc.respecOnly = false;
}

async function loadRuns(sc) {
  const { scope } = sc;
  if (scope && (scope.q || scope.sel)) {
    // A query is asked again on each load: a sweep's run that starts later joins the view when it matches.
    let err = null;
    try {
      sc.runs = [...await scopeEnvs(scope)].sort();
    } catch (e) {
      if (e.status !== 400 && e.status !== 404) throw e;
      err = e;
      sc.runs = [];
    }
    sc.scopeBox.replaceChildren(scopeBar(scope, sc.runs.length, err));
  } else {
    const r = await api.listEnvs();
    sc.runs = (r.envs || []).map((e) => String(e.name)).sort();
    sc.scopeBox.replaceChildren(scopeBar(scope, sc.runs.length));
  }
  for (const name of sc.runs) {
    if (!sc.urlRuns && !sc.known.has(name)) sc.picked.add(name); // new runs start picked
    sc.known.add(name);
  }
  drawRuns(sc);
}
