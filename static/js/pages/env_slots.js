// pages/env_slots.js — the env page's pane cards ("slots"): create, fetch when in view, draw by kind, remove.
import * as api from "../api.js";
import { h } from "../dom.js";
import { moduleFor } from "../panes/registry.js";
import { nearViewport } from "../lazy.js";
import { MANY_PANES } from "../sections.js";
import { regexError } from "../smoothing.js";
import { fitText } from "./env_layout.js";

/** The filter box's regex (null: none, or invalid), compiled once per text. */
function filterRegex(page) {
  const text = page.search.value.trim();
  if (page.filterText !== text) {
    const bad = text ? regexError(text) : null;
    page.filterText = text;
    page.filterBad = bad;
    page.filterRe = text && !bad ? new RegExp(text, "i") : null;
  }
  return page.filterRe;
}

/** Hide one card when its title and win both miss the filter's regex. */
function filterSlot(page, slot) {
  const re = filterRegex(page);
  slot.card.hidden = !!re && !re.test(slot.title) && !re.test(slot.win);
}

/** Hide the cards whose title and win both miss the filter box's regex; an invalid regex hides nothing and says why. */
export function applyFilter(page) {
  filterRegex(page);
  const bad = page.filterBad;
  page.search.toggleAttribute("aria-invalid", !!bad);
  page.search.title = bad ? `invalid regex: ${bad}` : "";
  page.filterError.textContent = bad ? `invalid regex: ${bad}` : "";
  page.filterError.hidden = !bad;
  for (const s of page.slots.values()) filterSlot(page, s);
  page.sections.filtered();
}

/** A placeholder card for pane `win`, appended to the grid and watched for visibility; its data comes later. */
export function createSlot(page, win) {
  const title = h("span", { class: "card-title", text: win });
  const info = h("span", { class: "card-info" });
  const body = h("div", { class: "card-body loading" });
  const card = h("section", { class: "card", dataset: { win, kind: "" } }, h("header", { class: "card-bar" }, title, info), body);
  const slot = { win, card, body, titleEl: title, info, title: win, kind: null, view: null, pane: null, version: -Infinity,
    fetching: false, again: false, removed: false, pending: [], pendingPoints: 0, chain: Promise.resolve(), busy: 0,
    visible: false, stale: true };
  slot.ctx = {
    env: page.env, win, points: page.points, url: api.url,
    refetch: () => fetchPane(page, slot),
    setPoints: (n) => { card.dataset.points = String(n); },
    setInfo: (text, tip) => { info.textContent = text || ""; info.title = tip || ""; },
  };
  page.slots.set(win, slot);
  slot.order = page.nextOrder++; // a pane born live goes last; loadAll sets the server's order
  page.sections.place(slot);
  page.vis.observe(slot); // its first report comes after layout: a pane created by a live message loads if in view
  page.far.observe(slot);
  page.resizer.observe(card);
  page.ws.attach(slot);
  card.querySelector(".card-bar").insertBefore(page.sections.pinButton(slot), card.querySelector(".pane-menu"));
  page.empty.hidden = true;
  return slot;
}

/**
 * Clear the view of a pane scrolled far away (on a page of more than MANY_PANES): its card keeps its size, and it is
 * fetched and drawn again when it comes back into view, as a pane never drawn is.
 */
export function recycle(page, slot) {
  if (page.slots.size <= MANY_PANES || !slot.view) return;
  enqueue(slot, () => {
    // Read the layout, not slot.visible: the observer that sets it may report after this runs.
    if (!slot.view || slot.fetching || slot.removed || nearViewport(slot.card)) return;
    page.frames.forget(slot);
    slot.view.destroy();
    Object.assign(slot, { view: null, kind: null, version: -Infinity, stale: true, pending: [], pendingPoints: 0 });
    slot.card.dataset.kind = "";
    slot.body.replaceChildren();
    slot.body.classList.add("loading");
  });
}

