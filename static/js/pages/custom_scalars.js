// pages/custom_scalars.js — TensorBoard's custom-scalars layouts (add_custom_scalars, stored in each run's meta) as extra
// charts of the Scalars view: a "Multiline" chart overlays every tag matching its regexes, a "Margin" chart its
// value/lower/upper tags. Pure functions over the chart list; the view reads each part's tag.
export const PREFIX = "custom: "; // chart titles "custom: <category>/<chart>": their own sections, never a real tag

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
 * The layout's charts over the tags shown (TensorBoard merges every run's layout; the server does that once):
 * [{title, custom, parts: [{tag, role}]}], each part a tag whose series the chart overlays, labelled by role or tag.
 */
export function customCharts(tags, layout) {
  const out = [];
  const lines = tags.filter((t) => !String(t).startsWith(PREFIX));
  for (const [category, charts] of Object.entries(layout || {})) {
    for (const [chart, spec] of Object.entries(charts || {})) {
      if (!Array.isArray(spec) || spec.length !== 2 || !Array.isArray(spec[1])) continue;
      const [kind, patterns] = spec;
      const parts = kind === "Margin"
        ? patterns.slice(0, 3).map((tag, i) => ({ tag: String(tag), role: ["value", "lower", "upper"][i] }))
          .filter((p) => lines.includes(p.tag))
        : lines.filter(matcher(patterns)).map((tag) => ({ tag, role: null }));
      out.push({ kind: "line", title: `${PREFIX}${category}/${chart}`, custom: kind, parts });
    }
  }
  return out;
}
