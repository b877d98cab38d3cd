// sections.js — the env page's pane sections: TensorBoard-style groups by title prefix, the hooks' groups, pins;
// the user's metrics first, then media and text, then framework bookkeeping.
import { h } from "./dom.js";
import { getJSON, setJSON } from "./storage.js";

const PINNED = "\u0000pinned"; // section keys never clash with a title prefix
const UNGROUPED = "";
const MEDIA = "\u0000media"; // ungrouped images, text, audio and video: below the metrics
const BOOKKEEPING = "\u0000bookkeeping"; // a framework's own panes (Lightning's epoch and status): last of the user's
// Kinds that are not charts of a metric: they go below the charts, in their section and in the page.
const MEDIA_KINDS = new Set(["text", "image", "media", "properties"]);
// What frameworks log beside the user's metrics: Lightning's "epoch" scalar and "status" text, a global step.
const BOOKKEEPING_NAME = /^(epoch|status|global_step|trainer\/global_step|step)$/;
// The training hooks' default pane ids (hooks/*.py prefixes; `_r<rank>` is appended in distributed jobs).
const HOOK_GROUPS = [["alerts", /^alerts(_r\d+)?$/], ["data", /^data_/], ["model", /^model_/], ["system", /^sys_/]];
// One-line notes of a hook (system.py's "no GPU panes: ..."): a status line under the section's header, shown
// even when the section is collapsed.
const NOTE_WIN = /^sys_note(_r\d+)?$/;

/** True for the kinds drawn below the charts (images, text, audio, video, properties). */
export const isMedia = (kind) => MEDIA_KINDS.has(kind);

/**
 * The section of a pane: opts.section, a hook's group, a framework's bookkeeping, the title's prefix before "/"
 * (train/loss -> train), or the ungrouped metrics ("") or media.
 */
export function sectionOf(win, title, opts, kind = null) {
  if (opts && typeof opts.section === "string" && opts.section.trim()) return opts.section.trim();
  for (const [name, re] of HOOK_GROUPS) if (re.test(win)) return name;
  if (BOOKKEEPING_NAME.test(String(win)) && BOOKKEEPING_NAME.test(String(title || win))) return BOOKKEEPING;
  for (const text of [String(title || ""), String(win)]) {
    const i = text.indexOf("/");
    if (i > 0) return text.slice(0, i);
  }
  return isMedia(kind) ? MEDIA : UNGROUPED;
}

/**
 * Display rank: pinned, ungrouped metrics, user sections with charts (first seen first), user sections of media
 * only, ungrouped media, bookkeeping, then alerts, data, model, system.
 */
function rank(key, mediaOnly) {
  if (key === PINNED) return 0;
  if (key === UNGROUPED) return 1;
  if (key === MEDIA) return 4;
  if (key === BOOKKEEPING) return 5;
  const hook = HOOK_GROUPS.findIndex(([name]) => name === key);
  return hook >= 0 ? 6 + hook : mediaOnly ? 3 : 2;
}

const LABELS = new Map([[PINNED, "pinned"], [UNGROUPED, "metrics"], [MEDIA, "media & text"], [BOOKKEEPING, "bookkeeping"]]);

function stored(key, fallback) {
  const v = getJSON("local", key, fallback);
  return v && typeof v === "object" ? v : fallback;
}

const store = (key, value) => setJSON("local", key, value);

/**
 * Sections of one env page inside `container`. place(slot) files a card by its pane summary (slot.win, slot.title,
 * slot.pane.opts, slot.order); remove(slot) takes it out. Collapsed sections and pins are remembered per env in
 * localStorage. onShow() runs after a section opens (its cards become visible and catch up).
 */
