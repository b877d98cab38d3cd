// pages/run_selector.js — the run selector of Scalars and Compare: search, colour swatches, show/hide, "only these",
// pinned runs (listed first, always drawn and in the tooltip) and one baseline run (Δ% in the tooltip). The search
// is a name regex, or a runs query (`lr < 0.01 and tags:baseline`) evaluated by the server as /runs does.
import * as api from "../api.js";
import { h, throttled } from "../dom.js";
import { highlightRun } from "../run_hover.js";
import { previewRunColor, runColor, setRunColor } from "../run_colors.js";
import { regexMatcher } from "../smoothing.js";

/** Selector state: every run (sorted), the picked (shown) ones, pins and the baseline. */
export const selectorState = (runs = [], picked = runs) => ({ runs, picked: new Set(picked), pinned: new Set(), baseline: null });

// A search with a comparison, a tag test or and/or reads as a runs query, not a regex of names.
const QUERY_LIKE = /\s(and|or)\s|[<>]=?|[!=]=|^\s*not\s|^\s*[\w./-]+\s*(:|=|~)/;
export const isQuery = (text) => QUERY_LIKE.test(text);

/** The search's test of a run: the query's answer when the search is a query, else the name regex. */
function matcherOf(sel) {
  const text = sel.filter ? sel.filter.value.trim() : "";
  if (text && isQuery(text)) return sel.queryHits && sel.queryText === text ? (r) => sel.queryHits.has(r) : () => false;
  return regexMatcher(text);
}

/** Ask the server which runs a query search names; a malformed query marks the box and says where. */
async function askQuery(sel) {
  const text = sel.filter.value.trim();
  if (!text || !isQuery(text)) {
    sel.filter.removeAttribute("aria-invalid");
    sel.filter.title = "";
    return;
  }
  try {
    const res = await api.getJson(`api/v1/scope?${new URLSearchParams({ q: text })}`);
    if (sel.filter.value.trim() !== text) return; // typed on meanwhile
    sel.queryHits = new Set(res.envs || []);
    sel.queryText = text;
    sel.filter.removeAttribute("aria-invalid");
    sel.filter.title = `runs query: ${res.total} run${res.total === 1 ? "" : "s"} match`;
  } catch (err) {
    sel.queryHits = new Set();
    sel.queryText = text;
    sel.filter.setAttribute("aria-invalid", "true");
    sel.filter.title = err.message;
  }
  applySearch(sel);
  sel.onPick();
}

/**
 * Runs drawn: picked and matching the search (an invalid regex matches nothing); a pinned run or the baseline
 * stays drawn whatever the search, as long as it is picked.
 */
export function shownOf(sel) {
  const m = matcherOf(sel);
  return sel.runs.filter((r) => sel.picked.has(r) && (m(r) || sel.pinned.has(r) || sel.baseline === r));
}

/**
 * A swatch showing a run's colour; a click opens the browser's colour picker, and the choice is kept for the run
 * on the server (run_colors.js) and applied through onChange().
 */
export function colorSwatch(run, onChange) {
  const chip = h("button", { type: "button", class: "chip run-color", title: `colour of ${run} (click to change)`,
    "aria-label": `colour of ${run}`, style: `background:${runColor(run)}` });
  chip.addEventListener("click", (ev) => {
    ev.preventDefault(); // inside a <label>: do not tick the run's box
    let input = chip.parentNode.querySelector("input.run-color-input");
    if (!input) {
      input = h("input", { type: "color", class: "run-color-input", value: runColor(run), "aria-label": `pick colour of ${run}` });
      // A drag in the picker shows each colour at once; the one it closes on is kept (on the server).
      input.addEventListener("input", () => {
        previewRunColor(run, input.value);
        chip.style.background = input.value;
        onChange();
      });
      input.addEventListener("change", () => {
        setRunColor(run, input.value);
        chip.style.background = input.value;
        onChange();
      });
      chip.after(input);
    }
    input.click();
  });
  return chip;
}

/**
 * The selector's elements; sets sel.filter and sel.list. onPick(): the drawn runs changed (a show/hide, "only",
 * the search, a pin); onStyle(): only how they look or read changed (a colour, the baseline); onMarks(): the pins
 * or the baseline changed (for the page to keep them).
 */
