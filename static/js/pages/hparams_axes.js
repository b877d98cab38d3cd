// pages/hparams_axes.js — which axes the HParams view draws: the server's defaults (the keys that vary, capped),
// or the user's pick, kept in the URL (?ax=h:lr&ax=m:loss, &metric=loss) so a link or a reload shows the same.
import { h } from "../dom.js";

/** {axes: [keys] | null (defaults), metric: string | null} from the address bar. */
export function axesFromUrl() {
  const q = new URLSearchParams(window.location.search);
  const axes = q.getAll("ax").filter(Boolean);
  return { axes: axes.length || q.has("ax") ? axes : null, metric: q.get("metric") || null };
}

/** Write the pick into the URL (replaceState: no history entry per click); null axes drop ?ax (the defaults). */
export function axesToUrl(axes, metric) {
  const q = new URLSearchParams(window.location.search);
  q.delete("ax");
  q.delete("metric");
  if (axes) {
    if (axes.length) for (const k of axes) q.append("ax", k);
    else q.append("ax", ""); // "none picked" differs from "defaults"
  }
  if (metric) q.set("metric", metric);
  const s = q.toString();
  window.history.replaceState(window.history.state, "", `${window.location.pathname}${s ? `?${s}` : ""}`);
}

/** The drawn columns in canonical order (hparams, then metrics): the user's pick, else the server's defaults plus
 * the chosen metric. */
export function axisColsOf(hp) {
  const want = new Set(hp.picked || [...(hp.res.axes || []), ...(hp.metric ? [`m:${hp.metric}`] : [])]);
  return hp.cols.filter((c) => c.kind !== "meta" && want.has(c.key));
}

function pickRow(hp, c, onChange) {
  // The group heads say "metric" and "same in every run"; a tag says what else decides how it is drawn.
  const tag = c.kind !== "hparam" ? "" : c.identifier ? "unique per run" : c.log ? "log" : "";
  return h("label", { class: `hp-pick${c.varying === false ? " hp-constant" : ""}`, title: c.label, dataset: { name: c.label.toLowerCase() } },
    h("input", { type: "checkbox", checked: hp.axisCols.includes(c), dataset: { col: c.key }, onchange: (ev) => {
      const keys = new Set(hp.axisCols.map((a) => a.key));
      if (ev.target.checked) keys.add(c.key);
      else keys.delete(c.key);
      hp.picked = hp.cols.filter((k) => keys.has(k.key)).map((k) => k.key);
      onChange();
    } }), ` ${c.label}`, tag ? h("span", { class: "hp-pick-tag", text: tag }) : null);
}

/** The picker's list: a filter box, "defaults"/"none", then the hparams that vary, the metrics, the constant keys. */
export function drawAxesPicker(hp, onChange) {
  const cols = hp.cols.filter((c) => c.kind !== "meta");
  const groups = [
    ["hparams that vary", cols.filter((c) => c.kind === "hparam" && c.varying !== false)],
    ["metrics", cols.filter((c) => c.kind === "metric")],
    ["same in every run", cols.filter((c) => c.kind === "hparam" && c.varying === false)],
  ].filter(([, list]) => list.length);
  const list = h("div", { class: "hp-pick-groups" }, groups.map(([name, group]) => h("div", { class: "hp-pick-group" },
    h("div", { class: "hp-pick-head", text: `${name} (${group.length})` }), ...group.map((c) => pickRow(hp, c, onChange)))));
  const filter = h("input", { type: "search", class: "hp-pick-filter", placeholder: "filter keys", value: hp.pickFilter || "",
    oninput: () => {
      hp.pickFilter = filter.value;
      applyFilter(list, filter.value);
    } });
  const reset = h("button", { type: "button", class: "btn", text: "defaults", onclick: () => { hp.picked = null; onChange(); } });
  const none = h("button", { type: "button", class: "btn", text: "none", onclick: () => { hp.picked = []; onChange(); } });
  hp.pickList.replaceChildren(h("div", { class: "hp-pick-tools" }, filter, reset, none), list);
  applyFilter(list, hp.pickFilter || "");
  syncPicker(hp);
}

/** Tick the boxes of the drawn axes (the list itself stays, so a click never lands on a replaced box). */
export function syncPicker(hp) {
  const on = new Set(hp.axisCols.map((c) => c.key));
  for (const box of hp.pickList.querySelectorAll("input[data-col]")) box.checked = on.has(box.dataset.col);
  hp.pickSummary.textContent = `axes: ${hp.axisCols.length} of ${hp.cols.filter((c) => c.kind !== "meta").length}`;
}

function applyFilter(list, text) {
  const t = text.trim().toLowerCase();
  for (const row of list.querySelectorAll(".hp-pick")) row.hidden = Boolean(t) && !row.dataset.name.includes(t);
}
