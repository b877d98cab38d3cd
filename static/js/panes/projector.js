// panes/projector.js — TensorBoard-style embedding projector: PCA / t-SNE / UMAP computed by the server (WIRE.md §3),
// colour / label / search by a metadata column, click → k nearest neighbours, sprite thumbnail of the hovered point.
import { getJson } from "../api.js";
import { h, fmtInt } from "../dom.js";
import { loadPlotly } from "../plotly_loader.js";

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

function select(cls, label, options, onchange) {
  const s = h("select", { class: cls, "aria-label": label, title: label, onchange });
  for (const [value, text] of options) s.append(h("option", { value, text }));
  return s;
}

export function render(el, pane, ctx) {
  const base = `api/v1/envs/${enc(ctx.env)}/panes/${ctx.win.split("/").map(enc).join("/")}`;
  const st = { method: "pca", dims: 2, comps: [0, 1, 2], sphereize: false, colorBy: "", labelBy: "", search: "",
    searchCol: "", regex: false, k: 10, metric: "cosine", selected: null, neighbors: [], hovered: null };
  let data = pane.data || {};
  let meta = null;          // {header, rows}
  let proj = null;          // the projection response
  let posOf = new Int32Array(0); // original index -> position in proj (-1: not in the sample)
  let gen = 0;              // the latest projection request; older answers are dropped
  let destroyed = false;
  let sprite = null;

  // ------------------------------------------------------------------------------------------ controls
  const method = select("pj-method", "projection method", [["pca", "PCA"], ["tsne", "t-SNE"], ["umap", "UMAP"]],
    () => { st.method = method.value; project(); });
  const dims = select("pj-dims", "dimensions", [["2", "2D"], ["3", "3D"]], () => { st.dims = Number(dims.value); project(); });
  const compSel = [0, 1, 2].map((j) => select(`pj-comp pj-comp-${"xyz"[j]}`, `PCA component on ${"XYZ"[j]}`, [],
    () => { st.comps[j] = Number(compSel[j].value); project(); }));
  const sphere = h("input", { type: "checkbox", class: "pj-sphereize", onchange: () => { st.sphereize = sphere.checked; project(); } });
  const pcaBox = h("span", { class: "pj-pca" }, "X", compSel[0], "Y", compSel[1], h("span", { class: "pj-z" }, "Z", compSel[2]),
    h("label", { title: "center and scale every point to unit norm" }, sphere, "sphereize"));
  const colorSel = select("pj-color", "colour by", [], () => { st.colorBy = colorSel.value; draw(); });
  const labelSel = select("pj-label", "label by", [], () => { st.labelBy = labelSel.value; draw(); });
  const searchCol = select("pj-search-col", "search column", [], () => { st.searchCol = searchCol.value; draw(); });
  const searchIn = h("input", { type: "search", class: "pj-search", placeholder: "search", "aria-label": "search points",
    oninput: () => { st.search = searchIn.value; draw(); } });
  const regex = h("input", { type: "checkbox", class: "pj-regex", onchange: () => { st.regex = regex.checked; draw(); } });
  const kIn = h("input", { type: "number", class: "pj-k", min: "1", max: "100", value: "10", "aria-label": "neighbours",
    title: "neighbours", onchange: () => { st.k = Math.max(1, Math.min(100, Number(kIn.value) || 10)); pick(st.selected); } });
  const metricSel = select("pj-metric", "distance", [["cosine", "cosine"], ["euclidean", "euclidean"]],
    () => { st.metric = metricSel.value; pick(st.selected); });
  const status = h("div", { class: "pj-status" });
  const legend = h("div", { class: "pj-legend" });
  const plot = h("div", { class: "pj-plot" });
  const canvas = h("canvas", { class: "pj-thumb", width: String(THUMB), height: String(THUMB) });
  const hoverInfo = h("div", { class: "pj-hover" });
  const nnList = h("ol", { class: "pj-neighbors" });
  const side = h("div", { class: "pj-side" }, canvas, hoverInfo, h("div", { class: "pj-nn-head" }, "k", kIn, metricSel), nnList);
  const row = "display:flex;flex-wrap:wrap;gap:4px 8px;align-items:center;font-size:12px;padding:3px 6px";
  const root = h("div", { class: "projector-pane" },
    h("div", { class: "pj-bar", style: row }, method, dims, pcaBox),
    h("div", { class: "pj-bar", style: row }, "colour", colorSel, "label", labelSel, searchIn, "in", searchCol,
      h("label", {}, regex, "regex")),
    status, h("div", { style: "display:flex;gap:6px;min-height:0;flex:1" }, plot, side), legend);
  root.style.cssText = "display:flex;flex-direction:column;height:100%;min-height:380px";
  plot.style.cssText = "flex:1;min-width:0;min-height:300px";
  side.style.cssText = "width:150px;font-size:11px;overflow:auto;padding:2px 4px";
  canvas.style.cssText = "display:none;image-rendering:pixelated;border:1px solid #ddd;max-width:100%";
  status.style.cssText = "font-size:11px;color:#57606a;padding:0 6px";
  legend.style.cssText = "font-size:11px;padding:0 6px 4px;max-height:60px;overflow:auto";
  nnList.style.cssText = "padding-left:18px;margin:4px 0;cursor:pointer";
  el.appendChild(root);

  function setState(s, text) {
    root.dataset.state = s;
    status.textContent = text;
  }

  /** Column selects from the metadata header; keeps the choices that still exist. */
  function setColumns() {
    const cols = Array.isArray(data.columns) ? data.columns : [];
    for (const [sel, none, key] of [[colorSel, "none", "colorBy"], [labelSel, "index", "labelBy"], [searchCol, "", "searchCol"]]) {
      sel.replaceChildren(...(none ? [h("option", { value: "", text: none })] : []), ...cols.map((c) => h("option", { value: c, text: c })));
      if (!none && !cols.includes(st[key])) st[key] = cols[0] || "";
      if (none && !cols.includes(st[key])) st[key] = "";
      sel.value = st[key];
    }
    if (!st.labelBy && cols.length) { st.labelBy = cols[0]; labelSel.value = cols[0]; }
  }

  function setComponents() {
    const k = Number(data.components) || 0;
    const v = (proj && proj.method === "pca" && proj.variance) || [];
    compSel.forEach((sel, j) => {
      sel.replaceChildren(...Array.from({ length: k }, (_, i) => h("option", { value: String(i),
        text: `${i + 1}${v[i] != null ? ` (${pct(v[i])})` : ""}` })));
      if (st.comps[j] >= k) st.comps[j] = Math.min(j, Math.max(k - 1, 0));
      sel.value = String(st.comps[j]);
    });
    pcaBox.hidden = st.method !== "pca";
    pcaBox.querySelector(".pj-z").hidden = st.dims !== 3;
  }

  const column = (name) => {
    const at = meta && name ? meta.header.indexOf(name) : -1;
    return at < 0 ? null : (i) => meta.rows[i][at];
  };

  // ------------------------------------------------------------------------------------------ projection
  async function project() {
    const my = ++gen;
    setComponents();
    const q = new URLSearchParams({ method: st.method, dims: String(st.dims), wait: "5" });
    if (st.method === "pca") {
      q.set("components", st.comps.slice(0, st.dims).join(","));
      if (st.sphereize) q.set("sphereize", "1");
    }
    const t0 = performance.now();
    setState("computing", `computing ${NAMES[st.method]}…`);
    for (;;) {
      let res;
      try {
        res = await getJson(`${base}/projection?${q}`);
      } catch (err) {
        if (my === gen && !destroyed) setState("error", `${NAMES[st.method]}: ${err.message || err}`);
        return;
      }
      if (my !== gen || destroyed) return;
      if (res.status !== "computing") { proj = res; break; }
      const secs = Math.round((performance.now() - t0) / 1000);
      setState("computing", `computing ${NAMES[st.method]} on ${fmtInt(res.used)} of ${fmtInt(res.n)} points… ${secs} s`);
    }
    posOf = new Int32Array(proj.n).fill(-1);
    proj.indices.forEach((orig, j) => { posOf[orig] = j; });
    setComponents();
    await draw();
  }

  function summary() {
    const p = proj;
    let s = `${NAMES[p.method]} on ${fmtInt(p.used)} of ${fmtInt(p.n)} points${p.sampled ? " (sampled)" : ""}`;
    if (p.method === "pca") {
      const v = p.components.map((c, j) => `${"XYZ"[j]} ${pct(p.variance[c])}`).join(" · ");
      const total = p.components.reduce((a, c) => a + p.variance[c], 0);
      s += ` · variance ${v} (${pct(total)})${p.fit_points < p.n ? `, fitted on ${fmtInt(p.fit_points)}` : ""}`;
    } else if (p.method === "tsne") s += ` · perplexity ${p.perplexity}, ${p.iterations} iterations`;
    else s += ` · ${p.neighbors} neighbours, min_dist ${p.min_dist}`;
    return s;
  }

  /** Points matching the search box among the shown ones (positions in proj), or null without a search. */
  function matches() {
    const get = column(st.searchCol);
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
    proj.indices.forEach((orig, j) => { if (test(get ? get(orig) : String(orig))) out.push(j); });
    return out;
  }

  function overlay(name, positions, marker, withText) {
    const type = st.dims === 3 ? "scatter3d" : proj.indices.length > GL_POINTS && hasWebGL() ? "scattergl" : "scatter";
    const t = { type, mode: withText ? "markers+text" : "markers", name,
      x: [], y: [], customdata: [], text: [], marker, hovertemplate: "%{text}<extra></extra>", textposition: "top center" };
    if (st.dims === 3) t.z = [];
    const label = column(st.labelBy);
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

  async function draw() {
    if (!proj || destroyed) return;
    const Plotly = await loadPlotly();
    if (destroyed || !proj) return;
    const p = proj;
    const three = st.dims === 3;
    if (three && !hasWebGL()) {
      Plotly.purge(plot);
      setState("error", "3D needs WebGL, which this browser does not offer: use 2D");
      return;
    }
    const main = overlay("points", proj.indices.map((_, j) => j), { size: three ? 2.5 : 5, opacity: 0.85 }, false);
    const get = column(st.colorBy);
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
    const found = matches();
    const traces = [main];
    if (found) traces.push(overlay("matches", found, { size: three ? 5 : 10, color: "rgba(0,0,0,0)",
      line: { color: "#e91e63", width: 2 }, symbol: "circle-open" }, found.length <= MAX_LABELS));
    const nn = st.neighbors.map((n) => posOf[n.i]).filter((j) => j >= 0);
    if (st.selected != null) {
      // black and red with white rims: apart from any palette colour the points may have
      traces.push(overlay("neighbours", nn, { size: three ? 5 : 9, color: "#111", line: { color: "#fff", width: 1 } }, true));
      if (posOf[st.selected] >= 0) traces.push(overlay("selected", [posOf[st.selected]],
        { size: three ? 7 : 14, color: "#d62728", line: { color: "#fff", width: 2 } }, true));
    }
    const axis = { zeroline: false, showticklabels: false, title: "" };
    const layout = { autosize: true, showlegend: false, hovermode: "closest", margin: { l: 4, r: 4, t: 4, b: 4 },
      paper_bgcolor: "#fff", uirevision: `${p.method}-${st.dims}-${st.comps.join()}`, xaxis: axis, yaxis: axis };
    if (three) layout.scene = { xaxis: axis, yaxis: axis, zaxis: axis, uirevision: layout.uirevision };
    await Plotly.react(plot, traces, layout, CONFIG);
    if (destroyed) return;
    root.dataset.method = p.method;
    root.dataset.used = String(p.used);
    root.dataset.matches = found ? String(found.length) : "";
    setState("ready", summary() + (found ? ` · ${fmtInt(found.length)} match${found.length === 1 ? "" : "es"}` : ""));
    ctx.setInfo(`${fmtInt(data.n)} × ${fmtInt(data.d)}`, `step ${data.step}`);
    if (!plot.dataset.wired) {
      plot.dataset.wired = "1";
      plot.on("plotly_hover", (ev) => hover(ev.points && ev.points[0] && ev.points[0].customdata));
      plot.on("plotly_click", (ev) => pick(ev.points && ev.points[0] ? ev.points[0].customdata : null));
    }
  }

  // ------------------------------------------------------------------------------------------ hover, thumbnail, neighbours
  function describe(i) {
    if (!meta) return `#${i}`;
    return `#${i} ` + meta.header.map((c, j) => `${c}: ${meta.rows[i][j]}`).join(", ");
  }

  function hover(i) {
    if (i == null || i === st.hovered) return;
    st.hovered = i;
    hoverInfo.textContent = describe(i);
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

  async function pick(i) {
    st.selected = i;
    st.neighbors = [];
    nnList.replaceChildren();
    root.dataset.selected = i == null ? "" : String(i);
    if (i == null) return draw();
    try {
      const res = await getJson(`${base}/neighbors?i=${i}&k=${st.k}&metric=${st.metric}`);
      if (st.selected !== i || destroyed) return;
      st.neighbors = res.neighbors;
    } catch (err) {
      nnList.replaceChildren(h("li", { text: `neighbours: ${err.message || err}` }));
      return;
    }
    const label = column(st.labelBy);
    nnList.replaceChildren(...st.neighbors.map((n) => h("li", { dataset: { i: String(n.i) },
      title: posOf[n.i] >= 0 ? describe(n.i) : `${describe(n.i)} (not in the shown sample)`,
      onclick: () => pick(n.i) }, `#${n.i}${label ? ` ${label(n.i)}` : ""} `, h("small", { text: n.distance.toFixed(3) }))));
    await draw();
  }

  // ------------------------------------------------------------------------------------------ data
  async function load(p) {
    data = p.data || {};
    setColumns();
    meta = null;
    if (data.has_metadata) {
      try {
        meta = await getJson(`${base}/metadata`);
      } catch (err) {
        status.textContent = `metadata: ${err.message || err}`;
      }
    }
    sprite = null;
    canvas.style.display = "none";
    if (data.sprite) {
      sprite = new Image();
      sprite.src = ctx.url(data.sprite);
    }
    if (st.selected != null && st.selected >= data.n) st.selected = null;
    await project();
  }

  return {
    ready: load(pane),
    update: load,
    extend: () => ctx.refetch(),
    destroy() {
      destroyed = true;
      gen++;
      if (window.Plotly) window.Plotly.purge(plot);
      root.remove();
    },
  };
}
