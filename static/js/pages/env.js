// pages/env.js — one env's page: header tools, the pane grid, and the live messages that keep it current.
import * as api from "../api.js";
import { alertsBanner } from "../alerts.js";
import { counted, h, throttled, timeEl } from "../dom.js";
import { afterScroll, farAway, pool, visibility } from "../lazy.js";
import { loadPlotly } from "../plotly_loader.js";
import { frameQueue } from "../frame_queue.js";
import { MANY_PANES, sections } from "../sections.js";
import { applyPending, onExtend } from "./env_extends.js";
import { cardResizer, sizeControl } from "./env_layout.js";
import { smoothingControl } from "../chart_prefs.js";
import { runPanel } from "./run_panel.js";
import { applyFilter, createSlot, describe, fetchPane, recycle, removeSlot } from "./env_slots.js";
import { afterLoad, followLinks, showPane } from "./env_target.js";
import { workspace } from "./workspace.js";

const STATS_MS = 300;
// Views further than this from the viewport are cleared on pages of many panes (drawn again when scrolled back to).
const FAR_PX = 2000;
const SCROLL_QUIET_MS = 120; // past MANY_PANES panes, those scrolled into view draw once scrolling pauses this long
const PARALLEL_FETCHES = 4; // pane reads in flight at once: the first screen arrives together, the server is not flooded

const $ = (id) => document.getElementById(id);

/**
 * Render env `env` into #main and follow it live. connect(subscribe, load, handle) follows the live channel
 * (app.js), points is the per-pane point budget, notice(text, kind) shows a status line.
 */
export function envPage({ env, connect, points, notice, only = null }) {
  // only: the one pane an embed shows (/embed/<env>/<win>); null shows them all.
  const page = { env, points, notice, only, slots: new Map(), gone: false };
  page.frames = frameQueue((slot) => applyPending(page, slot));
  // The header's counters change with every commit of a stream; a few redraws a second are enough to read them.
  page.showStats = throttled(() => showStats(page.latestEnv), STATS_MS);
  buildChrome(page);
  followLinks(page);
  loadPlotly().catch(() => {}); // start the 4 MB download while the panes are fetched; errors surface per pane
  // A pane out of view is only marked stale (live extends included); it is fetched whole when it comes into view.
  page.settled = afterScroll(SCROLL_QUIET_MS);
  page.vis = visibility((slot) => {
    if (!slot.stale) return;
    if (page.slots.size <= MANY_PANES) fetchPane(page, slot);
    else page.settled(() => { if (slot.visible && slot.stale) fetchPane(page, slot); });
  });
  page.far = farAway((slot) => recycle(page, slot), FAR_PX);
  page.fetchSlot = pool(PARALLEL_FETCHES);
  connect(env, () => loadAll(page), (m, reload) => handleMessage(page, m, reload));
}

/** Breadcrumbs, the pane filter and workspace tools in the header; alerts, the run panel and the grid in #main. */
function buildChrome(page) {
  const { env, notice } = page;
  document.title = `${env} · paneboard`;
  $("crumbs").replaceChildren(
    h("a", { href: api.homeUrl(), class: "back", title: "all runs", text: "← runs" }),
    h("span", { class: "sep", text: "/" }),
    h("span", { class: "crumb-current env-name", text: env }));
  page.run = runPanel({ env, notice });
  // The console's link sits by the run's status (the tools row is full: more there folds it into a menu).
  const consoleLink = h("a", { class: "crumb-console act-console", href: api.consolePageUrl(env), title: "what the job printed" }, "console");
  $("crumbs").append(page.run.badge, consoleLink, h("span", { class: "env-stats", id: "env-stats" }));
  page.search = h("input", { type: "search", class: "filter", placeholder: "filter panes", "aria-label": "filter panes",
    oninput: () => applyFilter(page) });
  // Says why an invalid regex filters nothing (the box alone only turns red).
  page.filterError = h("div", { class: "filter-error", role: "status", hidden: true });
  page.grid = h("div", { class: "sections", id: "grid" });
  page.sections = sections({ env, container: page.grid });
  page.nextOrder = 1e9; // panes created live sort after the ones loaded in the server's order
  page.ws = workspace({ env, grid: page.grid, notice, slots: () => page.slots, showConfig: () => page.run.showConfig() });
  page.resizer = cardResizer();
  $("tools").replaceChildren(page.search, page.run.toggle, ...page.ws.tools());
  // Chart options above the charts (the header's tools are full): the smoothing shared with Scalars and Compare
  // (line panes redraw themselves, panes/xy.js; off until chosen) and the chart size.
  page.viewBar = h("div", { class: "run-view-bar" }, smoothingControl(0).el, sizeControl(page));
  page.empty = h("div", { class: "empty", hidden: true, text: "No panes yet: they appear here as your script creates them." });
  page.alerts = alertsBanner(env, (win) => showPane(page, win));
  $("main").replaceChildren(page.filterError, page.alerts.el, page.run.banner, page.run.el, page.ws.metaBox,
    page.viewBar, page.grid, page.empty);
}

