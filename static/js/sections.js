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

// Past MANY_PANES panes (a TensorBoard import of per-layer metrics: thousands), sections start collapsed with their
// counts, an open one shows a page of cards at a time and sections are listed a page at a time: the cards left out
// are not in the document, so the DOM stays bounded whatever the pane count (as Scalars does, scalars_window.js).
export const MANY_PANES = 120;
export const CARD_PAGE = 24;
const OPEN_CARDS = 24; // past MANY_PANES the first sections start open while they hold this many cards together
export const SECTION_PAGE = 150;

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
  // key -> true (closed by the user) or false (opened by the user); absent: the default for the pane count.
  const collapsed = stored(collapsedKey, {});
  const pins = new Set(Array.isArray(stored(pinsKey, [])) ? stored(pinsKey, []) : []);
  const byKey = new Map();
  const more = h("button", { type: "button", class: "btn-small section-more-sections", onclick: () => {
    sectionLimit += SECTION_PAGE;
    arrange();
  } });
  let sectionLimit = SECTION_PAGE;
  let seen = 0; // first-seen order of user sections
  let due = false; // an arrange is scheduled (many place() calls in a row cost one)

  function make(key) {
    const label = LABELS.get(key) ?? key;
    const grid = h("div", { class: "grid ws-grid section-grid" });
    const notes = h("div", { class: "section-notes" });
    const count = h("span", { class: "section-count" });
    const toggle = h("button", { type: "button", class: "section-toggle", "aria-expanded": "true",
      onclick: () => setOpen(sec, sec.el.dataset.collapsed === "1") }, h("span", { class: "section-caret" }),
    h("span", { class: "section-name", text: label }), count);
    const head = h("header", { class: "section-head" }, toggle);
    const moreCards = h("button", { type: "button", class: "btn-small section-more", hidden: true, onclick: () => {
      sec.page += CARD_PAGE;
      arrange();
    } });
    const el = h("section", { class: "pane-section", dataset: { section: label } }, head, notes, grid, moreCards);
    const sec = { key, el, head, grid, notes, count, toggle, moreCards, slots: new Set(), page: CARD_PAGE, open: true,
      order: seen++ };
    byKey.set(key, sec);
    return sec;
  }

  function setOpen(sec, open, remember = true) {
    sec.open = open;
    sec.el.dataset.collapsed = open ? "" : "1";
    sec.toggle.setAttribute("aria-expanded", String(open));
    sec.grid.hidden = !open;
    if (remember) {
      // Opened by hand is only worth keeping where sections start collapsed (past MANY_PANES).
      if (open && container.dataset.many !== "1") delete collapsed[sec.key];
      else collapsed[sec.key] = !open;
      store(collapsedKey, collapsed);
      arrange();
      if (open && onShow) onShow(sec);
    }
  }

  /** Cards of a section in page order (the server's, charts before media). */
  const ordered = (sec) => [...sec.slots].filter((s) => !s.note).sort((a, b) => a.card.paneOrder - b.card.paneOrder);

  /** Put el's children to `want` only when they differ (moving a drawn Plotly chart costs a relayout). */
  function setChildren(el, want) {
    const have = el.children;
    if (have.length === want.length && want.every((c, i) => have[i] === c)) return;
    el.replaceChildren(...want);
  }

  /**
   * Sections in display order, empty ones dropped, each with the cards it shows; headers only when there is more
   * than one section. Past MANY_PANES cards (the filter's hidden ones not counted) sections collapse and page.
   */
  function arrange() {
    due = false;
    for (const [key, sec] of byKey) {
      if (!sec.slots.size) {
        sec.el.remove();
        byKey.delete(key);
      }
    }
    // Ranked once a section, not once a comparison (thousands of sections past MANY_PANES).
    const ranks = new Map([...byKey.values()].map((sec) => [sec,
      rank(sec.key, [...sec.slots].every((s) => s.card.dataset.media === "1"))]));
    const list = [...byKey.values()].sort((a, b) => ranks.get(a) - ranks.get(b) || a.order - b.order);
    const cards = new Map(list.map((sec) => [sec, ordered(sec)]));
    let total = 0;
    for (const c of cards.values()) total += c.filter((s) => !s.card.hidden).length;
    const many = total > MANY_PANES;
    const alone = list.length === 1;
    const listed = many ? list.filter((sec) => cards.get(sec).some((s) => !s.card.hidden) || sec.notes.childElementCount)
      .slice(0, sectionLimit) : list;
    let openBudget = OPEN_CARDS;
    for (const sec of list) {
      const mine = cards.get(sec);
      const shown = many ? mine.filter((s) => !s.card.hidden) : mine;
      let open = collapsed[sec.key] === undefined ? !many || openBudget > 0 : !collapsed[sec.key];
      if (alone) open = true; // nothing to collapse it against
      if (many && open) openBudget -= Math.min(shown.length, sec.page);
      setOpen(sec, open, false);
      const page = many && open ? shown.slice(0, sec.page) : many ? [] : shown;
      setChildren(sec.grid, page.map((s) => s.card));
      const left = many && open ? shown.length - page.length : 0;
      sec.moreCards.hidden = left <= 0;
      sec.moreCards.textContent = left > 0 ? `show ${Math.min(left, CARD_PAGE)} more (${left} not shown)` : "";
      sec.count.textContent = String((many ? shown.length : mine.length) + sec.notes.childElementCount);
      sec.head.hidden = alone;
      // A section whose cards are all filtered out hides with them.
      sec.el.hidden = [...sec.slots].every((c) => c.card.hidden);
    }
    const hiddenSections = list.length - listed.length;
    more.textContent = `show more sections (${hiddenSections} not shown)`;
    setChildren(container, hiddenSections > 0 && many ? [...listed.map((s) => s.el), more] : listed.map((s) => s.el));
    container.classList.toggle("single-section", alone);
    container.dataset.many = many ? "1" : "";
    container.dataset.cards = String(total);
  }

  /** Arrange once, after the current task's place() and remove() calls (a 10,000-pane load is one arrange). */
  function schedule() {
    if (due) return;
    due = true;
    queueMicrotask(() => { if (due) arrange(); });
  }

  function place(slot) {
    const opts = slot.pane && slot.pane.opts;
    const note = NOTE_WIN.test(slot.win);
    const kind = slot.pane ? slot.pane.kind : null;
    const key = pins.has(slot.win) ? PINNED : sectionOf(slot.win, slot.title, opts, kind);
    const sec = byKey.get(key) || make(key);
    slot.note = note;
    slot.card.classList.toggle("card-note", note);
    slot.card.dataset.paneSection = LABELS.get(key) ?? key;
    slot.card.dataset.media = isMedia(kind) ? "1" : "";
    slot.card.dataset.pinned = pins.has(slot.win) ? "1" : "";
    if (slot.pinBtn) {
      slot.pinBtn.setAttribute("aria-pressed", String(pins.has(slot.win)));
      slot.pinBtn.title = pins.has(slot.win) ? "unpin" : "pin to the top";
    }
    // Keep the server's order inside a section, charts before media.
    slot.card.paneOrder = (isMedia(kind) ? 1e12 : 0) + slot.order;
    if (slot.section && slot.section !== sec) slot.section.slots.delete(slot);
    slot.section = sec;
    sec.slots.add(slot);
    if (note && slot.card.parentElement !== sec.notes) sec.notes.append(slot.card);
    schedule();
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
    if (slot.section) slot.section.slots.delete(slot);
    slot.section = null;
    schedule();
  }

  /** After the pane filter: sections whose cards are all filtered out hide; past MANY_PANES the pages re-form. */
  const filtered = schedule;

  /** Arrange now if an arrange is due (before reading the layout: which cards are in view). */
  function flush() {
    if (due) arrange();
  }

  /**
   * Put slot's card in the page whatever paged it out: its section listed (more sections shown), opened (and
   * remembered open, as a click would) and paged far enough to hold the card. Returns whether the card is in.
   */
  function reveal(slot) {
    const sec = slot.section;
    if (!sec || slot.note) return !!slot.card.isConnected;
    flush();
    const many = container.dataset.many === "1";
    if (many) {
      // The sections listed before this one (same rank and filter as arrange's) decide how many pages to show.
      const ranks = new Map([...byKey.values()].map((s) => [s,
        rank(s.key, [...s.slots].every((x) => x.card.dataset.media === "1"))]));
      const listable = [...byKey.values()].filter((s) => [...s.slots].some((x) => !x.note && !x.card.hidden)
        || s.notes.childElementCount).sort((a, b) => ranks.get(a) - ranks.get(b) || a.order - b.order);
      const at = listable.indexOf(sec);
      if (at >= sectionLimit) sectionLimit = Math.ceil((at + 1) / SECTION_PAGE) * SECTION_PAGE;
      const i = ordered(sec).filter((s) => !s.card.hidden).indexOf(slot);
      if (i >= sec.page) sec.page = Math.ceil((i + 1) / CARD_PAGE) * CARD_PAGE;
    }
    if (many ? collapsed[sec.key] !== false : collapsed[sec.key]) {
      if (many) collapsed[sec.key] = false;
      else delete collapsed[sec.key];
      store(collapsedKey, collapsed);
    }
    arrange();
    return !!slot.card.isConnected;
  }

  /** The cards the filter leaves, in display order (sections ranked, cards in order), paged out or not. */
  function inOrder() {
    flush();
    const list = [...byKey.values()].map((sec) => [sec, rank(sec.key, [...sec.slots].every((s) => s.card.dataset.media === "1"))])
      .sort(([a, ra], [b, rb]) => ra - rb || a.order - b.order);
    return list.flatMap(([sec]) => ordered(sec).filter((s) => !s.card.hidden));
  }

  return { place, remove, pinButton, togglePin, filtered, flush, reveal, inOrder };
}
