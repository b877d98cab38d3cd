// panes/model_graph.js — model graphs (TensorBoard's Graphs): a layered DAG, top to bottom, of traced ops grouped
// by module scope. Modules start collapsed to the top level (box = module, with the shapes it outputs); a click
// expands one, its frame's title collapses it again. Edges carry tensor shapes. SVG built with DOM calls (CSP-safe).
import { button, detailsPanel, findNodes, fitView, scopesToOpen } from "./model_graph_tools.js";
import { counted } from "../dom.js";

const NS = "http://www.w3.org/2000/svg";
const LAYER_GAP = 84;
const NODE_GAP = 28;
const NODE_H = 38;
const FRAME_PAD = 10;
const COLORS = { group: "#e8eef7", op: "#ffffff", input: "#e6f4ea", output: "#fdecea", parameter: "#f5f5f5" };

function svg(tag, attrs, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

const lastPart = (scope) => scope.slice(scope.lastIndexOf("/") + 1);

/** The unit a node is drawn as: its deepest collapsed ancestor module ("g:<scope>") or itself ("n:<id>"). */
function unitOf(node, root, expanded) {
  const parts = node.scope ? node.scope.split("/") : [];
  for (let k = 1; k <= parts.length; k += 1) {
    const prefix = parts.slice(0, k).join("/");
    if (prefix === root) continue; // the model itself is always open
    if (!expanded.has(prefix)) return `g:${prefix}`;
  }
  return `n:${node.id}`;
}

/** Units, edges between them (labelled with the shapes that cross), layers by longest path, x by barycenter. */
export function layoutGraph(nodes, root, expanded, showParams) {
  const shown = nodes.filter((n) => showParams || n.op !== "parameter");
  const byId = new Map(shown.map((n) => [n.id, n]));
  const units = new Map(); // key -> {key, kind, scope, label, members, out: Set(shapes), order}
  const unitKey = new Map();
  for (const n of shown) {
    const key = unitOf(n, root, expanded);
    unitKey.set(n.id, key);
    if (!units.has(key)) {
      const group = key.startsWith("g:");
      units.set(key, { key, group, scope: group ? key.slice(2) : n.scope, node: group ? null : n,
        label: group ? lastPart(key.slice(2)) : String(n.label || n.op), members: 0, out: new Set(), order: units.size });
    }
    units.get(key).members += 1;
  }
  const edges = new Map(); // "a\tb" -> {from, to, shapes: Set}
  for (const n of shown) {
    const to = unitKey.get(n.id);
    for (const src of n.inputs || []) {
      const s = byId.get(src);
      if (!s) continue;
      const from = unitKey.get(src);
      if (from === to) continue;
      const k = `${from}\t${to}`;
      if (!edges.has(k)) edges.set(k, { from, to, shapes: new Set() });
      if (s.shape) edges.get(k).shapes.add(s.shape);
      if (units.get(from).group && s.shape) units.get(from).out.add(s.shape);
    }
  }
  // Longest-path layers (Kahn); a cycle made by collapsing (a → b → a through a module) is broken at the
  // unit with the fewest unplaced inputs, so every unit still gets a layer.
  const list = [...units.values()];
  const preds = new Map(list.map((u) => [u.key, []]));
  const succs = new Map(list.map((u) => [u.key, []]));
  for (const e of edges.values()) { preds.get(e.to).push(e.from); succs.get(e.from).push(e.to); }
  const indeg = new Map(list.map((u) => [u.key, preds.get(u.key).length]));
  const layer = new Map();
  const queue = list.filter((u) => indeg.get(u.key) === 0).map((u) => u.key);
  while (layer.size < list.length) {
    if (!queue.length) {
      let best = null;
      for (const u of list) if (!layer.has(u.key) && (best === null || indeg.get(u.key) < indeg.get(best))) best = u.key;
      indeg.set(best, 0);
      queue.push(best);
    }
    const k = queue.shift();
    if (layer.has(k)) continue;
    let l = 0;
    for (const p of preds.get(k)) if (layer.has(p)) l = Math.max(l, layer.get(p) + 1);
    layer.set(k, l);
    for (const s of succs.get(k)) {
      indeg.set(s, indeg.get(s) - 1);
      if (indeg.get(s) === 0 && !layer.has(s)) queue.push(s);
    }
  }
  // Sources other than the model's inputs (parameters, constants-free ops) sit just above their first consumer,
  // not all in the top row.
  for (const u of list) {
    const outs = succs.get(u.key);
    if (preds.get(u.key).length || !outs.length || (u.node && u.node.op === "input")) continue;
    layer.set(u.key, Math.max(0, Math.min(...outs.map((k) => layer.get(k))) - 1));
  }
  const layers = [];
  for (const u of list) {
    u.layer = layer.get(u.key);
    (layers[u.layer] ||= []).push(u);
    u.w = Math.max(90, 7 * Math.max(u.label.length, ...[...u.out].slice(0, 2).map((s) => s.length), (u.node && u.node.shape ? u.node.shape.length : 0)) + 22);
  }
  // Siblings side by side (scope order), then two barycenter sweeps against the layer above.
  const place = (row) => {
    let x = 0;
    for (const u of row) { u.x = x + u.w / 2; x += u.w + NODE_GAP; }
    const shift = (x - NODE_GAP) / 2;
    for (const u of row) u.x -= shift;
  };
  for (const row of layers) {
    if (!row) continue;
    row.sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : a.order - b.order));
    place(row);
  }
  const byKey = new Map(list.map((u) => [u.key, u]));
  for (let sweep = 0; sweep < 2; sweep += 1) {
    for (const row of layers.slice(1)) {
      if (!row) continue;
      for (const u of row) {
        const ps = preds.get(u.key).map((p) => byKey.get(p)).filter((p) => p.layer < u.layer);
        u.bary = ps.length ? ps.reduce((a, p) => a + p.x, 0) / ps.length : u.x;
      }
      row.sort((a, b) => a.bary - b.bary || a.order - b.order);
      place(row);
      // Keep each unit near its inputs' mean instead of packed around 0, without overlaps.
      for (let i = 0; i < row.length; i += 1) {
        const min = i ? row[i - 1].x + row[i - 1].w / 2 + NODE_GAP + row[i].w / 2 : -Infinity;
        row[i].x = Math.max(min, row[i].bary);
      }
    }
  }
  for (const u of list) u.y = u.layer * LAYER_GAP;
  return { units: list, edges: [...edges.values()], byKey };
}

