// pages/hparams_importance.js — parameter importance beside the parallel coordinates, as W&B shows it: per varying
// hparam, the server's random-forest importance and its correlation with the chosen metric. Data: GET
// api/v1/hparams/importance (the server fits the forest; the page only draws bars).
import * as api from "../api.js";
import { h } from "../dom.js";
import { scopeParams } from "../scope.js";

const MAX_ROWS = 25; // the panel lists the most important; the rest are one click away in the axes picker

const pct = (v) => `${(100 * v).toFixed(v >= 0.1 ? 0 : 1)}%`;

function corrCell(p) {
  if (p.correlation === null || p.correlation === undefined) return h("td", { class: "num hp-imp-corr", text: "–" });
  const v = p.correlation;
  const sign = p.correlation_kind === "eta" ? "η " : "";
  const bar = h("span", { class: `hp-bar ${p.correlation_kind === "eta" ? "eta" : v < 0 ? "neg" : "pos"}`,
    style: `width: ${Math.round(Math.abs(v) * 48)}px` });
  return h("td", { class: "num hp-imp-corr", title: p.correlation_kind === "eta" ? "correlation ratio (text values)" : "Pearson's r" },
    bar, ` ${sign}${v.toFixed(2)}`);
}

/** Fill hp.importance from the response: a row per hparam (importance bar, correlation bar); a click on a name
 * toggles that axis. */
export function drawImportance(hp, res, toggleAxis) {
  const panel = hp.importance;
  if (!res || !res.metric || !res.params.length) {
    panel.replaceChildren(h("div", { class: "hp-imp-head", text: "parameter importance" }),
      h("div", { class: "muted", text: !res || !res.metric ? "no metric to rank against" : "no hparam varies across these runs" }));
    return;
  }
  const shown = res.params.slice(0, MAX_ROWS);
  const axes = new Set(hp.axisCols.map((c) => c.key));
  const body = shown.map((p) => h("tr", { dataset: { param: p.name } },
    h("td", { class: "hp-imp-name", title: p.name },
      h("button", { type: "button", class: `link${axes.has(`h:${p.name}`) ? " on" : ""}`, text: p.name,
        title: axes.has(`h:${p.name}`) ? "drawn as an axis: click to hide it" : "click to draw it as an axis",
        onclick: () => toggleAxis(`h:${p.name}`) })),
    h("td", { class: "num hp-imp-val" }, h("span", { class: "hp-bar imp", style: `width: ${Math.round(p.importance * 64)}px` }),
      ` ${pct(p.importance)}`),
    corrCell(p)));
  panel.replaceChildren(
    h("div", { class: "hp-imp-head", text: `parameter importance for ${res.metric}` }),
    h("table", { class: "hp-imp-table" },
      h("thead", null, h("tr", null, h("th", { text: "hparam" }), h("th", { text: "importance", title: `random forest of ${res.trees} trees` }),
        h("th", { text: "correlation" }))),
      h("tbody", null, body)),
    h("div", { class: "muted hp-imp-foot", text: `${res.rows} runs with a value` + (res.params.length > MAX_ROWS
      ? ` · ${res.params.length - MAX_ROWS} more hparams` : "") }));
}

/** GET the importance of every varying hparam against `metric` over the runs in view (scope.js; null: every run). */
export function fetchImportance(scope, metric) {
  const qs = scopeParams(scope);
  const m = metric ? `metric=${encodeURIComponent(metric)}` : "";
  return api.getJson(`api/v1/hparams/importance?${[qs, m].filter(Boolean).join("&")}`);
}
