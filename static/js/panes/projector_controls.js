// panes/projector_controls.js — the projector pane's controls and layout: method, PCA components, colour/label/search
// columns, neighbour settings; the select options follow the data and the projection.
import { h } from "../dom.js";

const THUMB = 72; // px of the hover thumbnail's longer side
const pct = (v) => `${(100 * v).toFixed(1)}%`;

function select(cls, label, options, onchange) {
  const s = h("select", { class: cls, "aria-label": label, title: label, onchange });
  for (const [value, text] of options) s.append(h("option", { value, text }));
  return s;
}

/**
 * Build the pane's elements into pj.el (and append its root to `el`). Changing a control updates pj.st and calls
 * project() (a new projection), draw() (same projection, new look) or pick(i) (new neighbours).
 */
export function buildControls(pj, el, { project, draw, pick }) {
  const { st } = pj;
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
  pj.el = { root, status, legend, plot, canvas, hoverInfo, nnList, searchIn, colorSel, labelSel, searchCol, compSel, pcaBox };
}

/** Column selects from the metadata header; keeps the choices that still exist. */
export function setColumns(pj) {
  const { st } = pj;
  const { colorSel, labelSel, searchCol } = pj.el;
  const cols = Array.isArray(pj.data.columns) ? pj.data.columns : [];
  for (const [sel, none, key] of [[colorSel, "none", "colorBy"], [labelSel, "index", "labelBy"], [searchCol, "", "searchCol"]]) {
    sel.replaceChildren(...(none ? [h("option", { value: "", text: none })] : []), ...cols.map((c) => h("option", { value: c, text: c })));
    if (!none && !cols.includes(st[key])) st[key] = cols[0] || "";
    if (none && !cols.includes(st[key])) st[key] = "";
    sel.value = st[key];
  }
  if (!st.labelBy && cols.length) { st.labelBy = cols[0]; labelSel.value = cols[0]; }
}

/** PCA component selects (with explained variance once known); shown only for PCA, Z only in 3D. */
export function setComponents(pj) {
  const { st, proj } = pj;
  const k = Number(pj.data.components) || 0;
  const v = (proj && proj.method === "pca" && proj.variance) || [];
  pj.el.compSel.forEach((sel, j) => {
    sel.replaceChildren(...Array.from({ length: k }, (_, i) => h("option", { value: String(i),
      text: `${i + 1}${v[i] != null ? ` (${pct(v[i])})` : ""}` })));
    if (st.comps[j] >= k) st.comps[j] = Math.min(j, Math.max(k - 1, 0));
    sel.value = String(st.comps[j]);
  });
  pj.el.pcaBox.hidden = st.method !== "pca";
  pj.el.pcaBox.querySelector(".pj-z").hidden = st.dims !== 3;
}