/** Scopes of every module in the graph (prefixes of node scopes below the root), for expand/collapse-all. */
function moduleScopes(nodes, root) {
  const out = new Set();
  for (const n of nodes) {
    const parts = n.scope ? n.scope.split("/") : [];
    for (let k = 1; k <= parts.length; k += 1) {
      const p = parts.slice(0, k).join("/");
      if (p !== root) out.add(p);
    }
  }
  return out;
}

function graphRoot(nodes, name) {
  const firsts = new Set(nodes.filter((n) => n.scope).map((n) => n.scope.split("/")[0]));
  if (firsts.size === 1) return [...firsts][0];
  return firsts.has(name) ? name : null;
}

/** Frames of expanded modules (deepest last, so they sit on top), titled; the title collapses the module. */
function drawFrames(g, frames, units, box) {
  for (const scope of [...g.expanded].sort((a, b) => a.split("/").length - b.split("/").length)) {
    const inside = units.filter((u) => u.scope === scope || u.scope.startsWith(`${scope}/`));
    if (!inside.length) continue;
    const fx0 = Math.min(...inside.map((u) => u.x - u.w / 2)) - FRAME_PAD;
    const fx1 = Math.max(...inside.map((u) => u.x + u.w / 2)) + FRAME_PAD;
    const fy0 = Math.min(...inside.map((u) => u.y)) - FRAME_PAD - 14;
    const fy1 = Math.max(...inside.map((u) => u.y + NODE_H)) + FRAME_PAD;
    const frame = svg("g", { class: "mg-frame", "data-scope": scope });
    frame.append(svg("rect", { x: fx0, y: fy0, width: fx1 - fx0, height: fy1 - fy0, rx: 8, fill: "rgba(76,120,168,0.05)",
      stroke: "#9fb3cc", "stroke-dasharray": "4 3" }));
    const title = svg("text", { x: fx0 + 8, y: fy0 + 12, "font-size": 11, fill: "#3b5b85", class: "mg-frame-title" },
      `▾ ${lastPart(scope)}`);
    title.style.cursor = "pointer";
    title.addEventListener("click", (ev) => { ev.stopPropagation(); if (!g.dragged) toggle(g, scope, false); });
    frame.append(title);
    frames.append(frame);
    box.x0 = Math.min(box.x0, fx0); box.x1 = Math.max(box.x1, fx1); box.y0 = Math.min(box.y0, fy0); box.y1 = Math.max(box.y1, fy1);
  }
}

