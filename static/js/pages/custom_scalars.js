// pages/custom_scalars.js — TensorBoard's custom-scalars layouts (add_custom_scalars, stored in each run's meta) as extra
// charts of the Scalars view: a "Multiline" chart overlays every tag matching its regexes, a "Margin" chart its
// value/lower/upper tags. Pure functions over the compare read, so the view draws them like any other tag.
import * as api from "../api.js";

export const PREFIX = "custom: "; // chart titles "custom: <category>/<chart>": their own sections, never a real tag

/** The custom-scalars layouts of `envs` merged (TensorBoard merges every run's layout; a later run adds charts). */
export async function loadLayouts(envs) {
  const metas = await Promise.all(envs.map((e) => api.getJson(`api/v1/envs/${encodeURIComponent(e)}/meta`)
    .then((r) => (r && r.meta) || {}, () => ({}))));
  const merged = {};
  for (const meta of metas) {
    const layout = meta.custom_scalars;
    if (!layout || typeof layout !== "object") continue;
    for (const [category, charts] of Object.entries(layout)) {
      merged[category] = { ...(merged[category] || {}), ...charts };
    }
  }
  return merged;
}

/** Does `tag` match one of TensorBoard's tag regexes (matched from the start, like Python's re.match)? */
function matcher(patterns) {
  const res = [];
  for (const p of patterns) {
    try {
      res.push(new RegExp(`^(?:${p})`));
    } catch {
      // an invalid regex in a layout matches nothing, as in the tag filter
    }
  }
  return (tag) => res.some((r) => r.test(tag));
}

/**
 * Virtual line panes for the layout's charts, built from the compare read's panes (grouped by tag = title):
 * each matching series keeps its env (colour) and gets the tag in its label.
 */
export function customPanes(panes, layout) {
  const out = [];
  const lines = panes.filter((p) => p.kind === "line" && !String(p.title).startsWith(PREFIX));
  for (const [category, charts] of Object.entries(layout || {})) {
    for (const [chart, spec] of Object.entries(charts || {})) {
      if (!Array.isArray(spec) || spec.length !== 2 || !Array.isArray(spec[1])) continue;
      const [kind, tags] = spec;
      const match = kind === "Margin" ? (tag) => tags.includes(tag) : matcher(tags);
      const traces = [];
      for (const p of lines) {
        if (!match(String(p.title))) continue;
        const role = kind === "Margin" ? ["value", "lower", "upper"][tags.indexOf(String(p.title))] : null;
        for (const t of p.traces || []) {
          traces.push({ ...t, label: `${t.label} · ${role || p.title}` });
        }
      }
      out.push({ kind: "line", title: `${PREFIX}${category}/${chart}`, custom: kind, traces });
    }
  }
  return out;
}