export function selectorEl(sel, { onPick, onStyle, onMarks = () => {} }) {
  sel.onPick = () => { countShown(sel); onPick(); };
  sel.onMarks = onMarks;
  sel.onStyle = onStyle;
  const ask = throttled(() => askQuery(sel), 250);
  sel.filter = h("input", { type: "search", class: "filter run-filter", placeholder: "search runs (regex or query)",
    "aria-label": "search runs", oninput: () => { applySearch(sel); sel.onPick(); ask(); } });
  sel.list = h("div", { class: "sc-runs" });
  // One listener for a thousand rows: hovering a run's row highlights it on every chart.
  sel.list.addEventListener("mouseover", (ev) => {
    const row = ev.target.closest && ev.target.closest(".sc-run");
    highlightRun(row ? row.dataset.run : null);
  });
  sel.list.addEventListener("mouseleave", () => highlightRun(null));
  const setAll = (on, only = false) => {
    const m = matcherOf(sel);
    if (only) sel.picked.clear();
    for (const r of sel.runs) if (m(r)) (on ? sel.picked.add(r) : sel.picked.delete(r));
    drawList(sel);
    sel.onPick();
  };
  sel.count = h("span", { class: "runs-count" });
  return h("div", { class: "run-selector" },
    h("div", { class: "sc-label" }, "Runs ", sel.count), sel.filter,
    h("div", { class: "sc-row" },
      h("button", { type: "button", class: "btn-small runs-all", title: "show every run matching the search",
        onclick: () => setAll(true) }, "all"),
      h("button", { type: "button", class: "btn-small runs-none", title: "hide every run matching the search",
        onclick: () => setAll(false) }, "none"),
      h("button", { type: "button", class: "btn-small runs-only", title: "show only the runs matching the search",
        onclick: () => setAll(true, true) }, "only these")),
    sel.list);
}

function toggle(set, r) {
  if (set.has(r)) set.delete(r);
  else set.add(r);
}

/** One run's row: show/hide box, swatch, name, then pin, baseline and "only" buttons. */
function row(sel, r, m) {
  const box = h("input", { type: "checkbox", class: "run-pick", checked: sel.picked.has(r), "aria-label": `show ${r}`,
    onchange: () => {
      if (box.checked) sel.picked.add(r);
      else sel.picked.delete(r);
      sel.onPick();
    } });
  const pinned = sel.pinned.has(r);
  const base = sel.baseline === r;
  const act = (cls, text, title, fn, on = false) => h("button", { type: "button", class: `run-act ${cls}${on ? " on" : ""}`,
    title, "aria-label": title, "aria-pressed": String(on), onclick: (ev) => { ev.preventDefault(); fn(); } }, text);
  return h("label", { class: `sc-run${pinned ? " pinned" : ""}${base ? " baseline" : ""}`, dataset: { run: r },
    hidden: !(m(r) || pinned || base) },
  box, colorSwatch(r, () => sel.onStyle()), h("span", { class: "run-name", text: r, title: r }),
  act("run-pin", pinned ? "★" : "☆", pinned ? `unpin ${r}` : `pin ${r}`, () => {
    toggle(sel.pinned, r);
    drawList(sel);
    sel.onPick();
    sel.onMarks();
  }, pinned),
  act("run-base", "Δ", base ? `${r} is the baseline (click: none)` : `make ${r} the baseline (Δ% in the tooltip)`, () => {
    sel.baseline = base ? null : r;
    drawList(sel);
    sel.onPick();
    sel.onMarks();
  }, base),
  act("run-only", "only", `show only ${r}`, () => {
    sel.picked.clear(); // kept the same Set: the pages hold it
    sel.picked.add(r);
    drawList(sel);
    sel.onPick();
  }));
}

/** The run list, pinned runs first, then the baseline, then the rest by name. */
export function drawList(sel) {
  const m = matcherOf(sel);
  const rank = (r) => (sel.pinned.has(r) ? 0 : sel.baseline === r ? 1 : 2);
  const order = [...sel.runs].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  sel.list.replaceChildren(...order.map((r) => row(sel, r, m)));
  countShown(sel);
}

/** Search: rows missing it are hidden, not rebuilt (a keystroke on 1,000 runs stays cheap). */
function applySearch(sel) {
  const m = matcherOf(sel);
  for (const el of sel.list.children) {
    const r = el.dataset.run;
    el.hidden = !(m(r) || sel.pinned.has(r) || sel.baseline === r);
  }
  countShown(sel);
}

function countShown(sel) {
  sel.count.textContent = `${shownOf(sel).length} of ${sel.runs.length} shown`;
}
