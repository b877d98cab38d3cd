// pages/seed_groups.js — run groups for Scalars and Compare: by chosen config keys (or config minus seed), controls,
// mean or median ± band traces, the A-vs-B table, and the offer to group a sweep whose runs form groups.
import * as api from "../api.js";
import { counted, h, plotlyText } from "../dom.js";
import { rgba } from "../run_colors.js";
import { isDark } from "../theme.js";

const BANDS = [["std", "mean ± std"], ["minmax", "min – max"], ["ci", "95% CI"]];
const VALUES = [["final", "final value"], ["best", "best value"]];
const CENTERS = [["mean", "mean"], ["median", "median"]];
const OFFER_MIN = 20;
// Points per group line: about what a card is wide. The server reads every run of the group within this budget,
// so the page's full budget (2,000) made a 1,000-run sweep read and send every point.
const BAND_POINTS = 600;
const PACK_GROUPS = 12; // more groups than this: bands and lines packed per colour (the legend is off then anyway) // a sweep of at least this many runs that forms groups is offered the grouped view first

/**
 * Default grouping state: off, by every config key but `seed` (by: [] ) , the mean with a ±std band, A vs B on final
 * values; keys: the config keys that vary, as the last answer listed them (the picker's options).
 */
export const groupState = () => ({ on: false, ignore: "seed", by: [], keys: [], center: "mean", band: "std", value: "final",
  baseline: null }); // baseline: the group id the A-vs-B table compares every other group with (null: the first)

/** The controls (a checkbox, ignored keys, band and value pickers); each change calls onChange(). */
export function groupControls(gs, onChange) {
  gs.refresh = onChange; // the A-vs-B table's baseline picker reads the groups again through it
  const on = h("input", { type: "checkbox", class: "group-seeds", checked: gs.on,
    onchange: () => { gs.on = on.checked; sync(); onChange(); } });
  const ignore = h("input", { type: "text", class: "group-ignore", value: gs.ignore, "aria-label": "config keys to ignore",
    title: "config keys left out when grouping (comma-separated)", onchange: () => {
      gs.ignore = ignore.value;
      gs.baseline = null; // new groups, new ids
      onChange();
    } });
  const pick = (cls, label, options, key) => {
    const sel = h("select", { class: cls, "aria-label": label, onchange: () => { gs[key] = sel.value; onChange(); } },
      options.map(([v, t]) => h("option", { value: v, text: t, selected: gs[key] === v })));
    return sel;
  };
  const band = pick("group-band", "band", BANDS, "band");
  const value = pick("group-value", "A vs B on", VALUES, "value");
  const center = pick("group-center", "centre line", CENTERS, "center");
  // Group by any config keys: none picked groups by every key but the ignored ones (seeds of one config).
  const by = h("select", { class: "group-by", multiple: true, size: 4, "aria-label": "group by config keys",
    title: "group by these config keys (none: every key but the ignored ones)", onchange: () => {
      gs.by = [...by.selectedOptions].map((o) => o.value);
      gs.baseline = null;
      ignoreRow.hidden = gs.by.length > 0;
      onChange();
    } });
  gs.syncKeys = () => {
    const have = [...by.options].map((o) => o.value).join("\n");
    if (have === gs.keys.join("\n")) return;
    by.replaceChildren(...gs.keys.map((k) => h("option", { value: k, text: k, selected: gs.by.includes(k) })));
  };
  const ignoreRow = h("span", { class: "sc-row group-ignore-row" }, h("span", { class: "sc-label", text: "ignoring" }), ignore);
  const more = h("span", { class: "group-more" }, h("span", { class: "sc-label", text: "group by" }), by, ignoreRow,
    h("span", { class: "sc-row" }, center, band), value);
  const sync = () => { more.hidden = !gs.on; };
  sync();
  gs.setOn = (v) => { // the offer's button: as if the box were ticked
    on.checked = v;
    gs.on = v;
    sync();
    onChange();
  };
  return h("div", { class: "group-controls" },
    h("label", { class: "sc-control sc-check group-toggle" }, h("span", { class: "sc-label", text: "Group runs (mean ± band)" }), on),
    more);
}

/**
 * When the runs form groups (some config shared by several seeds), a line offering the grouped view, put first;
 * null when there is nothing to offer. One request without series reads (?series=0).
 */
