// app.js — paneboard UI entry: reads the boot blob, renders the env list or one env's pane grid, applies live updates.
import * as api from "./api.js";
import { follow } from "./live.js";
import { moduleFor } from "./panes/registry.js";
import { loadPlotly } from "./panes/xy.js";
import { envListPage } from "./envlist.js";
import { comparePage } from "./compare.js";
import { scalarsPage } from "./scalars.js";
import { hparamsPage } from "./hparams.js";
import { workspace } from "./workspace.js";
import { pool, visibility } from "./lazy.js";
import { fmtInt, h, relTime, timeEl } from "./dom.js";
import { alertsBanner } from "./alerts.js";

const boot = readBoot();
api.setBase(boot.base);
const POINTS = Number(boot.points) > 0 ? Number(boot.points) : 2000;
const PARALLEL_FETCHES = 4; // pane reads in flight at once: the first screen arrives together, the server is not flooded

function readBoot() {
  const el = document.getElementById("boot");
  let b = {};
  try {
    b = JSON.parse(el ? el.textContent : "{}") || {};
  } catch (err) {
    console.warn("paneboard: bad boot blob", err);
  }
  return { page: "envs", env: null, base: "/", points: 2000, ...b };
}

// Relative times ("5 s ago") made by dom.js timeEl stay fresh.
setInterval(() => {
  for (const el of document.querySelectorAll("time[data-ts]")) el.textContent = relTime(Number(el.dataset.ts));
}, 1000);

const $ = (id) => document.getElementById(id);

function notice(text, kind = "info") {
  const el = $("notice");
  el.textContent = text || "";
  el.dataset.kind = kind;
  el.hidden = !text;
}

function setLiveState(state) {
  const el = $("live");
  el.dataset.state = state;
  el.querySelector(".live-label").textContent = { open: "live", connecting: "connecting…", closed: "offline" }[state] || state;
  el.title = state === "open" ? "live updates on" : "live connection lost, reconnecting";
  if (state === "open") document.body.dataset.live = "1";
  else delete document.body.dataset.live;
}

/** Follow the live channel for `subscribe` (env or null): load() on every (re)connect, handle(msg, reload) per message. */
const connect = (subscribe, load, handle) => follow({
  base: boot.base, subscribe, load, handle, onState: setLiveState,
  onError: (err) => notice(`cannot load: ${err.message}`, "error"),
  onReady: () => { document.body.dataset.ready = "1"; },
});

