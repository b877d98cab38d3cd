// pages/compare.js — compare page: panes with the same (win, title) from any number of envs overlaid, each run in its
// own colour, config diff; charts read as they scroll into view, live updates fetch only new points.
import * as api from "../api.js";
import { lastX, listCharts, mergeSeries, readChart, seriesKey } from "../chart_reads.js";
import { counted, h, plotlyText, throttled } from "../dom.js";
import { pool, visibility } from "../lazy.js";
import { markDense, PACK_MIN, packSeries } from "../packed_traces.js";
import { loadPlotly } from "../plotly_loader.js";
import { attachHover, rehighlight } from "../run_hover.js";
import { heardRunColor, runColor, styleSeries } from "../run_colors.js";
import { keepMarks, readMarks, setMarks } from "./run_marks.js";
import { drawList, selectorEl, selectorState, shownOf } from "./run_selector.js";
import { imagesSection } from "./compare_images.js";
import { legendPlacement, smoothingControl } from "../chart_prefs.js";
import { smooth } from "../smoothing.js";
import { abTable, bandInfo, bandTraces, fetchGroups, groupControls, groupLegend, groupOffer, groupState } from "./seed_groups.js";
import { scopeBar, scopeEnvs, scopeFromUrl } from "../scope.js";

const REFRESH_MS = 300; // live changes of compared envs are read at most this often
const LEGEND_MAX = 12; // more series than this: the run chips above are the legend
const CONFIG_MAX = 50; // the config diff reads this many runs' meta (a table of a thousand columns helps no one)


/** Rows of the config diff: every key of any env's config, flagged when the values differ. */
export function configDiff(configs) {
  const keys = [...new Set(configs.flatMap((c) => Object.keys(c || {})))].sort();
  return keys.map((k) => {
    const vals = configs.map((c) => (c && k in c ? JSON.stringify(c[k]) : "–"));
    return { key: k, vals, differs: new Set(vals).size > 1 };
  });
}

/** A chart's key: Compare overlays panes with the same win and title, never two panes merely sharing a title. */
const chartKey = (c) => `${c.win}\n${c.title}`;

/** The runs the URL names (?q=, ?sel= or ?envs=), resolved once; a bad query or selection: no runs and its error. */
async function scopedRuns(scope) {
  if (!scope) return { envs: [], err: null };
  try {
    return { envs: [...new Set(await scopeEnvs(scope))], err: null };
  } catch (err) {
    if (err.status !== 400 && err.status !== 404) throw err;
    return { envs: [], err };
  }
}

