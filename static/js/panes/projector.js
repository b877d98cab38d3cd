// panes/projector.js — TensorBoard-style embedding projector: PCA / t-SNE / UMAP computed by the server (WIRE.md §3),
// colour / label / search by a metadata column, click → k nearest neighbours, sprite thumbnail of the hovered point.
import { getJson } from "../api.js";
import { counted, fmtInt, h } from "../dom.js";
import { loadPlotly } from "../plotly_loader.js";
import { buildControls, setColumns, setComponents } from "./projector_controls.js";

const CONFIG = { responsive: true, displaylogo: false };
const MAX_CATEGORIES = 50; // TensorBoard's NUM_COLORS_COLOR_MAP: more unique values than this get a gradient (or none)
const MAX_LABELS = 30;     // search matches get text labels only when this few (neighbours always do)
const THUMB = 72;          // px of the hover thumbnail's longer side
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
  "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"];
const NAMES = { pca: "PCA", tsne: "t-SNE", umap: "UMAP" };
const GL_POINTS = 2000;    // more points than this are drawn with WebGL (scattergl); fewer as SVG, which needs no GPU

let webgl = null;
/** Whether this browser can draw WebGL (scattergl, scatter3d); headless or GPU-less browsers often cannot. */
function hasWebGL() {
  if (webgl === null) {
    try {
      const c = document.createElement("canvas");
      webgl = !!(c.getContext("webgl") || c.getContext("experimental-webgl"));
    } catch {
      webgl = false;
    }
  }
  return webgl;
}

const enc = encodeURIComponent;
const pct = (v) => `${(100 * v).toFixed(1)}%`;

/** Category i's colour: the 20-colour palette, then golden-angle hues (up to 50 categories stay distinct). */
const categoryColor = (i) => (i < PALETTE.length ? PALETTE[i] : `hsl(${(i * 137.508) % 360}, 65%, 45%)`);

/** How a column colours points: {kind: "category", colorOf(v), legend} | {kind: "numeric", min, max} | {kind: "none"}. */
export function colouring(values) {
  const uniq = [...new Set(values)];
  if (uniq.length <= MAX_CATEGORIES) {
    uniq.sort((a, b) => (isNum(a) && isNum(b) ? a - b : String(a).localeCompare(String(b))));
    const at = new Map(uniq.map((v, i) => [v, i]));
    return { kind: "category", colorOf: (v) => categoryColor(at.get(v)), legend: uniq.map((v, i) => [v, categoryColor(i)]) };
  }
  if (values.every(isNum)) {
    let min = Infinity;
    let max = -Infinity;
    for (const v of values) { const x = Number(v); if (x < min) min = x; if (x > max) max = x; }
    return { kind: "numeric", min, max };
  }
  return { kind: "none", unique: uniq.length };
}

function isNum(v) {
  return v !== "" && Number.isFinite(Number(v));
}


export function render(el, pane, ctx) {
  const pj = {
    ctx,
    base: `api/v1/envs/${enc(ctx.env)}/panes/${ctx.win.split("/").map(enc).join("/")}`,
    st: { method: "pca", dims: 2, comps: [0, 1, 2], sphereize: false, colorBy: "", labelBy: "", search: "",
      searchCol: "", regex: false, k: 10, metric: "cosine", selected: null, neighbors: [], hovered: null },
    data: pane.data || {},
    meta: null,              // {header, rows}
    proj: null,              // the projection response
    posOf: new Int32Array(0), // original index -> position in proj (-1: not in the sample)
    gen: 0,                  // the latest projection request; older answers are dropped
    destroyed: false,
    sprite: null,
  };
  buildControls(pj, el, { project: () => project(pj), draw: () => draw(pj), pick: (i) => pick(pj, i) });
  return {
    ready: load(pj, pane),
    update: (p) => load(pj, p),
    extend: () => ctx.refetch(),
    destroy() {
      pj.destroyed = true;
      pj.gen++;
      if (window.Plotly) window.Plotly.purge(pj.el.plot);
      pj.el.root.remove();
    },
  };
}

function setState(pj, s, text) {
  pj.el.root.dataset.state = s;
  pj.el.status.textContent = text;
}