/** Edges as curves with arrowheads, labelled with the tensor shapes that cross them. */
function drawEdges(g, edgeLayer, edges, byKey) {
  for (const e of edges) {
    const a = byKey.get(e.from);
    const b = byKey.get(e.to);
    const sx = a.x; const sy = a.y + NODE_H; const tx = b.x; const ty = b.y;
    const bend = Math.max(30, Math.abs(ty - sy) / 2);
    // An edge that skips layers (a residual) bows out to the side, so it is not hidden behind the chain.
    const span = Math.abs(b.layer - a.layer);
    const off = span > 1 ? Math.max(a.w, b.w) / 2 + 24 + 12 * Math.min(span, 8) : 0;
    edgeLayer.append(svg("path", { d: span > 1
      ? `M ${sx} ${sy} C ${sx + off} ${sy + 20}, ${tx + off} ${ty - 20}, ${tx} ${ty}`
      : `M ${sx} ${sy} C ${sx} ${sy + bend}, ${tx} ${ty - bend}, ${tx} ${ty}`, fill: "none",
      stroke: "#8a94a0", "stroke-width": 1.2, "marker-end": `url(#${g.marker.id})`, "data-from": e.from, "data-to": e.to }));
    const shapes = [...e.shapes];
    if (shapes.length) {
      const label = shapes.length > 1 ? `${shapes[0]} +${shapes.length - 1}` : shapes[0];
      // At the curve's middle: a bowed cubic passes 3/4 of its offset out.
      edgeLayer.append(svg("text", { x: (sx + tx) / 2 + 0.75 * off + 4, y: (sy + ty) / 2, "font-size": 9, fill: "#5f6b7a",
        class: "mg-edge-label" }, label));
    }
  }
}

/** One box per unit: a collapsed module (click expands it) or a single op, with its output shapes and a tooltip. */
function drawUnits(g, nodeLayer, units) {
  for (const u of units) {
    const kind = u.group ? "group" : u.node.op;
    const node = svg("g", { class: `mg-node ${u.group ? "mg-group" : "mg-op"}`, "data-unit": u.key, "data-scope": u.scope,
      "data-kind": u.group ? "group" : "op", "data-op": u.group ? null : u.node.op, transform: `translate(${u.x - u.w / 2},${u.y})` });
    node.append(svg("rect", { width: u.w, height: NODE_H, rx: u.group ? 8 : 4, fill: COLORS[kind] || COLORS.op,
      stroke: u.group ? "#4c78a8" : "#9aa3ad", "stroke-width": u.group ? 1.5 : 1 }));
    const sub = u.group ? [...u.out].slice(0, 2).join(", ") + (u.out.size > 2 ? " …" : "") : (u.node.shape || "");
    node.append(svg("text", { x: u.w / 2, y: 15, "text-anchor": "middle", "font-size": 11, "font-weight": u.group ? 600 : 400,
      fill: "#1d2733" }, u.label));
    node.append(svg("text", { x: u.w / 2, y: 30, "text-anchor": "middle", "font-size": 9, fill: "#5f6b7a" }, sub));
    const tip = u.group ? `${u.scope}\n${counted(u.members, "node")} — click to expand${u.out.size ? `\noutputs ${[...u.out].join(", ")}` : ""}`
      : `${u.node.op}${u.scope ? `\n${u.scope}` : ""}${u.node.shape ? `\nshape ${u.node.shape}` : ""}${u.node.attr ? `\n${u.node.attr}` : ""}`;
    node.append(svg("title", {}, tip));
    node.style.cursor = "pointer";
    if (u.group) node.addEventListener("click", (ev) => { ev.stopPropagation(); if (!g.dragged) toggle(g, u.scope, true); });
    else node.addEventListener("click", (ev) => { ev.stopPropagation(); if (!g.dragged) g.details.show(u.node); });
    if (g.matches.has(u.key)) node.classList.add("mg-match");
    nodeLayer.append(node);
  }
}