// ---------------------------------------------------------------- env page
function envPage(env) {
  document.title = `${env} · paneboard`;
  $("crumbs").replaceChildren(
    h("a", { href: api.homeUrl(), class: "back", title: "all envs", text: "← envs" }),
    h("span", { class: "sep", text: "/" }),
    h("span", { class: "crumb-current env-name", text: env }),
    h("span", { class: "env-stats", id: "env-stats" }));
  const search = h("input", { type: "search", class: "filter", placeholder: "filter panes", "aria-label": "filter panes",
    oninput: () => applyFilter() });
  const grid = h("div", { class: "grid", id: "grid" });
  const ws = workspace({ env, grid, notice, slots: () => slots });
  $("tools").replaceChildren(search, ...ws.tools());
  const empty = h("div", { class: "empty", hidden: true, text: "No panes yet: they appear here as your script creates them." });
  const alerts = alertsBanner(env, (win) => slots.get(win)?.card);
  $("main").replaceChildren(alerts.el, ws.metaBox, grid, empty);
  loadPlotly().catch(() => {}); // start the 4 MB download while the panes are fetched; errors surface per pane

  const slots = new Map(); // win -> slot
  const dirty = new Set(); // slots with pending extends
  // A pane out of view is only marked stale (live extends included); it is fetched whole when it comes into view.
  const vis = visibility((slot) => { if (slot.stale) fetchPane(slot); });
  const fetchSlot = pool(PARALLEL_FETCHES);
  let flushScheduled = false;
  let gone = false;

  function stats(e) {
    if (!e) return;
    $("env-stats").replaceChildren(`${fmtInt(e.panes)} panes · ${fmtInt(e.points)} points · updated `, timeEl(e.updated));
  }

  function applyFilter() {
    let re = null;
    try {
      re = search.value.trim() ? new RegExp(search.value.trim(), "i") : null;
    } catch {
      re = null;
    }
    for (const s of slots.values()) s.card.hidden = !!re && !re.test(s.title) && !re.test(s.win);
  }

  function createSlot(win) {
    const title = h("span", { class: "card-title", text: win });
    const info = h("span", { class: "card-info" });
    const body = h("div", { class: "card-body loading" });
    const card = h("section", { class: "card", dataset: { win, kind: "" } }, h("header", { class: "card-bar" }, title, info), body);
    const slot = { win, card, body, titleEl: title, info, title: win, kind: null, view: null, pane: null, version: -Infinity,
      fetching: false, again: false, removed: false, pending: [], pendingPoints: 0, chain: Promise.resolve(),
      visible: false, stale: true };
    slot.ctx = {
      env, win, points: POINTS, url: api.url,
      refetch: () => fetchPane(slot),
      setPoints: (n) => { card.dataset.points = String(n); },
      setInfo: (text, tip) => { info.textContent = text || ""; info.title = tip || ""; },
    };
    slots.set(win, slot);
    grid.appendChild(card);
    vis.observe(slot); // its first report comes after layout: a pane created by a live message loads if in view
    ws.attach(slot);
    empty.hidden = true;
    return slot;
  }

  function removeSlot(slot) {
    if (slot.removed) return;
    slot.removed = true;
    slots.delete(slot.win);
    dirty.delete(slot);
    vis.unobserve(slot);
    slot.card.remove();
    slot.chain.then(() => slot.view && slot.view.destroy()).catch(() => {});
    empty.hidden = slots.size > 0;
  }

  /** Run fn after everything already queued for this slot; a failure shows in the card and the queue goes on. */
  function enqueue(slot, fn) {
    slot.chain = slot.chain.then(() => (slot.removed ? undefined : fn())).catch((err) => {
      console.error(`paneboard: pane ${slot.win}:`, err);
      slot.body.appendChild(h("div", { class: "pane-error", text: `render failed: ${err && err.message ? err.message : err}` }));
    });
    return slot.chain;
  }

  /** Title and grid cell from a pane summary or a rendered pane: a placeholder card takes its final size at once. */
  function describe(slot, pane) {
    slot.title = String(pane.title || (pane.opts && pane.opts.title) || pane.win);
    slot.titleEl.textContent = slot.title;
    slot.titleEl.title = `${pane.win} (${pane.kind})`;
    ws.place(slot, pane.layout);
    applyFilter();
  }

  function applyPane(slot, pane) {
    slot.pane = pane;
    slot.version = Number.isFinite(pane.version) ? pane.version : -Infinity;
    describe(slot, pane);
    return enqueue(slot, async () => {
      slot.body.classList.remove("loading");
      if (slot.view && slot.kind === pane.kind) return slot.view.update(pane);
      if (slot.view) slot.view.destroy();
      slot.body.replaceChildren();
      slot.kind = pane.kind;
      slot.card.dataset.kind = String(pane.kind);
      slot.view = moduleFor(pane.kind).render(slot.body, pane, slot.ctx);
      return slot.view.ready;
    });
  }

  /**
   * (Re)fetch one pane in view and resolve once it is drawn; extends arriving meanwhile wait in slot.pending and the
   * newer ones apply after. A pane out of view is only marked stale: the visibility observer fetches it later.
   */
  async function fetchPane(slot) {
    if (!slot.visible) {
      slot.stale = true;
      return;
    }
    if (slot.fetching) {
      slot.again = true;
      return;
    }
    slot.fetching = true;
    slot.stale = false;
    try {
      do {
        slot.again = false;
        // Scrolled away while queued: skip the read, stay stale (pending extends are dropped: the refetch has them).
        const pane = await fetchSlot(() => (slot.visible && !slot.removed ? api.getPane(env, slot.win, POINTS) : null));
        if (slot.removed) return;
        if (!pane) {
          slot.stale = true;
          slot.pending = [];
          slot.pendingPoints = 0;
          return;
        }
        await applyPane(slot, pane);
      } while (slot.again && !slot.removed);
    } catch (err) {
      slot.stale = true; // the next (re)connect or scroll into view tries again
      if (err.status === 404) removeSlot(slot);
      else slot.ctx.setInfo("fetch failed", err.message);
    } finally {
      slot.fetching = false;
      if (slot.pending.length) schedule(slot);
    }
  }

  function schedule(slot) {
    dirty.add(slot);
    if (flushScheduled) return;
    flushScheduled = true;
    // One extendTraces per pane per animation frame (hidden tabs get no frames: fall back to a timer).
    if (document.hidden) setTimeout(flush, 250);
    else requestAnimationFrame(flush);
  }

  function flush() {
    flushScheduled = false;
    for (const slot of [...dirty]) {
      if (slot.fetching || !slot.view) continue; // stays dirty; fetchPane reschedules when done
      dirty.delete(slot);
      const msgs = slot.pending.filter((m) => !Number.isFinite(m.version) || m.version > slot.version);
      slot.pending = [];
      slot.pendingPoints = 0;
      if (!msgs.length) continue;
      const byIdx = new Map();
      let version = slot.version;
      for (const m of msgs) {
        if (Number.isFinite(m.version)) version = Math.max(version, m.version);
        for (const t of m.traces || []) {
          let acc = byIdx.get(t.idx);
          if (!acc) byIdx.set(t.idx, (acc = { idx: t.idx, name: t.name, x: [], y: [] }));
          if (Array.isArray(t.x)) for (const v of t.x) acc.x.push(v);
          if (Array.isArray(t.y)) for (const v of t.y) acc.y.push(v);
        }
      }
      slot.version = version;
      const merged = { version, traces: [...byIdx.values()] };
      enqueue(slot, () => slot.view.extend(merged));
    }
  }

  function onExtend(m) {
    let slot = slots.get(m.win);
    if (!slot) {
      fetchPane(createSlot(m.win)); // a pane we have not seen: fetch it whole (once in view)
      return;
    }
    if (!slot.fetching && (!slot.visible || slot.stale)) {
      // Out of view: nothing to draw, so the extend only marks it stale; its refetch will hold these points.
      slot.pending = [];
      slot.pendingPoints = 0;
      fetchPane(slot);
      return;
    }
    slot.pending.push(m);
    for (const t of m.traces || []) slot.pendingPoints += Array.isArray(t.y) ? t.y.length : 0;
    if (slot.pendingPoints > 4 * POINTS) {
      // Far behind (hidden tab, slow fetch): drop the backlog and take the downsampled pane instead.
      slot.pending = [];
      slot.pendingPoints = 0;
      fetchPane(slot);
      return;
    }
    schedule(slot);
  }

  async function loadAll() {
    let res;
    try {
      res = await api.getEnv(env); // summaries only: the data of each pane is fetched when its card is in view
    } catch (err) {
      if (err.status !== 404) throw err;
      for (const s of [...slots.values()]) removeSlot(s);
      gone = true;
      notice(`Env "${env}" does not exist (yet). Waiting for a script to create it…`, "warn");
      empty.hidden = true;
      return;
    }
    gone = false;
    notice("");
    ws.loadMeta();
    grid.classList.remove("gone");
    stats(res.env);
    alerts.sync(res.panes);
    const seen = new Set();
    let at = 0;
    for (const pane of res.panes || []) {
      seen.add(pane.win);
      const slot = slots.get(pane.win) || createSlot(pane.win);
      if (grid.children[at] !== slot.card) grid.insertBefore(slot.card, grid.children[at] || null); // server order
      at += 1;
      const same = slot.pane && slot.kind === pane.kind && slot.pane.created === pane.created;
      if (!slot.view) slot.pane = pane; // the placeholder sizes itself from the summary's opts
      describe(slot, pane); // title and layout may have changed while we were offline
      if (slot.fetching) slot.again = true;
      else if (!same || !(pane.version <= slot.version)) slot.stale = true;
    }
    for (const slot of [...slots.values()]) if (!seen.has(slot.win) && !slot.fetching) removeSlot(slot);
    empty.hidden = slots.size > 0;
    // "ready" means the panes in view are drawn: those are fetched now, the rest when they scroll into view.
    const work = [];
    for (const slot of slots.values()) if (vis.measure(slot) && slot.stale) work.push(fetchPane(slot));
    await Promise.all(work);
  }

  connect(env, loadAll, (m, reload) => {
    if (m.type === "env") {
      if (m.env && m.env.name === env) {
        stats(m.env);
        if (gone && reload) reload();
      }
      return;
    }
    if (m.type === "env_deleted") {
      if (m.env === env) {
        gone = true;
        grid.classList.add("gone");
        notice(`Env "${env}" was deleted. The panes below are what it last showed.`, "warn");
      }
      return;
    }
    if (m.env !== undefined && m.env !== env) return;
    alerts.onMessage(m);
    if (ws.onMessage(m)) return;
    if (m.type === "resync") {
      if (reload) reload();
    } else if (m.type === "pane") {
      const slot = slots.get(m.win);
      if (!slot) fetchPane(createSlot(m.win));
      else if (m.version !== slot.version) fetchPane(slot);
    } else if (m.type === "extend") {
      onExtend(m);
    } else if (m.type === "close") {
      if (m.win === null || m.win === undefined) for (const s of [...slots.values()]) removeSlot(s);
      else if (slots.has(m.win)) removeSlot(slots.get(m.win));
    }
  });
}

// ---------------------------------------------------------------- boot
if (boot.page === "env" && boot.env !== null && boot.env !== undefined) envPage(String(boot.env));
else if (boot.page === "compare") comparePage({ connect, points: POINTS, notice });
else if (boot.page === "scalars") scalarsPage({ connect, points: POINTS, notice });
else if (boot.page === "hparams") hparamsPage({ connect, notice });
else envListPage({ connect, notice });
