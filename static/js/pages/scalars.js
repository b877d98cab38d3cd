// pages/scalars.js — TensorBoard-style Scalars view: every `line` pane of the picked runs (envs) overlaid by title, sectioned by tag prefix, smoothed, live.
import * as api from "../api.js";
import { h } from "../dom.js";
import { loadPlotly } from "../plotly_loader.js";
import { customPanes, loadLayouts } from "./custom_scalars.js";
import { regexMatcher, robustRange, smooth } from "../smoothing.js";

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
  "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#8c6d31", "#843c39", "#7b4173"];
const REFRESH_MS = 300; // live changes of a shown run refetch the charts at most this often
const X_MODES = [["step", "Step"], ["relative", "Relative"], ["wall", "Wall"]];

/** Runs named in ?envs=a,b; null when the URL names none (then every run starts picked, as in TensorBoard). */
function envsFromUrl() {
  const raw = new URLSearchParams(window.location.search).get("envs");
  if (raw === null) return null;
  return new Set(raw.split(",").map((s) => s.trim()).filter(Boolean));
}

/** Section of a tag: the text before its first "/" (a tag without one is its own section). */
export const sectionOf = (tag) => String(tag).split("/")[0];

/** Seconds -> the unit a relative axis reads best in, by the longest span shown. */
function relUnit(span) {
  if (span < 120) return [1, "s"];
  if (span < 7200) return [60, "min"];
  return [3600, "h"];
}

/** One labelled control of the side bar. */
function control(label, input, cls) {
  return h("label", { class: `sc-control ${cls}` }, h("span", { class: "sc-label", text: label }), input);
}