export async function groupOffer(gs, envs) {
  if (gs.on || gs.offered || envs.length < OFFER_MIN) return null;
  gs.offered = true;
  const res = await api.getJson(`api/v1/groups?envs=${api.envsQuery(envs)}&ignore=${encodeURIComponent(gs.ignore)}&series=0`);
  const n = res.groups.length;
  if (n < 2 || n > envs.length / 2) return null;
  gs.keys = res.keys || [];
  if (gs.syncKeys) gs.syncKeys();
  // One group named as an example, its numbers rounded: a sweep's labels list every key, and three of them filled a
  // phone's screen. The first few labels in full are the tooltip.
  const box = h("div", { class: "group-offer notice-line" },
    h("span", { class: "group-offer-text", title: res.groups.slice(0, 3).map((g) => g.label).join("\n"),
      text: `These ${counted(envs.length, "run")} form ${counted(n, "group")} of seeds, e.g. ${shortLabel(res.groups[0].label)} ` }),
    h("button", { type: "button", class: "btn-small group-offer-yes", onclick: () => { box.remove(); gs.setOn(true); } },
      "show groups (mean ± band)"),
    h("button", { type: "button", class: "btn-small group-offer-no", onclick: () => box.remove() }, "keep the runs"));
  return box;
}

const OFFER_LABEL = 90; // characters of the example group's label

/** A group label for one line: long numbers to 4 significant digits, cut at OFFER_LABEL characters. */
export function shortLabel(label) {
  const s = String(label).replace(/-?\d+\.\d{5,}(e[-+]?\d+)?/gi, (m) => String(Number(Number(m).toPrecision(4))));
  return s.length > OFFER_LABEL ? `${s.slice(0, OFFER_LABEL - 1)}…` : s;
}

/** GET api/v1/groups for these runs; the answer's varying keys become the picker's options. */
export function fetchGroups(gs, envs, points) {
  const q = `envs=${api.envsQuery(envs)}&ignore=${encodeURIComponent(gs.ignore)}`
    + `${gs.by.length ? `&by=${gs.by.map(encodeURIComponent).join(",")}` : ""}&center=${gs.center}`
    + `&band=${gs.band}&value=${gs.value}&points=${Math.min(points | 0, BAND_POINTS)}`
    + `${gs.baseline ? `&baseline=${encodeURIComponent(gs.baseline)}` : ""}`;
  return api.getJson(`api/v1/groups?${q}`).then((res) => {
    gs.keys = res.keys || [];
    if (gs.syncKeys) gs.syncKeys();
    return res;
  });
}

/** "#rrggbb" of an HSL colour (rgba() and Plotly take hex). */
function hslHex(hue, sat, light) {
  const a = sat * Math.min(light, 1 - light);
  const f = (n) => {
    const k = (n + hue / 30) % 12;
    return Math.round(255 * (light - a * Math.max(-1, Math.min(k - 3, 9 - k, 1)))).toString(16).padStart(2, "0");
  };
  return `#${f(0)}${f(8)}${f(4)}`;
}

const DISTINCT = 20; // groups told apart by colour; a larger sweep's groups share these (packed per colour then)

/**
 * A group's colour: hues spread evenly over the groups of the answer (neighbours also differ in lightness past a
 * dozen), so no two of up to 20 groups share a colour, and a group's band, line, legend chip and table row share
 * its hue. More groups cycle through 20 colours: a chart of 50 then draws 20 packed bands, not 50.
 */
export function groupColor(res, id) {
  const n = Math.min(Math.max(res.groups.length, 1), DISTINCT);
  const i = Math.max(0, res.groups.findIndex((x) => x.id === id)) % DISTINCT;
  const light = isDark() ? 0.62 : 0.42; // read on the theme's background, as run colours are
  return hslHex((210 + (i * 360) / n) % 360, 0.7, n > 12 && i % 2 ? light + 0.16 * (isDark() ? -1 : 1) : light);
}

/** The legend of the grouped charts: each group's colour, name and size, above the charts. */
export function groupLegend(res) {
  return h("div", { class: "group-legend", role: "list", "aria-label": "groups" }, res.groups.map((g) =>
    h("span", { class: "group-legend-item", role: "listitem", dataset: { group: g.id }, title: g.envs.join("\n") },
      h("span", { class: "chip", style: `background:${groupColor(res, g.id)}` }), `${shortLabel(g.label)} (n=${g.n})`)));
}

