// pages/scalars_window.js — which Scalars cards exist in the page: every tag's card while they are few; past
// MANY_TAGS (per-layer gradient norms: thousands), sections start collapsed with their counts and open ones show
// a page of cards at a time, so the DOM stays bounded whatever the tag count.
import { h } from "../dom.js";
import { regexError, regexMatcher } from "../smoothing.js";
import { firstRunHelp } from "../empty_states.js";
import { chartCard, removeCard, sectionOf, sectionRank } from "./scalars_charts.js";

export const MANY_TAGS = 120; // more tags shown than this: sections collapse, cards come a page at a time
export const CARD_PAGE = 24; // cards an open section shows before its "show more"
const OPEN_CARDS = 24; // past MANY_TAGS the first sections start open while they hold this many cards together
export const SECTION_PAGE = 150; // section headers listed before a "more sections" button
// Drawn charts kept at once: each is hundreds of Plotly nodes, so those scrolled out of view longest are cleared
// (and drawn again from the points they hold when they come back).
const MAX_PLOTTED = 24;

const byTitle = (a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0);

/** A section's element, made on first use: a header that opens and closes it (with its tag count), its grid. */
function sectionEl(sc, name) {
  let s = sc.secs.get(name);
  if (s) return s;
  const count = h("span", { class: "sc-section-count" });
  const toggle = h("button", { type: "button", class: "sc-section-toggle", "aria-expanded": "true",
    onclick: () => {
      sc.openSecs.set(name, toggle.getAttribute("aria-expanded") !== "true");
      layoutCards(sc);
    } }, h("span", { class: "section-caret" }), h("span", { class: "sc-section-name", text: name }), count);
  const body = h("div", { class: "grid sc-grid" });
  const more = h("button", { type: "button", class: "btn-small sc-more", hidden: true, onclick: () => {
    sc.secPages.set(name, (sc.secPages.get(name) || CARD_PAGE) + CARD_PAGE);
    layoutCards(sc);
  } });
  const el = h("section", { class: "sc-section", dataset: { section: name } },
    h("h2", { class: "sc-section-title" }, toggle), body, more);
  s = { el, body, more, toggle, count };
  sc.secs.set(name, s);
  return s;
}

/** Take a chart's card out of the page (its points stay held): drawn again, from them, once it is placed again. */
function dropCard(sc, chart) {
  if (!chart.card) return;
  removeCard(sc, chart);
  Object.assign(chart, { plot: null, visible: false, stale: chart.loaded });
}

/** Replace el's children with `want` only when they differ (moving a drawn Plotly chart costs a relayout). */
function setChildren(el, want) {
  const have = el.children;
  if (have.length === want.length && want.every((c, i) => have[i] === c)) return;
  el.replaceChildren(...want);
}

/**
 * Place the cards of the charts matching the tag regex, by section; make the cards of charts coming into the page
 * and drop the rest. Says why nothing shows, if nothing does; body[data-scalars-tags] is the matching count.
 */
export function layoutCards(sc) {
  const text = sc.tagFilter.value.trim();
  const bad = regexError(text);
  sc.tagFilter.toggleAttribute("aria-invalid", !!bad);
  const matches = regexMatcher(text);
  const bySection = new Map();
  let matched = 0;
  for (const chart of sc.charts.values()) {
    if (!matches(chart.title)) continue;
    matched += 1;
    const name = sectionOf(chart.title, chart.wins || []);
    if (!bySection.has(name)) bySection.set(name, []);
    bySection.get(name).push(chart);
  }
  const many = matched > MANY_TAGS;
  const ranked = [...bySection.keys()].map((n) => [sectionRank(n), n]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const limit = sc.sectionLimit || SECTION_PAGE;
  const placed = new Set();
  const sectionEls = [];
  let openBudget = OPEN_CARDS;
  for (const [, name] of ranked.slice(0, limit)) {
    const charts = bySection.get(name).sort(byTitle);
    const s = sectionEl(sc, name);
    let open = !many;
    if (sc.openSecs.has(name)) open = sc.openSecs.get(name);
    else if (many && openBudget > 0) {
      open = true;
      openBudget -= Math.min(charts.length, CARD_PAGE);
    }
    const page = many ? sc.secPages.get(name) || CARD_PAGE : Infinity;
    const shown = open ? charts.slice(0, page) : [];
    for (const chart of shown) {
      if (!chart.card) {
        chartCard(sc, chart);
        sc.vis.observe(chart);
      }
      placed.add(chart);
    }
    setChildren(s.body, shown.map((c) => c.card));
    s.body.hidden = !open;
    s.toggle.setAttribute("aria-expanded", String(open));
    s.el.dataset.collapsed = open ? "" : "1";
    s.count.textContent = many || !open ? String(charts.length) : "";
    const left = open ? charts.length - shown.length : 0;
    s.more.hidden = left <= 0;
    s.more.textContent = left > 0 ? `show ${Math.min(left, CARD_PAGE)} more (${left} not shown)` : "";
    sectionEls.push(s.el);
  }
  for (const chart of sc.charts.values()) if (!placed.has(chart)) dropCard(sc, chart);
  const keep = new Set(sectionEls);
  for (const [name, s] of [...sc.secs]) {
    if (keep.has(s.el)) continue;
    s.el.remove();
    sc.secs.delete(name);
  }
  const hiddenSections = ranked.length - Math.min(limit, ranked.length);
  if (!sc.moreSections) {
    sc.moreSections = h("button", { type: "button", class: "btn-small sc-more-sections", onclick: () => {
      sc.sectionLimit = (sc.sectionLimit || SECTION_PAGE) + SECTION_PAGE;
      layoutCards(sc);
    } });
  }
  sc.moreSections.textContent = `show more sections (${hiddenSections} not shown)`;
  setChildren(sc.sections, hiddenSections > 0 ? [...sectionEls, sc.moreSections] : sectionEls);
  document.body.dataset.scalarsMany = many ? "1" : "";
  emptyState(sc, matched, bad);
}

function emptyState(sc, matched, bad) {
  // No run at all: how to log one to this server, not "tick runs on the left" beside an empty list.
  if (!sc.runs.length && !sc.scope) {
    if (!sc.empty.querySelector(".first-run")) sc.empty.replaceChildren(firstRunHelp("No runs to chart yet"));
    sc.empty.hidden = false;
    document.body.dataset.scalarsTags = "0";
    return;
  }
  const none = !sc.runs.length ? "No run matches this query: change it above, or open the runs table."
    : !sc.shown.length ? "No runs picked: tick runs on the left (or clear the run filter)."
      : !sc.charts.size ? (sc.indexed ? "No line charts in the picked runs." : "") : bad ? `Invalid regex: ${bad}`
        : !matched ? "No tags match the filter." : "";
  sc.empty.textContent = none;
  sc.empty.hidden = !none;
  document.body.dataset.scalarsTags = String(matched);
}

/** After a chart is drawn: past MAX_PLOTTED drawn charts, clear the ones out of view (first drawn, first cleared). */
export function notePlotted(sc, chart) {
  sc.plotted.delete(chart);
  sc.plotted.add(chart);
  if (sc.plotted.size <= MAX_PLOTTED) return;
  for (const other of sc.plotted) {
    if (sc.plotted.size <= MAX_PLOTTED) break;
    if (other.visible || !other.plot || !window.Plotly) continue;
    window.Plotly.purge(other.plot);
    other.plot.replaceChildren();
    Object.assign(other, { first: true, stale: true });
    sc.plotted.delete(other);
  }
}