export async function comparePage({ connect, points, notice }) {
  const scope = scopeFromUrl();
  const scoped = await scopedRuns(scope).catch((err) => ({ envs: [], err }));
  let envs = scoped.envs;
  const envSet = new Set(envs);
  const $ = (id) => document.getElementById(id);
  document.title = `compare ${counted(envs.length, "run")} · paneboard`;
  $("crumbs").replaceChildren(h("a", { href: api.homeUrl(), class: "back", text: "← runs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: `compare ${counted(envs.length, "run")}` }));
  const gs = groupState(); // seed groups: envs grouped by config minus `seed`, one mean ± band per group
  $("tools").replaceChildren(h("a", { class: "btn-small act-snapshot", download: "",
    title: "download this comparison as one HTML file (opens offline)",
    href: api.url(`api/v1/compare/snapshot.html?envs=${api.envsQuery(envs)}`) }, "snapshot"));
  const scopeBox = h("div", { class: "scope-holder" }, scopeBar(scope, envs.length, scoped.err));
  // Smoothing: the one setting of Scalars and run pages (off until chosen), applied to line charts.
  let smoothing = 0;
  const smoother = smoothingControl(0, (w) => { smoothing = w; for (const c of charts.values()) if (c.loaded || c.group) draw(c); });
  smoothing = Number(smoother.input.value);
  const controls = h("div", { class: "compare-controls" }, smoother.el,
    groupControls(gs, () => { mode = null; refresh(); }));
  // The run selector (search, show/hide, pins, baseline); a few runs also get their chips as a legend.
  const sel = selectorState([...envs].sort());
  setMarks(sel, readMarks("compare")); // pins and baseline kept from the last visit (or named in the URL)
  let shown = new Set(envs);
  const redrawAll = () => {
    shown = new Set(shownOf(sel));
    for (const c of charts.values()) if (c.loaded || c.group) draw(c);
    images.setRuns(envs.filter((e) => shown.has(e))).then(showEmpty, (err) => notice(`images: ${err.message}`, "error"));
  };
  const picker = selectorEl(sel, { onPick: redrawAll, onStyle: redrawAll, onMarks: () => keepMarks("compare", sel) });
  drawList(sel);
  const chips = envs.length > LEGEND_MAX ? [] : envs.map((e) => h("a", { class: "legend-env", href: api.envPageUrl(e),
    dataset: { env: e } }, h("span", { class: "chip", style: `background:${runColor(e)}` }), e));
  // A sweep's hundreds of runs sit in the selector, open; a few runs' selector folds under their chips.
  const legend = h("div", { class: "compare-head" }, h("div", { class: "compare-legend" }, chips),
    h("details", { class: "compare-legend-fold compare-runs", open: envs.length > LEGEND_MAX },
      h("summary", { text: `${counted(envs.length, "run")}: search, show/hide, pin, baseline` }), picker));
  const configBox = h("div", { class: "config-diff" });
  const grid = h("div", { class: "grid compare-grid", id: "grid" });
  const images = imagesSection(); // one image tag of the first 16 shown runs, one step slider
  const empty = h("div", { class: "empty", hidden: true, text: "No line or scatter panes with a common title." });
  // A comparison of image runs only has nothing else to show: the message would read as if nothing were there.
  const showEmpty = () => { empty.hidden = charts.size > 0 || !images.el.hidden; };
  const abBox = h("div", { class: "ab-holder" }); // under the charts: the bands come first
  const groupBox = h("div", { class: "ab-holder" }); // the groups' legend, above the charts
  const offerBox = h("div", { class: "offer-holder" });
  $("main").replaceChildren(scopeBox, offerBox, legend, controls, configBox, groupBox, grid, abBox, empty, images.el);
  if (envs.length < 1) {
    if (!scoped.err) notice("No runs to compare: type a runs query above, or tick runs on the runs table and open them in Compare.", "warn");
    document.body.dataset.ready = "1";
    return;
  }

  const charts = new Map(); // key -> {title, win, kind, opts, envs, held, loaded, pending, card, plot, first}
  const reads = pool(3);
  const vis = visibility((c) => load(c));
  const dirty = new Set();
  let mode = null; // "runs" | "groups": what the cards show now
  let needIndex = true;
  let groupRes = null;
  const paneCounts = new Map(); // run -> panes at the last chart list: a change means a new chart may have come

  function card(c) {
    const plot = h("div", { class: "xy-plot" });
    c.card = h("section", { class: "card", dataset: { title: c.title, paneWin: c.win || "", kind: c.kind } },
      h("header", { class: "card-bar" }, h("span", { class: "card-title", text: c.title }),
        h("span", { class: "card-info" })), h("div", { class: "card-body" }, plot));
    c.plot = plot;
    c.first = true;
    attachHover(plot, () => (c.group ? [] : c.tipSeries || []), () => ({ pinned: sel.pinned, baseline: sel.baseline }));
    grid.append(c.card);
  }

  function drop(key) {
    const c = charts.get(key);
    vis.unobserve(c);
    if (window.Plotly && !c.first) window.Plotly.purge(c.plot);
    c.card.remove();
    charts.delete(key);
  }

  async function draw(c) {
    if (!c.visible) return;
    const Plotly = await loadPlotly();
    let traces;
    let count = 0; // series drawn: runs (or their keys), or groups
    const weight = c.kind === "line" ? smoothing : 0;
    const smoothed = (ys) => (weight > 0 ? smooth(ys, weight) : ys);
    if (c.group) {
      traces = bandTraces(groupRes, c.group, weight > 0 ? smoothed : undefined);
      count = c.group.groups.length;
      c.card.querySelector(".card-info").textContent = bandInfo(groupRes, c.group);
    } else {
      const order = new Map(envs.map((e, i) => [e, i]));
      const held = [...c.held.values()].filter((s) => shown.has(s.env)).sort((a, b) => order.get(a.env) - order.get(b.env));
      const list = held.map((s) => (weight > 0 ? { ...s, y: smoothed(s.y), raw: s.y } : s));
      const styles = styleSeries(list);
      c.tipSeries = list.map((s, i) => ({ env: s.env, label: styles[i].label, color: styles[i].color, x: s.x, y: s.y }));
      const mode = c.kind === "scatter" ? "markers" : "lines";
      if (list.length >= PACK_MIN) { // a sweep: one trace per (colour, dash), the run named per point
        traces = packSeries(list.map((s, i) => ({ ...s, ...styles[i] }))).map((g) => ({
          type: "scatter", x: g.x, y: g.y, name: "", mode, connectgaps: false, meta: { envs: g.envs },
          line: { width: 1.2, color: g.color, dash: g.dash }, marker: { size: 3, color: g.color }, hoverinfo: "none",
        }));
      } else {
        traces = list.map((s, i) => ({
          type: "scatter", x: s.x, y: s.y, name: plotlyText(styles[i].label), legendgroup: s.env, meta: { env: s.env }, mode,
          connectgaps: false, line: { width: 1.5, color: styles[i].color, dash: styles[i].dash },
          marker: { size: 4, color: styles[i].color }, hoverinfo: "none",
        }));
        // Smoothed: each run's raw line faded underneath its smoothed one, as on Scalars.
        if (weight > 0) {
          traces.unshift(...list.map((s, i) => ({ type: "scatter", x: s.x, y: s.raw, name: "", legendgroup: s.env, mode,
            showlegend: false, connectgaps: false, opacity: 0.25, hoverinfo: "skip", meta: { env: s.env, role: "raw" },
            line: { width: 1, color: styles[i].color, dash: styles[i].dash } })));
        }
      }
      count = list.length;
      c.card.dataset.series = String(count);
      const total = list.reduce((n, s) => n + (Number(s.total) || 0), 0);
      const runs = new Set(list.map((s) => s.env)).size;
      c.card.querySelector(".card-info").textContent = `${total.toLocaleString()} pts · ${counted(runs, "run")}`;
    }
    c.card.dataset.grouped = c.group ? "1" : "";
    c.card.dataset.points = String(traces.filter((t) => t.meta?.role !== "raw").reduce((n, t) => n + t.x.filter((v) => v !== null && !Number.isNaN(v)).length, 0));
    // Groups are named by the legend above the charts (seed_groups.js groupLegend), not once more in each chart.
    const layout = { autosize: true, margin: { l: 44, r: 10, t: 8, b: 32 }, showlegend: !c.group && count <= LEGEND_MAX,
      hovermode: c.group ? (count > LEGEND_MAX ? "closest" : "x unified") : false, // run charts: run_hover.js's sorted, capped tooltip
      uirevision: "keep", font: { size: 11 },
      // Outside the plot area: right of a wide chart with short names, else under it (chart_prefs.js).
      legend: legendPlacement(c.plot.clientWidth || 600, traces.filter((t) => t.showlegend !== false).map((t) => t.name)),
      yaxis: { type: c.opts && c.opts.ytype === "log" ? "log" : "-" } };
    const config = { responsive: true, displaylogo: false };
    if (c.first) await Plotly.newPlot(c.plot, traces, layout, config);
    else await Plotly.react(c.plot, traces, layout, config);
    c.first = false;
    markDense(c.plot, c.group ? 0 : count);
    rehighlight(c.plot);
  }

  /** Read what a chart lacks (everything, or the new points of its changed runs) and draw it. */
  function load(c) {
    if (c.group) return draw(c);
    if (c.busy) return c.busy.then(() => (c.loaded && !c.pending.size ? null : load(c)));
    c.busy = reads(async () => {
      const width = c.plot.clientWidth || 600;
      if (!c.loaded) {
        c.pending.clear();
        const res = await readChart(c.envs, { title: c.title, win: c.win, width });
        c.held = new Map(res.series.map((s) => [seriesKey(s), s]));
        c.loaded = true;
      } else if (c.pending.size) {
        const want = [...c.pending];
        c.pending.clear();
        const res = await readChart(want, { title: c.title, win: c.win, width, after: lastX(c.held, want) });
        mergeSeries(c.held, res.series);
      }
    }).then(() => draw(c)).finally(() => { c.busy = null; });
    return c.busy;
  }

  async function index() {
    needIndex = false;
    let idx;
    try {
      idx = await listCharts(envs, "win");
    } catch (err) {
      if (err.status !== 404) throw err;
      // A named run is gone (deleted, renamed, a stale link): compare the others and say which are missing,
      // once, instead of refusing the whole page on every change.
      const known = new Set(((await api.listEnvs()).envs || []).map((e) => String(e.name)));
      const gone = envs.filter((e) => !known.has(e));
      envs = envs.filter((e) => known.has(e));
      for (const e of gone) envSet.delete(e);
      if (!envs.length) throw err;
      missing.push(...gone);
      idx = await listCharts(envs, "win");
    }
    for (const [env, n] of Object.entries(idx.panes || {})) paneCounts.set(env, n);
    const wanted = new Map(idx.charts.map((c) => [chartKey(c), c]));
    for (const key of [...charts.keys()]) if (!wanted.has(key)) drop(key);
    for (const [key, spec] of wanted) {
      let c = charts.get(key);
      if (!c) {
        c = { ...spec, held: new Map(), pending: new Set(), loaded: false, visible: false };
        card(c);
        charts.set(key, c);
        vis.observe(c);
      } else {
        const had = new Set(c.envs);
        for (const e of spec.envs) if (!had.has(e)) c.pending.add(e);
        c.envs = spec.envs;
      }
    }
    showEmpty();
  }

  async function update() {
    const want = gs.on ? "groups" : "runs";
    if (want !== mode) {
      for (const key of [...charts.keys()]) drop(key);
      mode = want;
      needIndex = true;
    }
    if (gs.on) {
      offerBox.replaceChildren();
      groupRes = await fetchGroups(gs, envs, points);
      for (const s of groupRes.series) {
        let c = charts.get(s.title);
        if (!c) {
          c = { title: s.title, win: null, kind: "line", visible: true };
          card(c);
          charts.set(s.title, c);
        }
        c.group = s;
      }
      groupBox.replaceChildren(...(groupRes.groups.length ? [groupLegend(groupRes)] : []));
      abBox.replaceChildren(...(groupRes.tests.length ? [abTable(groupRes, gs)] : []));
      for (const c of charts.values()) await draw(c);
      showEmpty();
      return;
    }
    abBox.replaceChildren();
    groupBox.replaceChildren();
    if (!gs.offered) groupOffer(gs, envs).then((box) => box && offerBox.replaceChildren(box), () => {});
    if (needIndex) await index();
    const changed = new Set(dirty);
    dirty.clear();
    const work = [];
    for (const c of charts.values()) {
      for (const e of c.envs) if (changed.has(e)) c.pending.add(e);
      if ((!c.loaded || c.pending.size) && (c.visible || vis.measure(c))) work.push(load(c));
    }
    await Promise.all(work);
  }

  let failed = false;
  const missing = []; // named runs the server does not have
  let running = null;
  let again = false;
  function run() { // one update at a time; a change meanwhile runs one more after it
    if (running) {
      again = true;
      return running;
    }
    running = update().then(() => {
      if (missing.length) notice(`not found, left out: ${missing.join(", ")}`, "warn");
      else if (failed) notice("");
      failed = false;
    }, (err) => {
      failed = true; // shown once, not retried on a timer: the next change tries again, and a success clears it
      notice(`cannot load: ${err.message}`, "error");
    }).finally(() => {
      running = null;
      if (again) {
        again = false;
        run();
      }
    });
    return running;
  }
  const refresh = throttled(run, REFRESH_MS);

  async function drawConfig() {
    const some = envs.slice(0, CONFIG_MAX);
    const metas = await Promise.all(some.map((e) => api.getJson(`${api.envPath(e)}/meta`).then((r) => r.meta.config || null,
      () => null)));
    if (!metas.some(Boolean)) {
      configBox.replaceChildren();
      return;
    }
    const rows = configDiff(metas);
    configBox.replaceChildren(h("table", { class: "config" },
      h("tr", null, h("th", { text: "config" }), some.map((e) => h("th", { text: e }))),
      rows.map((r) => h("tr", { class: r.differs ? "differs" : null, dataset: { key: r.key } },
        h("th", { text: r.key }), r.vals.map((v) => h("td", { text: v }))))));
  }

  // Run colours differ per theme (each capped to read on its background): chips, swatches and lines follow a switch.
  document.addEventListener("paneboard:theme", () => {
    for (const chip of legend.querySelectorAll(".legend-env")) chip.firstChild.style.background = runColor(chip.dataset.env);
    drawList(sel);
    redrawAll();
  });
  drawConfig();
  redrawAll(); // the images section reads its runs
  const refreshImages = throttled(() => images.refresh().then(showEmpty, () => {}), 1000);
  // One subscription to the env list follows every compared run (a socket per run would not scale to a sweep).
  connect(null, async () => {
    needIndex = true;
    for (const c of charts.values()) c.loaded = false; // a reconnect may have missed points
    await run();
  }, (m) => {
    if (m.type === "env" && m.env && envSet.has(m.env.name)) {
      dirty.add(m.env.name);
      refreshImages();
      if (paneCounts.get(m.env.name) !== m.env.panes) needIndex = true;
      refresh();
    } else if (m.type === "run_color" && envSet.has(m.env)) { // kept on the server, maybe by another browser
      heardRunColor(m.env, m.color);
      drawList(sel);
      redrawAll();
    } else if (m.type === "env_deleted" && envSet.has(m.env)) {
      envSet.delete(m.env);
      envs = envs.filter((e) => e !== m.env);
      needIndex = true;
      refresh();
    }
  });
}