/**
 * Many groups (a sweep's 50 configs): a band trace and a centre-line trace per colour, groups apart by gaps — three
 * traces a group made Plotly redraw 150 traces per chart. Each band is one closed shape: lower edge out, upper back.
 */
function packedBands(res, series, smoothFn, byId) {
  const byColor = new Map();
  for (const entry of series.groups) {
    const color = groupColor(res, entry.group);
    let p = byColor.get(color);
    if (!p) {
      p = { color, bx: [], by: [], mx: [], my: [], text: [], groups: [] };
      byColor.set(color, p);
    }
    if (p.groups.length) {
      p.bx.push(null);
      p.by.push(null);
      p.mx.push(null);
      p.my.push(null);
      p.text.push("");
    }
    p.groups.push(entry.group);
    const g = byId.get(entry.group);
    const name = plotlyText(`${res.center === "median" ? "median · " : ""}${g.label} (n=${entry.aligned})`); // config text
    const [lo, hi, mid] = [smoothFn(entry.lo), smoothFn(entry.hi), smoothFn(entry.mean)];
    const xs = entry.x;
    for (let i = 0; i < xs.length; i++) {
      p.bx.push(xs[i]);
      p.by.push(lo[i]);
      p.mx.push(xs[i]);
      p.my.push(mid[i]);
      p.text.push(name);
    }
    for (let i = xs.length - 1; i >= 0; i--) {
      p.bx.push(xs[i]);
      p.by.push(hi[i]);
    }
  }
  const out = [];
  for (const p of byColor.values()) {
    out.push({ type: "scatter", mode: "lines", x: p.bx, y: p.by, fill: "toself", fillcolor: rgba(p.color, 0.2),
      line: { width: 0, color: p.color }, hoverinfo: "skip", showlegend: false, connectgaps: false,
      meta: { groups: p.groups, role: "band" } });
  }
  for (const p of byColor.values()) { // centre lines over every band
    out.push({ type: "scatter", mode: "lines", x: p.mx, y: p.my, text: p.text, name: "", showlegend: false,
      connectgaps: false, line: { width: 1.6, color: p.color }, meta: { groups: p.groups, role: "mean" },
      hovertemplate: "<b>%{text}</b><br>%{y:.4g} at step %{x:.6~g}<extra></extra>" });
  }
  return out;
}

/** Plotly traces of one series: per group an invisible lower edge, the upper edge filled down to it, the mean. */
export function bandTraces(res, series, smoothFn = (ys) => ys) {
  const byId = new Map(res.groups.map((g) => [g.id, g]));
  if (series.groups.length > PACK_GROUPS) return packedBands(res, series, smoothFn, byId);
  const out = [];
  for (const entry of series.groups) {
    const g = byId.get(entry.group);
    const color = groupColor(res, entry.group);
    const name = `${g.label} (n=${entry.aligned}${entry.aligned < entry.n ? ` of ${entry.n}` : ""})`;
    const base = { type: "scatter", mode: "lines", x: entry.x, legendgroup: entry.group, connectgaps: false };
    out.push({ ...base, y: smoothFn(entry.lo), line: { width: 0, color }, showlegend: false, hoverinfo: "skip",
      meta: { group: entry.group, role: "lo" } });
    out.push({ ...base, y: smoothFn(entry.hi), line: { width: 0, color }, fill: "tonexty", fillcolor: rgba(color, 0.2),
      showlegend: false, hoverinfo: "skip", meta: { group: entry.group, role: "hi" } });
    out.push({ ...base, y: smoothFn(entry.mean), name: plotlyText(`${res.center === "median" ? "median · " : ""}${name}`),
      line: { width: 1.8, color },
      meta: { group: entry.group, role: "mean" } });
  }
  return out;
}

/** "2 groups · n=5 (5 aligned on 50 steps), ..." for a card's info line. */
export function bandInfo(res, series) {
  const band = Object.fromEntries(BANDS)[res.band] || res.band;
  const groups = series.groups;
  const binned = (e) => (e.downsampled ? " (binned)" : "");
  // The usual case in one short phrase, so the card keeps room for its title.
  if (groups.length && groups.every((e) => e.aligned === e.n && e.steps === groups[0].steps && binned(e) === binned(groups[0]))) {
    return `${band} · n=${groups.map((e) => e.n).join(", ")} · all aligned on ${counted(groups[0].steps, "step")}${binned(groups[0])}`;
  }
  const parts = groups.map((e) => `n=${e.n}: ${e.aligned} aligned on ${counted(e.steps, "step")}${binned(e)}`);
  return `${band} · ${parts.join(" · ")}`;
}