/** Reads column `name` of the metadata by original point index, or null without metadata or column. */
const column = (pj, name) => {
  const { meta } = pj;
  const at = meta && name ? meta.header.indexOf(name) : -1;
  return at < 0 ? null : (i) => meta.rows[i][at];
};

// ------------------------------------------------------------------------------------------ data
async function load(pj, p) {
  const { st, el } = pj;
  pj.data = p.data || {};
  setColumns(pj);
  pj.meta = null;
  if (pj.data.has_metadata) {
    try {
      pj.meta = await getJson(`${pj.base}/metadata`);
    } catch (err) {
      el.status.textContent = `metadata: ${err.message || err}`;
    }
  }
  pj.sprite = null;
  el.canvas.style.display = "none";
  if (pj.data.sprite) {
    pj.sprite = new Image();
    pj.sprite.src = pj.ctx.url(pj.data.sprite);
  }
  if (st.selected != null && st.selected >= pj.data.n) st.selected = null;
  await project(pj);
}

// ------------------------------------------------------------------------------------------ projection
/** Ask the server for the projection, polling while it computes; a newer request makes this one drop out. */
async function project(pj) {
  const { st } = pj;
  const my = ++pj.gen;
  setComponents(pj);
  // t-SNE answers every ~0.4 s with its embedding so far (drawn as it forms); the others hold until done.
  const q = new URLSearchParams({ method: st.method, dims: String(st.dims), wait: st.method === "tsne" ? "0.4" : "5" });
  if (st.method === "pca") {
    q.set("components", st.comps.slice(0, st.dims).join(","));
    if (st.sphereize) q.set("sphereize", "1");
  }
  const t0 = performance.now();
  setState(pj, "computing", `computing ${NAMES[st.method]}…`);
  for (;;) {
    let res;
    try {
      res = await getJson(`${pj.base}/projection?${q}`);
    } catch (err) {
      if (my === pj.gen && !pj.destroyed) setState(pj, "error", `${NAMES[st.method]}: ${err.message || err}`);
      return;
    }
    if (my !== pj.gen || pj.destroyed) return;
    if (res.status !== "computing") { pj.proj = res; break; }
    const secs = Math.round((performance.now() - t0) / 1000);
    const step = res.coords ? `, iteration ${fmtInt(res.iteration)} of ${fmtInt(res.of)}` : "";
    setState(pj, "computing", `computing ${NAMES[st.method]} on ${fmtInt(res.used)} of ${counted(res.n, "point")}${step}… ${secs} s`);
    if (res.coords && res.indices) await show(pj, res); // a partial embedding: shown while the rest is computed
  }
  await show(pj, pj.proj);
}

/** Draw projection `res` (final, or a t-SNE's partial embedding). */
async function show(pj, res) {
  pj.proj = res;
  pj.posOf = new Int32Array(res.n).fill(-1);
  res.indices.forEach((orig, j) => { pj.posOf[orig] = j; });
  setComponents(pj);
  await draw(pj);
}

function summary(p) {
  let s = `${NAMES[p.method]} on ${fmtInt(p.used)} of ${counted(p.n, "point")}${p.sampled ? " (sampled)" : ""}`;
  if (p.method === "pca") {
    const v = p.components.map((c, j) => `${"XYZ"[j]} ${pct(p.variance[c])}`).join(" · ");
    const total = p.components.reduce((a, c) => a + p.variance[c], 0);
    s += ` · variance ${v} (${pct(total)})${p.fit_points < p.n ? `, fitted on ${fmtInt(p.fit_points)}` : ""}`;
  } else if (p.method === "tsne") s += ` · perplexity ${p.perplexity}, ${counted(p.iterations, "iteration")}`;
  else s += ` · ${counted(p.neighbors, "neighbour")}, min_dist ${p.min_dist}`;
  return s;
}

/** Points matching the search box among the shown ones (positions in proj), or null without a search. */
function matches(pj) {
  const { st } = pj;
  const { searchIn } = pj.el;
  const get = column(pj, st.searchCol);
  if (!st.search) return null;
  let test;
  if (st.regex) {
    try {
      const re = new RegExp(st.search, "i");
      test = (v) => re.test(v);
    } catch {
      searchIn.setCustomValidity("invalid regular expression");
      return [];
    }
  } else {
    const needle = st.search.toLowerCase();
    test = (v) => String(v).toLowerCase().includes(needle);
  }
  searchIn.setCustomValidity("");
  const out = [];
  pj.proj.indices.forEach((orig, j) => { if (test(get ? get(orig) : String(orig))) out.push(j); });
  return out;
}