export function sections({ env, container, onShow }) {
  const collapsedKey = `paneboard.sections.${env}`;
  const pinsKey = `paneboard.pins.${env}`;
  const collapsed = stored(collapsedKey, {});
  const pins = new Set(Array.isArray(stored(pinsKey, [])) ? stored(pinsKey, []) : []);
  const byKey = new Map();
  let seen = 0; // first-seen order of user sections

  function make(key) {
    const label = LABELS.get(key) ?? key;
    const grid = h("div", { class: "grid ws-grid section-grid" });
    const notes = h("div", { class: "section-notes" });
    const count = h("span", { class: "section-count" });
    const toggle = h("button", { type: "button", class: "section-toggle", "aria-expanded": "true",
      onclick: () => setOpen(sec, sec.el.dataset.collapsed === "1") }, h("span", { class: "section-caret" }),
    h("span", { class: "section-name", text: label }), count);
    const head = h("header", { class: "section-head" }, toggle);
    const el = h("section", { class: "pane-section", dataset: { section: label } }, head, notes, grid);
    const sec = { key, el, head, grid, notes, count, toggle, order: seen++ };
    byKey.set(key, sec);
    setOpen(sec, !collapsed[key], false);
    return sec;
  }

  function setOpen(sec, open, remember = true) {
    sec.el.dataset.collapsed = open ? "" : "1";
    sec.toggle.setAttribute("aria-expanded", String(open));
    sec.grid.hidden = !open;
    if (remember) {
      if (open) delete collapsed[sec.key];
      else collapsed[sec.key] = true;
      store(collapsedKey, collapsed);
      if (open && onShow) onShow(sec);
    }
  }

  /** Sections in display order, empty ones dropped; headers only when there is more than one section. */
  function arrange() {
    for (const [key, sec] of byKey) {
      if (!sec.grid.childElementCount && !sec.notes.childElementCount) {
        sec.el.remove();
        byKey.delete(key);
      }
    }
    const mediaOnly = (sec) => [...sec.grid.children].every((c) => c.dataset.media === "1");
    const list = [...byKey.values()].sort((a, b) => rank(a.key, mediaOnly(a)) - rank(b.key, mediaOnly(b)) || a.order - b.order);
    list.forEach((sec, i) => {
      if (container.children[i] !== sec.el) container.insertBefore(sec.el, container.children[i] || null);
      sec.count.textContent = String(sec.grid.childElementCount + sec.notes.childElementCount);
    });
    const alone = list.length === 1;
    container.classList.toggle("single-section", alone);
    for (const sec of list) {
      sec.head.hidden = alone;
      if (alone && sec.el.dataset.collapsed) setOpen(sec, true, false); // nothing to collapse it against
    }
  }

  function place(slot) {
    const opts = slot.pane && slot.pane.opts;
    const note = NOTE_WIN.test(slot.win);
    const kind = slot.pane ? slot.pane.kind : null;
    const key = pins.has(slot.win) ? PINNED : sectionOf(slot.win, slot.title, opts, kind);
    const sec = byKey.get(key) || make(key);
    const parent = note ? sec.notes : sec.grid;
    slot.card.classList.toggle("card-note", note);
    slot.card.dataset.paneSection = LABELS.get(key) ?? key;
    slot.card.dataset.media = isMedia(kind) ? "1" : "";
    slot.card.dataset.pinned = pins.has(slot.win) ? "1" : "";
    if (slot.pinBtn) {
      slot.pinBtn.setAttribute("aria-pressed", String(pins.has(slot.win)));
      slot.pinBtn.title = pins.has(slot.win) ? "unpin" : "pin to the top";
    }
    // Keep the server's order inside a section, charts before media.
    const at = (isMedia(kind) ? 1e12 : 0) + slot.order;
    let before = null;
    for (const c of parent.children) {
      if (c !== slot.card && c.paneOrder > at) {
        before = c;
        break;
      }
    }
    slot.card.paneOrder = at;
    if (slot.card.parentElement !== parent || slot.card.nextElementSibling !== before) parent.insertBefore(slot.card, before);
    arrange();
  }

  function togglePin(slot) {
    if (pins.has(slot.win)) pins.delete(slot.win);
    else pins.add(slot.win);
    store(pinsKey, [...pins]);
    place(slot);
  }

  /** A pin toggle for a card's title bar. */
  function pinButton(slot) {
    slot.pinBtn = h("button", { type: "button", class: "pin-btn", "aria-pressed": "false", title: "pin to the top",
      "aria-label": "pin to the top", onclick: (e) => {
        e.stopPropagation();
        togglePin(slot);
      } }, "\u2605");
    return slot.pinBtn;
  }

  function remove(slot) {
    slot.card.remove();
    arrange();
  }

  /** After the pane filter: a section whose cards are all filtered out hides with them. */
  function filtered() {
    for (const sec of byKey.values()) {
      const cards = [...sec.grid.children, ...sec.notes.children];
      sec.el.hidden = cards.length > 0 && cards.every((c) => c.hidden);
    }
  }

  return { place, remove, pinButton, togglePin, filtered };
}