export function removeSlot(page, slot) {
  if (slot.removed) return;
  slot.removed = true;
  page.slots.delete(slot.win);
  page.frames.forget(slot);
  page.vis.unobserve(slot);
  page.far.unobserve(slot);
  page.resizer.unobserve(slot.card);
  page.sections.remove(slot);
  slot.chain.then(() => slot.view && slot.view.destroy()).catch(() => {});
  page.empty.hidden = page.slots.size > 0;
}

function failed(slot, err) {
  console.error(`paneboard: pane ${slot.win}:`, err);
  slot.body.appendChild(h("div", { class: "pane-error", text: `render failed: ${err && err.message ? err.message : err}` }));
}

/** Run fn after everything already queued for this slot; a failure shows in the card and the queue goes on. */
export function enqueue(slot, fn) {
  slot.busy += 1;
  slot.chain = slot.chain.then(() => (slot.removed ? undefined : fn())).catch((err) => failed(slot, err))
    .finally(() => { slot.busy -= 1; });
  return slot.chain;
}

/**
 * fn now, synchronously, when nothing is queued for the slot (so the frame queue can time it), else after the
 * queue as enqueue does; its promise joins the slot's queue either way.
 */
export function runNow(slot, fn) {
  if (slot.busy) return enqueue(slot, fn);
  let result;
  try {
    result = fn();
  } catch (err) {
    failed(slot, err);
    return slot.chain;
  }
  return enqueue(slot, () => result);
}

/** Title and grid cell from a pane summary or a rendered pane: a placeholder card takes its final size at once. */
export function describe(page, slot, pane) {
  slot.title = String(pane.title || (pane.opts && pane.opts.title) || pane.label || pane.win);
  slot.titleEl.textContent = slot.title;
  slot.titleEl.title = `${pane.win} (${pane.kind})`;
  filterSlot(page, slot); // before place: past MANY_PANES the filtered cards leave the page
  page.sections.place(slot); // a new title may move it to another section
  page.ws.place(slot, pane.layout);
}

/** Draw a fetched pane: its kind's view updates in place, or a new view replaces one of another kind. */
function applyPane(page, slot, pane) {
  slot.pane = pane;
  slot.version = Number.isFinite(pane.version) ? pane.version : -Infinity;
  describe(page, slot, pane);
  return enqueue(slot, async () => {
    slot.body.classList.remove("loading");
    if (slot.view && slot.kind === pane.kind) {
      await slot.view.update(pane);
      return fitText(slot);
    }
    if (slot.view) slot.view.destroy();
    slot.body.replaceChildren();
    slot.kind = pane.kind;
    slot.card.dataset.kind = String(pane.kind);
    slot.view = moduleFor(pane.kind).render(slot.body, pane, slot.ctx);
    await slot.view.ready;
    return fitText(slot);
  });
}

/**
 * (Re)fetch one pane in view and resolve once it is drawn; extends arriving meanwhile wait in slot.pending and the
 * newer ones apply after. A pane out of view is only marked stale: the visibility observer fetches it later.
 */
export async function fetchPane(page, slot) {
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
      const pane = await page.fetchSlot(() => (slot.visible && !slot.removed
        ? api.getPane(page.env, slot.win, page.points) : null));
      if (slot.removed) return;
      if (!pane) {
        slot.stale = true;
        slot.pending = [];
        slot.pendingPoints = 0;
        return;
      }
      await applyPane(page, slot, pane);
    } while (slot.again && !slot.removed);
  } catch (err) {
    slot.stale = true; // the next (re)connect or scroll into view tries again
    if (err.status === 404) removeSlot(page, slot);
    else slot.ctx.setInfo("fetch failed", err.message);
  } finally {
    slot.fetching = false;
    if (slot.pending.length) page.frames.mark(slot); // extends that came during the fetch: a coming frame applies them
  }
}
