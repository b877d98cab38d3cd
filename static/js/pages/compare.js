// pages/compare.js — compare page: panes with the same title from several envs overlaid (one color per env), config diff, live.
import * as api from "../api.js";
import { h, plotlyText, throttled } from "../dom.js";
import { loadPlotly } from "../plotly_loader.js";
import { abTable, bandInfo, bandTraces, fetchGroups, groupControls, groupState } from "./seed_groups.js";

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
  "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#8c6d31", "#843c39", "#7b4173"];
const REFRESH_MS = 300; // live changes of any compared env refetch the overlay at most this often

/** Envs named in ?envs=a,b (each URL-encoded). */
function envsFromUrl() {
  const raw = new URLSearchParams(window.location.search).get("envs") || "";
  return [...new Set(raw.split(",").map((s) => s.trim()).filter(Boolean))];
}

/** Rows of the config diff: every key of any env's config, flagged when the values differ. */
export function configDiff(configs) {
  const keys = [...new Set(configs.flatMap((c) => Object.keys(c || {})))].sort();
  return keys.map((k) => {
    const vals = configs.map((c) => (c && k in c ? JSON.stringify(c[k]) : "–"));
    return { key: k, vals, differs: new Set(vals).size > 1 };
  });
}

export function comparePage({ connect, points, notice }) {
  const envs = envsFromUrl();
  const $ = (id) => document.getElementById(id);
  document.title = `compare ${envs.join(", ")} · paneboard`;
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← envs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: `compare ${envs.length} envs` }));
  const gs = groupState(); // seed groups: envs grouped by config minus `seed`, one mean ± band per group
  $("tools").replaceChildren(h("a", { class: "btn-small act-snapshot", download: "",
    title: "download this comparison as one HTML file (opens offline)",
    href: api.url(`api/v1/compare/snapshot.html?envs=${envs.map(encodeURIComponent).join(",")}`) }, "snapshot"));
  const controls = h("div", { class: "compare-controls" },
    groupControls(gs, () => load().catch((err) => notice(`cannot load: ${err.message}`, "error"))));
  const color = new Map(envs.map((e, i) => [e, COLORS[i % COLORS.length]]));
  const legend = h("div", { class: "compare-legend" }, envs.map((e) =>
    h("a", { class: "legend-env", href: api.envPageUrl(e), dataset: { env: e } },
      h("span", { class: "chip", style: `background:${color.get(e)}` }), e)));
  const configBox = h("div", { class: "config-diff" });
  const grid = h("div", { class: "grid compare-grid", id: "grid" });
  const empty = h("div", { class: "empty", hidden: true, text: "No line or scatter panes with a common title." });
  const abBox = h("div", { class: "ab-holder" });
  $("main").replaceChildren(legend, controls, configBox, abBox, grid, empty);
  if (envs.length < 1) {
    notice("Pick envs to compare: /compare?envs=a,b", "warn");
    return;
  }

  const cards = new Map(); // title -> {card, plot}

  function traceOf(t, pane) {
    return {
      type: "scatter", x: t.x || [], y: t.y || [], name: plotlyText(t.label), legendgroup: t.env,
      mode: pane.kind === "scatter" ? "markers" : "lines", connectgaps: false,
      line: { width: 1.5, color: color.get(t.env) }, marker: { size: 4, color: color.get(t.env) },
    };
  }

  async function draw(res) {
    const Plotly = await loadPlotly();
    const seen = new Set();
    for (const pane of res.panes || []) {
      seen.add(pane.title);
      let c = cards.get(pane.title);
      if (!c) {
        const plot = h("div", { class: "xy-plot" });
        const card = h("section", { class: "card", dataset: { title: pane.title, kind: pane.kind } },
          h("header", { class: "card-bar" }, h("span", { class: "card-title", text: pane.title }),
            h("span", { class: "card-info" })), h("div", { class: "card-body" }, plot));
        grid.append(card);
        c = { card, plot, first: true };
        cards.set(pane.title, c);
      }
      let traces;
      if (pane.group) {
        traces = bandTraces(res.groupRes, pane.group);
        c.card.querySelector(".card-info").textContent = bandInfo(res.groupRes, pane.group);
      } else {
        traces = (pane.traces || []).map((t) => traceOf(t, pane));
        const total = (pane.traces || []).reduce((n, t) => n + (Number(t.total) || 0), 0);
        c.card.querySelector(".card-info").textContent = `${total.toLocaleString()} pts · ${pane.members.length} envs`;
      }
      c.card.dataset.grouped = pane.group ? "1" : "";
      c.card.dataset.points = String(traces.reduce((n, t) => n + t.x.length, 0));
      const layout = { autosize: true, margin: { l: 44, r: 10, t: 8, b: 32 }, showlegend: true, uirevision: "keep",
        legend: { orientation: "h", y: 1.02, yanchor: "bottom", font: { size: 10 } }, font: { size: 11 },
        yaxis: { type: pane.opts && pane.opts.ytype === "log" ? "log" : "-" } };
      const config = { responsive: true, displaylogo: false };
      if (c.first) await Plotly.newPlot(c.plot, traces, layout, config);
      else await Plotly.react(c.plot, traces, layout, config);
      c.first = false;
    }
    for (const [title, c] of [...cards]) {
      if (!seen.has(title)) {
        Plotly.purge(c.plot);
        c.card.remove();
        cards.delete(title);
      }
    }
    empty.hidden = cards.size > 0;
  }

  async function drawConfig() {
    const metas = await Promise.all(envs.map((e) => api.getJson(`${api.envPath(e)}/meta`).then((r) => r.meta.config || null,
      () => null)));
    if (!metas.some(Boolean)) {
      configBox.replaceChildren();
      return;
    }
    const rows = configDiff(metas);
    configBox.replaceChildren(h("table", { class: "config" },
      h("tr", null, h("th", { text: "config" }), envs.map((e) => h("th", { text: e }))),
      rows.map((r) => h("tr", { class: r.differs ? "differs" : null, dataset: { key: r.key } },
        h("th", { text: r.key }), r.vals.map((v) => h("td", { text: v }))))));
  }

  let loading = null;
  async function load() {
    if (loading) return loading;
    loading = (async () => {
      try {
        let res;
        if (gs.on) {
          const groupRes = await fetchGroups(gs, envs, points);
          res = { groupRes, panes: groupRes.series.map((s) => ({ title: s.title, kind: "line", group: s })) };
        } else {
          res = await api.getJson(`api/v1/compare?envs=${envs.map(encodeURIComponent).join(",")}&points=${points | 0}`);
        }
        notice("");
        abBox.replaceChildren(...(res.groupRes && res.groupRes.tests.length ? [abTable(res.groupRes)] : []));
        await draw(res);
      } finally {
        loading = null;
      }
    })();
    return loading;
  }
  const refresh = throttled(() => load().catch((err) => notice(`cannot load: ${err.message}`, "error")), REFRESH_MS);

  drawConfig();
  // One live subscription per compared env (the live channel follows one env per socket).
  for (const env of envs) {
    connect(env, load, (m) => {
      if (m.env !== env) return;
      if (["extend", "pane", "close", "resync", "env_deleted"].includes(m.type)) refresh();
      else if (m.type === "meta") drawConfig();
    });
  }
}
