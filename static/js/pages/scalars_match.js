// pages/scalars_match.js — the multi-metric chart: every tag matching a glob (layer*/grad_norm) of the shown runs on
// one chart, one line per tag and run, read in one batched request (api/v1/chart/match) however many tags match.
import { h } from "../dom.js";
import { PREFIX } from "./custom_scalars.js";

export const MATCHING = `${PREFIX}matching/`; // these charts get their own section, like custom scalars and overlays

/** A glob's test as the server applies it (fnmatch: * any text, "/" included; ? one character). */
export function globMatcher(glob) {
  const src = String(glob).replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  const re = new RegExp(`^${src}$`);
  return (tag) => re.test(tag);
}

/** Chart specs of the patterns: [{title, pattern}]. */
export const matchCharts = (patterns) => patterns.map((pattern) => ({ title: `${MATCHING}${pattern}`, pattern }));

/** The header tool: a glob, the count of tags it matches now, a button that adds its chart, one that clears them. */
export function matchTools(sc, changed) {
  sc.matches = sc.matches || [];
  const count = h("span", { class: "match-count" });
  const input = h("input", { type: "search", class: "filter match-pattern", placeholder: "one chart: tags like layer*/grad_norm",
    "aria-label": "tags to draw on one chart (glob)", oninput: () => {
      const glob = input.value.trim();
      const test = glob ? globMatcher(glob) : null;
      count.textContent = test ? `${(sc.lineTags || []).filter(test).length} tags` : "";
    }, onkeydown: (e) => { if (e.key === "Enter") add.click(); } });
  const add = h("button", { type: "button", class: "btn-small match-add", onclick: () => {
    const glob = input.value.trim();
    if (!glob || sc.matches.includes(glob)) return;
    sc.matches = [...sc.matches, glob];
    changed();
  } }, "chart matching");
  const clear = h("button", { type: "button", class: "btn-small match-clear", title: "remove the matching-tags charts",
    onclick: () => {
      if (!sc.matches.length) return;
      sc.matches = [];
      changed();
    } }, "\u00d7");
  return h("span", { class: "scalars-match-tools" }, input, count, add, clear);
}