/** Lay the graph out again with the current expansions and redraw it into g.world. */
function draw(g) {
  const { units, edges, byKey } = layoutGraph(g.nodes, g.top, g.expanded, g.showParams);
  g.world.replaceChildren();
  const frames = svg("g", { class: "mg-frames" });
  const edgeLayer = svg("g", { class: "mg-edges" });
  const nodeLayer = svg("g", { class: "mg-nodes" });
  g.world.append(frames, edgeLayer, nodeLayer);
  const box = { x0: Infinity, x1: -Infinity, y0: Infinity, y1: -Infinity };
  for (const u of units) {
    box.x0 = Math.min(box.x0, u.x - u.w / 2); box.x1 = Math.max(box.x1, u.x + u.w / 2);
    box.y0 = Math.min(box.y0, u.y); box.y1 = Math.max(box.y1, u.y + NODE_H);
  }
  drawFrames(g, frames, units, box);
  drawEdges(g, edgeLayer, edges, byKey);
  drawUnits(g, nodeLayer, units);
  g.bounds = units.length ? { x: box.x0, y: box.y0, w: box.x1 - box.x0, h: box.y1 - box.y0 } : null;
  const ops = g.nodes.filter((n) => n.op !== "parameter" && n.op !== "input" && n.op !== "output").length;
  g.ctx.setInfo(`${counted(ops, "op")} · ${counted(units.filter((u) => u.group).length, "module")} shown`, g.name);
}

function toggle(g, scope, open) {
  if (open) g.expanded.add(scope);
  else for (const s of [...g.expanded]) if (s === scope || s.startsWith(`${scope}/`)) g.expanded.delete(s);
  draw(g);
}

const applyView = (g) => g.world.setAttribute("transform", `translate(${g.view.x},${g.view.y}) scale(${g.view.k})`);

/** The whole graph in view, or its top at a legible zoom when the whole would make labels unreadable. */
function fit(g) {
  const { bounds } = g;
  if (!bounds) return;
  g.moved = false;
  g.view = fitView(bounds, g.box.clientWidth || 600, g.box.clientHeight || 400);
  applyView(g);
}

/** Open the modules around the nodes matching `text`, mark them and bring the first into view. */
function search(g, text, count) {
  const found = findNodes(g.nodes.filter((n) => g.showParams || n.op !== "parameter"), text);
  for (const n of found) for (const sc of scopesToOpen(n.scope, g.top)) g.expanded.add(sc);
  g.matches = new Set(found.map((n) => `n:${n.id}`));
  draw(g);
  count.textContent = text.trim() ? `${found.length} found` : "";
  const first = found.length ? g.world.querySelector(`.mg-node[data-unit="${CSS.escape(`n:${found[0].id}`)}"]`) : null;
  if (!first) {
    if (!text.trim()) fit(g);
    return;
  }
  const m = /translate\(([-\d.e]+),([-\d.e]+)\)/.exec(first.getAttribute("transform"));
  const k = Math.max(g.view.k, 0.9);
  const W = g.box.clientWidth || 600;
  const H = g.box.clientHeight || 400;
  const w = Number(first.querySelector("rect").getAttribute("width"));
  g.view = { k, x: W / 2 - k * (Number(m[1]) + w / 2), y: H / 2 - k * (Number(m[2]) + NODE_H / 2) };
  g.moved = true;
  applyView(g);
}

/** fit / expand all / collapse all buttons and the "parameters" checkbox. */
function fillToolbar(g, bar) {
  const paramsBox = document.createElement("input");
  paramsBox.type = "checkbox";
  paramsBox.addEventListener("change", () => { g.showParams = paramsBox.checked; draw(g); });
  const paramsLabel = document.createElement("label");
  paramsLabel.append(paramsBox, " parameters");
  const find = document.createElement("input");
  find.type = "search";
  find.className = "mg-search";
  find.placeholder = "find node";
  find.setAttribute("aria-label", "find a node by name, op or module");
  const count = document.createElement("span");
  count.className = "mg-count";
  find.addEventListener("change", () => search(g, find.value, count)); // Enter or leaving the box
  bar.append(find, count, button("fit", "fit the graph to the pane", () => fit(g)),
    button("expand all", "open every module", () => { g.expanded = moduleScopes(g.nodes, g.top); draw(g); fit(g); }),
    button("collapse all", "back to the top-level modules", () => { g.expanded = new Set(); draw(g); fit(g); }), paramsLabel);
}