function showStats(e) {
  if (!e) return;
  $("env-stats").replaceChildren(`${counted(e.panes, "pane")} · ${counted(e.points, "point")} · updated `, timeEl(e.updated));
}

/** On every (re)connect: sync the cards with the env's pane list, then draw the panes in view. */
async function loadAll(page) {
  const { env, grid, slots } = page;
  let res;
  try {
    res = await api.getEnv(env); // summaries only: the data of each pane is fetched when its card is in view
  } catch (err) {
    if (err.status !== 404) throw err;
    for (const s of [...slots.values()]) removeSlot(page, s);
    page.gone = true;
    page.notice(`Run "${env}" does not exist (yet). Waiting for a script to create it…`, "warn");
    page.empty.hidden = true;
    return;
  }
  page.gone = false;
  page.notice("");
  page.ws.loadMeta();
  page.run.load().catch((err) => page.notice(`cannot load the run: ${err.message}`, "error"));
  grid.classList.remove("gone");
  showStats(res.env);
  page.alerts.sync(res.panes);
  const seen = new Set();
  let at = 0;
  for (const pane of res.panes || []) {
    if (page.only !== null && pane.win !== page.only) continue;
    seen.add(pane.win);
    const slot = slots.get(pane.win) || createSlot(page, pane.win);
    slot.order = at; // the server's order, kept inside each section (describe below files the card)
    at += 1;
    const same = slot.pane && slot.kind === pane.kind && slot.pane.created === pane.created;
    if (!slot.view) slot.pane = pane; // the placeholder sizes itself from the summary's opts
    describe(page, slot, pane); // title and layout may have changed while we were offline
    if (slot.fetching) slot.again = true;
    else if (!same || !(pane.version <= slot.version)) slot.stale = true;
  }
  for (const slot of [...slots.values()]) if (!seen.has(slot.win) && !slot.fetching) removeSlot(page, slot);
  page.empty.hidden = slots.size > 0;
  page.sections.flush(); // the cards placed above are in the page before asking which are in view
  afterLoad(page); // a link's pane: its section opened and scrolled to before asking which panes are in view
  // "ready" means the panes in view are drawn: those are fetched now, the rest when they scroll into view.
  const work = [];
  for (const slot of slots.values()) if (page.vis.measure(slot) && slot.stale) work.push(fetchPane(page, slot));
  await Promise.all(work);
}

/** One live message: env summaries and deletion first, then alerts, workspace, and the panes themselves. */
function handleMessage(page, m, reload) {
  const { env, slots } = page;
  if (m.type === "env") {
    if (m.env && m.env.name === env) {
      page.latestEnv = m.env;
      page.showStats();
      if (page.gone && reload) reload();
    }
    return;
  }
  if (m.type === "env_deleted") {
    if (m.env === env) {
      page.gone = true;
      page.grid.classList.add("gone");
      page.notice(`Run "${env}" was deleted. The panes below are what it last showed.`, "warn");
    }
    return;
  }
  if (m.env !== undefined && m.env !== env) return;
  if (page.only !== null && m.win !== undefined && m.win !== null && m.win !== page.only) return;
  page.alerts.onMessage(m);
  if (page.run.onMessage(m)) return;
  if (page.ws.onMessage(m)) return;
  if (m.type === "resync") {
    if (reload) reload();
  } else if (m.type === "pane") {
    const slot = slots.get(m.win);
    if (!slot) fetchPane(page, createSlot(page, m.win));
    else if (m.version !== slot.version) fetchPane(page, slot);
  } else if (m.type === "extend") {
    onExtend(page, m);
  } else if (m.type === "close") {
    if (m.win === null || m.win === undefined) for (const s of [...slots.values()]) removeSlot(page, s);
    else if (slots.has(m.win)) removeSlot(page, slots.get(m.win));
  }
}