/** One Plotly trace of the points at `positions` (2D SVG, 2D WebGL when many, or 3D), labelled by the label column. */
function overlay(pj, name, positions, marker, withText) {
  const { st, proj } = pj;
  const type = st.dims === 3 ? "scatter3d" : proj.indices.length > GL_POINTS && hasWebGL() ? "scattergl" : "scatter";
  const t = { type, mode: withText ? "markers+text" : "markers", name,
    x: [], y: [], customdata: [], text: [], marker, hovertemplate: "%{text}<extra></extra>", textposition: "top center" };
  if (st.dims === 3) t.z = [];
  const label = column(pj, st.labelBy);
  for (const j of positions) {
    t.x.push(proj.coords[0][j]);
    t.y.push(proj.coords[1][j]);
    if (st.dims === 3) t.z.push(proj.coords[2][j]);
    const orig = proj.indices[j];
    t.customdata.push(orig);
    t.text.push(label ? String(label(orig)) : `#${orig}`);
  }
  return t;
}

/** Colour the main trace by the colour column (categories, a gradient, or one colour) and fill the legend. */
function colourPoints(pj, main) {
  const { st, proj } = pj;
  const { legend, root } = pj.el;
  const get = column(pj, st.colorBy);
  legend.replaceChildren();
  if (get) {
    const values = proj.indices.map((orig) => get(orig));
    const c = colouring(values);
    if (c.kind === "category") {
      main.marker.color = values.map(c.colorOf);
      legend.append(...c.legend.map(([v, col]) => h("span", { style: "margin-right:8px;white-space:nowrap" },
        h("span", { style: `color:${col}`, text: "● " }), String(v))));
    } else if (c.kind === "numeric") {
      Object.assign(main.marker, { color: values.map(Number), colorscale: "Viridis", cmin: c.min, cmax: c.max,
        showscale: true, colorbar: { thickness: 10, len: 0.8 } });
    } else legend.textContent = `${st.colorBy}: ${fmtInt(c.unique)} unique values, too many to colour`;
    root.dataset.colouring = c.kind;
  } else {
    main.marker.color = "#4c78a8";
    root.dataset.colouring = "none";
  }
}

/** Every trace to draw: all points, search matches ringed, the picked point and its neighbours on top. */
function tracesOf(pj, found) {
  const { st, proj, posOf } = pj;
  const three = st.dims === 3;
  const main = overlay(pj, "points", proj.indices.map((_, j) => j), { size: three ? 2.5 : 5, opacity: 0.85 }, false);
  colourPoints(pj, main);
  const traces = [main];
  // An open symbol is stroked in marker.color (marker.line.color is ignored): the ring colour goes there.
  if (found) traces.push(overlay(pj, "matches", found, { size: three ? 5 : 10, color: "#e91e63",
    line: { width: 2 }, symbol: "circle-open" }, found.length <= MAX_LABELS));
  const nn = st.neighbors.map((n) => posOf[n.i]).filter((j) => j >= 0);
  if (st.selected != null) {
    // black and red with white rims: apart from any palette colour the points may have
    traces.push(overlay(pj, "neighbours", nn, { size: three ? 5 : 9, color: "#111", line: { color: "#fff", width: 1 } }, true));
    if (posOf[st.selected] >= 0) traces.push(overlay(pj, "selected", [posOf[st.selected]],
      { size: three ? 7 : 14, color: "#d62728", line: { color: "#fff", width: 2 } }, true));
  }
  return traces;
}