/** Pan with the mouse, zoom with the wheel around the pointer. */
function wirePanZoom(g, root) {
  let drag = null;
  root.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: g.view.x, vy: g.view.y, moved: false };
  });
  root.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x; const dy = ev.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 3) return; // a click, not a drag
    drag.moved = true;
    g.view.x = drag.vx + dx; g.view.y = drag.vy + dy;
    g.moved = true;
    applyView(g);
  });
  root.addEventListener("pointerup", () => { g.dragged = Boolean(drag && drag.moved); drag = null; });
  root.addEventListener("pointerleave", () => { drag = null; });
  root.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = root.getBoundingClientRect();
    const px = ev.clientX - r.left; const py = ev.clientY - r.top;
    const { view } = g;
    const k = Math.min(4, Math.max(0.03, view.k * Math.exp(-ev.deltaY * 0.0015)));
    g.view = { k, x: px - (px - view.x) * (k / view.k), y: py - (py - view.y) * (k / view.k) };
    g.moved = true;
    applyView(g);
  }, { passive: false });
}

export function render(el, pane, ctx) {
  const bar = document.createElement("div");
  bar.className = "mg-bar";
  const box = document.createElement("div");
  box.className = "mg-view";
  const root = svg("svg", { class: "mg-svg", width: "100%", height: "100%" });
  const defs = svg("defs");
  const marker = svg("marker", { id: `mg-arrow-${Math.random().toString(36).slice(2)}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
    markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#8a94a0" }));
  defs.append(marker);
  const world = svg("g");
  root.append(defs, world);
  box.append(root);
  el.append(bar, box);

  // dragged: the click that ends a pan must not expand the module under the pointer
  // moved: the user panned or zoomed, so a resize keeps their view; matches: units the search marked
  const g = { ctx, box, world, marker, nodes: [], name: "", top: null, expanded: new Set(), showParams: false,
    view: { k: 1, x: 0, y: 0 }, bounds: null, dragged: false, moved: false, matches: new Set() };
  g.details = detailsPanel(box, (id) => {
    const n = g.nodes.find((m) => m.id === id);
    return n ? String(n.label || n.op) : id;
  });
  fillToolbar(g, bar);
  wirePanZoom(g, root);
  // Fit again when the pane gets its size (first layout, a resized card, fullscreen) unless the user moved the view.
  let size = "";
  const resized = new ResizeObserver(() => {
    const now = `${box.clientWidth}x${box.clientHeight}`;
    if (now === size || !box.clientWidth || !box.clientHeight) return;
    size = now;
    if (!g.moved) fit(g);
  });
  resized.observe(box);
  const onFullscreen = () => { g.moved = false; size = ""; fit(g); };
  document.addEventListener("fullscreenchange", onFullscreen);

  async function update(p) {
    const d = p.data || {};
    g.nodes = (Array.isArray(d.nodes) ? d.nodes : []).filter((n) => n && typeof n.id === "string");
    g.name = typeof d.name === "string" ? d.name : "";
    g.top = graphRoot(g.nodes, g.name);
    const known = moduleScopes(g.nodes, g.top);
    g.expanded = new Set([...g.expanded].filter((s) => known.has(s))); // a new graph keeps what still exists open
    const h = Number((p.opts || {}).height);
    box.style.height = h >= 120 && h <= 2000 ? `${h}px` : "";
    g.matches = new Set();
    draw(g);
    if (!g.moved) fit(g);
  }

  return {
    ready: update(pane),
    update,
    extend: () => ctx.refetch(),
    destroy() {
      resized.disconnect();
      document.removeEventListener("fullscreenchange", onFullscreen);
      el.replaceChildren();
    },
  };
}