export function scalarsPage({ connect, points, notice }) {
  const $ = (id) => document.getElementById(id);
  document.title = "scalars · paneboard";
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← envs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: "scalars" }));

  const urlRuns = envsFromUrl();
  const state = { smoothing: 0.6, xmode: "step", logY: false, outliers: true };
  const picked = new Set(urlRuns || []);
  const known = new Map(); // run -> colour, in order of first sight (a run keeps its colour while the page lives)
  let runs = []; // every env, sorted by name

  // ---- controls
  const tagFilter = h("input", { type: "search", class: "filter tag-filter", placeholder: "filter tags (regex)",
    "aria-label": "filter tags", oninput: () => applyTagFilter() });
  $("tools").replaceChildren(tagFilter);
  const runFilter = h("input", { type: "search", class: "filter run-filter", placeholder: "filter runs (regex)",
    "aria-label": "filter runs", oninput: () => { drawRuns(); refresh(); } });
  const runList = h("div", { class: "sc-runs" });
  const smoothVal = h("span", { class: "smoothing-value", text: "0.60" });
  const smoothIn = h("input", { type: "range", class: "smoothing", min: "0", max: "0.99", step: "0.01", value: "0.6",
    "aria-label": "smoothing", oninput: () => {
      state.smoothing = Number(smoothIn.value);
      smoothVal.textContent = state.smoothing.toFixed(2);
      redraw();
    } });
  const xSel = h("select", { class: "x-axis", "aria-label": "horizontal axis", onchange: () => {
    state.xmode = xSel.value;
    redraw();
  } }, X_MODES.map(([v, t]) => h("option", { value: v, text: t })));
  const logIn = h("input", { type: "checkbox", class: "log-y", onchange: () => { state.logY = logIn.checked; redraw(); } });
  const outIn = h("input", { type: "checkbox", class: "ignore-outliers", checked: true,
    onchange: () => { state.outliers = outIn.checked; redraw(); } });
  const side = h("aside", { class: "sc-side" },
    control("Smoothing", h("span", { class: "sc-row" }, smoothIn, smoothVal), "sc-smoothing"),
    control("Horizontal axis", xSel, "sc-x"),
    control("Log scale (y)", logIn, "sc-check"),
    control("Ignore outliers in chart scaling", outIn, "sc-check"),
    h("div", { class: "sc-label", text: "Runs" }), runFilter,
    h("div", { class: "sc-row" },
      h("button", { type: "button", class: "btn-small runs-all", onclick: () => setAll(true) }, "all"),
      h("button", { type: "button", class: "btn-small runs-none", onclick: () => setAll(false) }, "none")),
    runList);
  const sections = h("div", { class: "sc-sections" });
  const empty = h("div", { class: "empty", hidden: true });
  $("main").replaceChildren(h("div", { class: "scalars" }, side, h("div", { class: "sc-content" }, sections, empty)));

  const colorOf = (run) => {
    if (!known.has(run)) known.set(run, COLORS[known.size % COLORS.length]);
    return known.get(run);
  };
  /** Runs whose lines are drawn: picked and matching the run regex (an invalid one matches nothing). */
  const shownRuns = () => {
    const m = regexMatcher(runFilter.value.trim());
    return runs.filter((r) => picked.has(r) && m(r));
  };

  function setAll(on) {
    const m = regexMatcher(runFilter.value.trim());
    for (const r of runs) if (m(r)) (on ? picked.add(r) : picked.delete(r));
    drawRuns();
    refresh();
  }

  function drawRuns() {
    const m = regexMatcher(runFilter.value.trim());
    runList.replaceChildren(...runs.map((r) => {
      const box = h("input", { type: "checkbox", class: "run-pick", checked: picked.has(r), onchange: () => {
        if (box.checked) picked.add(r);
        else picked.delete(r);
        refresh();
      } });
      return h("label", { class: "sc-run", dataset: { run: r }, hidden: !m(r) },
        box, h("span", { class: "chip", style: `background:${colorOf(r)}` }), h("span", { class: "run-name", text: r }));
    }));
  }

  // ---- charts
  const cards = new Map(); // tag -> {card, plot, section, first}
  const secs = new Map(); // section name -> {el, body}
  let res = { panes: [] }; // the last compare read (line panes of the shown runs)

  function sectionEl(name) {
    let s = secs.get(name);
    if (!s) {
      const body = h("div", { class: "grid sc-grid" });
      const el = h("section", { class: "sc-section", dataset: { section: name } },
        h("h2", { class: "sc-section-title", text: name }), body);
      const after = [...secs.keys()].sort().find((k) => k > name);
      sections.insertBefore(el, after ? secs.get(after).el : null); // sections in name order
      s = { el, body };
      secs.set(name, s);
    }
    return s;
  }

  /** Plotly traces of one tag: per series the raw points faded underneath and the smoothed line on top. */
  function tracesOf(pane) {
    const out = [];
    let unit = [1, "s"];
    let noWalls = false;
    if (state.xmode === "relative") {
      let span = 0;
      for (const t of pane.traces) {
        const w = t.wall || [];
        if (w.length) span = Math.max(span, w[w.length - 1] - w[0]);
      }
      unit = relUnit(span);
    }
    for (const t of pane.traces) {
      const ys = Array.isArray(t.y) ? t.y : [];
      let xs = Array.isArray(t.x) ? t.x : [];
      const w = Array.isArray(t.wall) && t.wall.length === ys.length ? t.wall : null;
      if (state.xmode !== "step" && !w) noWalls = true;
      else if (state.xmode === "relative") xs = w.map((v) => (v - w[0]) / unit[0]);
      else if (state.xmode === "wall") xs = w.map((v) => v * 1000);
      const color = colorOf(t.env);
      const base = { type: "scatter", mode: "lines", x: xs, connectgaps: false, legendgroup: t.env };
      out.push({ ...base, y: ys, name: `${t.label} (raw)`, showlegend: false, hoverinfo: "skip", opacity: 0.25,
        line: { width: 1, color }, meta: { env: t.env, win: t.win, role: "raw" } });
      out.push({ ...base, y: smooth(ys, state.smoothing), name: String(t.label), line: { width: 1.6, color },
        meta: { env: t.env, win: t.win, role: "smoothed" } });
    }
    return { traces: out, unit, noWalls };
  }

  function layoutOf(pane, traces, unit) {
    const yaxis = { type: state.logY ? "log" : "linear", automargin: true, gridcolor: "#eceef1" };
    if (state.outliers) {
      const vals = traces.filter((t) => t.meta.role === "raw").flatMap((t) => t.y);
      const r = robustRange(vals, state.logY);
      if (r) yaxis.range = r;
      else yaxis.autorange = true;
    } else yaxis.autorange = true;
    const xtitle = { step: "step", relative: `relative (${unit[1]})`, wall: "wall time" }[state.xmode];
    return {
      autosize: true, margin: { l: 48, r: 10, t: 8, b: 36 }, font: { size: 11 }, showlegend: true,
      legend: { orientation: "h", y: 1.02, yanchor: "bottom", font: { size: 10 } }, hovermode: "closest",
      xaxis: { type: state.xmode === "wall" ? "date" : "linear", title: { text: xtitle, standoff: 4 }, automargin: true,
        gridcolor: "#eceef1" },
      yaxis,
      // Zoom survives live refreshes, but a new axis mode or scale starts from the computed ranges again.
      uirevision: `${state.xmode}|${state.logY}|${state.outliers}`,
    };
  }

  async function drawCard(pane) {
    const Plotly = await loadPlotly();
    let c = cards.get(pane.title);
    if (!c) {
      const plot = h("div", { class: "xy-plot" });
      const card = h("section", { class: "card sc-card", dataset: { tag: pane.title } },
        h("header", { class: "card-bar" }, h("span", { class: "card-title", text: pane.title }),
          h("span", { class: "card-info" })), h("div", { class: "card-body" }, plot));
      sectionEl(sectionOf(pane.title)).body.append(card);
      c = { card, plot, first: true };
      cards.set(pane.title, c);
    }
    const { traces, unit, noWalls } = tracesOf(pane);
    c.card.querySelector(".card-info").textContent = noWalls ? "no wall times: step axis" : `${pane.traces.length} series`;
    c.card.dataset.smoothing = String(state.smoothing);
    const config = { responsive: true, displaylogo: false };
    if (c.first) await Plotly.newPlot(c.plot, traces, layoutOf(pane, traces, unit), config);
    else await Plotly.react(c.plot, traces, layoutOf(pane, traces, unit), config);
    c.first = false;
  }

  let drawing = Promise.resolve();
  /** Re-draw every chart from the last read (smoothing, axis and scale changes need no refetch). */
  function redraw() {
    drawing = drawing.then(async () => {
      const panes = (res.panes || []).filter((p) => p.kind === "line");
      const seen = new Set(panes.map((p) => p.title));
      for (const [tag, c] of [...cards]) {
        if (seen.has(tag)) continue;
        if (window.Plotly) window.Plotly.purge(c.plot);
        c.card.remove();
        cards.delete(tag);
      }
      for (const p of panes) await drawCard(p);
      for (const [name, s] of [...secs]) {
        if (s.body.children.length) continue;
        s.el.remove();
        secs.delete(name);
      }
      applyTagFilter();
    }).catch((err) => notice(`cannot draw: ${err.message}`, "error"));
    return drawing;
  }

  function applyTagFilter() {
    const m = regexMatcher(tagFilter.value.trim());
    let shown = 0;
    for (const [tag, c] of cards) {
      c.card.hidden = !m(tag);
      if (!c.card.hidden) shown += 1;
    }
    for (const s of secs.values()) s.el.hidden = ![...s.body.children].some((el) => !el.hidden);
    const none = !shownRuns().length ? "No runs picked: tick runs on the left (or clear the run filter)."
      : !cards.size ? "No line charts in the picked runs." : !shown ? "No tags match the filter." : "";
    empty.textContent = none;
    empty.hidden = !none;
    document.body.dataset.scalarsTags = String(shown);
  }

  // ---- data
  // Custom-scalars layouts live in each run's meta and change rarely: read again when the runs change, or after 5 s.
  let layoutCache = { key: null, at: 0, layout: {} };
  async function layoutsOf(shown) {
    const key = shown.join("\n");
    if (key !== layoutCache.key || Date.now() - layoutCache.at > 5000) {
      layoutCache = { key, at: Date.now(), layout: await loadLayouts(shown) };
    }
    return layoutCache.layout;
  }

  let fetchSeq = 0; // a (re)connect's load and a live refresh may overlap: only the newest read is drawn
  async function fetchCharts() {
    const seq = ++fetchSeq;
    const shown = shownRuns();
    let next;
    if (!shown.length) {
      next = { panes: [] };
    } else {
      const q = `envs=${shown.map(encodeURIComponent).join(",")}&points=${points | 0}&walls=1`;
      try {
        next = await api.getJson(`api/v1/compare?${q}`);
      } catch (err) {
        if (err.status !== 404) throw err;
        await loadRuns(); // a run was deleted meanwhile: read the run list again and retry once
        const again = shownRuns();
        next = again.length ? await api.getJson(`api/v1/compare?envs=${again.map(encodeURIComponent).join(",")}`
          + `&points=${points | 0}&walls=1`) : { panes: [] };
      }
    }
    if (shown.length) next = { ...next, panes: [...(next.panes || []), ...customPanes(next.panes || [], await layoutsOf(shown))] };
    if (seq !== fetchSeq) return;
    res = next;
    await redraw();
  }

  async function loadRuns() {
    const r = await api.listEnvs();
    runs = (r.envs || []).map((e) => String(e.name)).sort();
    if (!urlRuns) for (const name of runs) if (!known.has(name)) picked.add(name); // new runs start picked
    for (const name of runs) colorOf(name);
    drawRuns();
  }

  let timer = null;
  let loading = null;
  function refresh() {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      if (loading) {
        loading.then(refresh);
        return;
      }
      loading = fetchCharts().catch((err) => notice(`cannot load: ${err.message}`, "error"))
        .finally(() => { loading = null; });
    }, REFRESH_MS);
  }

  // The env-list subscription tells about every change of every env (summaries at most every 0.5 s per env):
  // one socket keeps any number of runs live, and new runs appear in the list as they start.
  connect(null, async () => {
    await loadRuns();
    notice("");
    await fetchCharts();
  }, (m) => {
    if (m.type === "env" && m.env && typeof m.env.name === "string") {
      if (!runs.includes(m.env.name)) {
        loadRuns().then(refresh, () => {});
      } else if (shownRuns().includes(m.env.name)) refresh();
    } else if (m.type === "env_deleted") {
      runs = runs.filter((r) => r !== m.env);
      picked.delete(m.env);
      drawRuns();
      refresh();
    }
  });
}
