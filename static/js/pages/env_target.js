// pages/env_target.js — taking the reader to one pane (alerts banner, ?pane= or #<win> links, the filter's Enter),
// whichever section collapsed or paged it out of the page.
import { applyFilter } from "./env_slots.js";

/** The pane a hash names (#pane=<win> or #<win>); null when none. */
function hashPane(hash) {
  let text = hash.replace(/^#/, "");
  try {
    text = decodeURIComponent(text);
  } catch { /* a stray % in a hand-typed link: take it as written */ }
  if (!text) return null;
  return text.startsWith("pane=") ? text.slice("pane=".length) : text;
}

/** The pane a link targets: ?pane=<win>, else the hash's; null when none. */
export function linkedPane(loc = window.location) {
  return new URLSearchParams(loc.search).get("pane") || hashPane(loc.hash);
}

/**
 * Bring pane `win` into the page (a filter that hides it cleared, its section listed, opened and paged), scroll to
 * it and mark it (data-targeted, until the next target). Returns whether the pane exists.
 */
export function showPane(page, win) {
  const slot = page.slots.get(win);
  if (!slot) return false;
  if (slot.card.hidden) {
    // The reader asked for this pane by name: a filter that hides it would make the jump look broken.
    page.search.value = "";
    applyFilter(page);
  }
  if (!page.sections.reveal(slot)) return false;
  for (const el of page.grid.querySelectorAll(".card[data-targeted]")) delete el.dataset.targeted;
  slot.card.dataset.targeted = "1";
  slot.card.scrollIntoView({ block: "center" });
  page.targeted = win;
  return true;
}

/** Enter in the filter box: go to the next pane that matches, in page order (wrapping), paged out or not. */
export function nextMatch(page) {
  const shown = page.sections.inOrder();
  if (!shown.length) return false;
  const at = shown.findIndex((s) => s.win === page.targeted);
  return showPane(page, shown[(at + 1) % shown.length].win);
}

/**
 * Follow the page's link target: once the panes are loaded (first load only: a reconnect must not scroll the page
 * back) and on every change of the hash.
 */
export function followLinks(page) {
  page.linked = linkedPane();
  window.addEventListener("hashchange", () => {
    const win = hashPane(window.location.hash);
    if (win !== null) showPane(page, win);
  });
  page.search.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.isComposing) return;
    e.preventDefault();
    nextMatch(page);
  });
}

/** After loadAll: jump to the linked pane once it exists. */
export function afterLoad(page) {
  if (page.linked === null || page.linked === undefined) return;
  if (showPane(page, page.linked)) page.linked = null;
}