const fmt = (v) => (v === null || v === undefined ? "–" : Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0)
  ? Number(v).toExponential(3) : Number(v).toPrecision(4));
const fmtP = (p) => (p === null || p === undefined ? "–" : p < 1e-4 ? "< 0.0001" : p.toFixed(4));

/** The Welch test of group `id` against `base` in a series' pairs, oriented as "id minus base" (null: none). */
function against(t, id, base) {
  const p = t.pairs.find((x) => (x.a === id && x.b === base) || (x.a === base && x.b === id));
  if (!p) return null;
  return p.a === id ? p : { ...p, diff: p.diff === null ? null : -p.diff, t: p.t === null ? null : -p.t };
}

/**
 * The A-vs-B table, compact: per series one row per group (n, mean and 95% CI) with Welch's test against the
 * baseline group the user picks (the first by default); folded when there are many groups. Goes under the charts.
 */
export function abTable(res, gs = null) {
  const byId = new Map(res.groups.map((g) => [g.id, g]));
  const base = gs && gs.baseline && byId.has(gs.baseline) ? gs.baseline : res.groups[0].id;
  const label = (id) => h("span", { class: "ab-group" },
    h("span", { class: "chip", style: `background:${groupColor(res, id)}` }), shortLabel(byId.get(id).label));
  const rows = [];
  for (const t of res.tests) {
    const arrow = t.direction === "min" ? "lower is better" : "higher is better";
    rows.push(h("tr", { class: "ab-series" }, h("th", { colspan: "6",
      text: `${t.title} — ${t.value === "best" ? `best (${t.direction})` : "final"} value, ${arrow}` })));
    for (const g of t.groups) {
      const stats = `${fmt(g.mean)} ${g.ci ? `[${fmt(g.ci[0])}, ${fmt(g.ci[1])}]` : "(n < 2: no CI)"}`;
      if (g.group === base) {
        rows.push(h("tr", { class: "ab-base", dataset: { series: t.title, group: g.group } }, h("td", null, label(g.group)),
          h("td", { text: `n=${g.n}` }), h("td", { text: stats }), h("td", { text: "baseline" }), h("td"), h("td")));
        continue;
      }
      const p = against(t, g.group, base);
      const sig = !!p && p.p !== null && p.p < 0.05;
      rows.push(h("tr", { class: `ab-pair${sig ? " significant" : ""}${p && p.p === null ? " too-small" : ""}`,
        dataset: { series: t.title, a: g.group, b: base, p: p && p.p !== null ? String(p.p) : "" } },
      h("td", null, label(g.group)), h("td", { text: `n=${g.n}` }), h("td", { text: stats }),
      h("td", { class: "ab-diff", text: p ? `Δ ${fmt(p.diff)}` : "–" }),
      h("td", { class: "ab-p", title: p && p.t !== null ? `Welch t=${fmt(p.t)}, df=${fmt(p.df)}` : "",
        text: !p || p.p === null ? "" : p.p < 1e-4 ? "p < 0.0001" : `p = ${fmtP(p.p)}` }),
      h("td", { class: "ab-note", title: p && p.note ? p.note : "",
        text: !p ? "" : p.p === null ? (p.note && p.note.startsWith("n too small") ? "n too small" : p.note || "")
          : sig ? "significant at 0.05" : "not significant" })));
    }
  }
  const many = res.groups.length > 8; // a sweep's 50 groups: folded, the charts come first
  const picker = h("select", { class: "ab-baseline", "aria-label": "baseline group", onchange: () => {
    if (!gs) return;
    gs.baseline = picker.value;
    if (gs.refresh) gs.refresh();
  } }, res.groups.map((g) => h("option", { value: g.id, text: shortLabel(g.label), selected: g.id === base })));
  return h("details", { class: "ab-box", open: !many },
    h("summary", { text: `A vs B: ${counted(res.groups.length, "group")} against ${shortLabel(byId.get(base).label)} (n=${byId.get(base).n}), Welch's t-test` }),
    h("label", { class: "ab-baseline-row" }, "baseline ", picker),
    h("table", { class: "config ab-table" }, h("tbody", null, rows)));
}