async function draw(pj) {
  if (!pj.proj || pj.destroyed) return;
  const Plotly = await loadPlotly();
  if (pj.destroyed || !pj.proj) return;
  const { st, data } = pj;
  const { plot, root } = pj.el;
  const p = pj.proj;
  const three = st.dims === 3;
  if (three && !hasWebGL()) {
    Plotly.purge(plot);
    setState(pj, "error", "3D needs WebGL, which this browser does not offer: use 2D");
    return;
  }
  const found = matches(pj);
  const traces = tracesOf(pj, found);
  const axis = { zeroline: false, showticklabels: false, title: "" };
  const layout = { autosize: true, showlegend: false, hovermode: "closest", margin: { l: 4, r: 4, t: 4, b: 4 },
    uirevision: `${p.method}-${st.dims}-${st.comps.join()}`, xaxis: axis, yaxis: axis };
  if (three) layout.scene = { xaxis: axis, yaxis: axis, zaxis: axis, uirevision: layout.uirevision };
  await Plotly.react(plot, traces, layout, CONFIG);
  if (pj.destroyed) return;
  root.dataset.method = p.method;
  root.dataset.used = String(p.used);
  root.dataset.matches = found ? String(found.length) : "";
  const partial = p.status === "computing"; // a t-SNE still forming: the state stays "computing"
  root.dataset.iteration = partial ? String(p.iteration) : "";
  if (partial) setState(pj, "computing", `${NAMES[p.method]} on ${counted(p.used, "point")}: iteration ${fmtInt(p.iteration)} of ${fmtInt(p.of)}…`);
  else setState(pj, "ready", summary(p) + (found ? ` · ${counted(found.length, "match", "matches")}` : ""));
  pj.ctx.setInfo(`${fmtInt(data.n)} × ${fmtInt(data.d)}`, `step ${data.step}`);
  if (!plot.dataset.wired) {
    plot.dataset.wired = "1";
    plot.on("plotly_hover", (ev) => hover(pj, ev.points && ev.points[0] && ev.points[0].customdata));
    plot.on("plotly_click", (ev) => pick(pj, ev.points && ev.points[0] ? ev.points[0].customdata : null));
  }
}

// ------------------------------------------------------------------------------------------ hover, thumbnail, neighbours
function describe(pj, i) {
  const { meta } = pj;
  if (!meta) return `#${i}`;
  return `#${i} ` + meta.header.map((c, j) => `${c}: ${meta.rows[i][j]}`).join(", ");
}

/** Show the hovered point's metadata and its sprite thumbnail (when the pane has a sprite). */
function hover(pj, i) {
  const { st, data, sprite } = pj;
  const { canvas } = pj.el;
  if (i == null || i === st.hovered) return;
  st.hovered = i;
  pj.el.hoverInfo.textContent = describe(pj, i);
  const dim = data.single_image_dim;
  if (!sprite || !sprite.complete || !sprite.naturalWidth || !Array.isArray(dim)) return;
  const [w, hgt] = dim;
  const perRow = Math.ceil(Math.sqrt(data.n)); // torch's sprite grid
  const scale = THUMB / Math.max(w, hgt);
  canvas.width = Math.max(1, Math.round(w * scale));
  canvas.height = Math.max(1, Math.round(hgt * scale));
  const g = canvas.getContext("2d");
  g.imageSmoothingEnabled = false;
  g.clearRect(0, 0, canvas.width, canvas.height);
  g.drawImage(sprite, (i % perRow) * w, Math.floor(i / perRow) * hgt, w, hgt, 0, 0, canvas.width, canvas.height);
  canvas.style.display = "block";
  canvas.dataset.index = String(i);
}

/** Select point i (null: none), list its k nearest neighbours from the server, and redraw with them marked. */
async function pick(pj, i) {
  const { st, el } = pj;
  st.selected = i;
  st.neighbors = [];
  el.nnList.replaceChildren();
  el.root.dataset.selected = i == null ? "" : String(i);
  if (i == null) return draw(pj);
  try {
    const res = await getJson(`${pj.base}/neighbors?i=${i}&k=${st.k}&metric=${st.metric}`);
    if (st.selected !== i || pj.destroyed) return;
    st.neighbors = res.neighbors;
  } catch (err) {
    el.nnList.replaceChildren(h("li", { text: `neighbours: ${err.message || err}` }));
    return;
  }
  const label = column(pj, st.labelBy);
  el.nnList.replaceChildren(...st.neighbors.map((n) => h("li", { dataset: { i: String(n.i) },
    title: pj.posOf[n.i] >= 0 ? describe(pj, n.i) : `${describe(pj, n.i)} (not in the shown sample)`,
    onclick: () => pick(pj, n.i) }, `#${n.i}${label ? ` ${label(n.i)}` : ""} `, h("small", { text: n.distance.toFixed(3) }))));
  await draw(pj);
}
