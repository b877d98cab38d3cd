// pages/lineage_graph.js — a run's lineage as a small SVG graph, left to right: the runs that logged what it
// used → the versions it used → the run → the versions it logged → the runs that used those. Drawn from the run
// panel's artifacts data (GET api/v1/envs/<env>/artifacts); runs link to their pages. Plain SVG, no library.
import * as api from "../api.js";

const NS = "http://www.w3.org/2000/svg";
const NODE_W = 150, NODE_H = 24, ROW = 32, GAP = 40, PAD = 6;
const MAX_PER_COLUMN = 12; // more than that: the first ones and a "+N more" node

function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const kid of kids) if (kid) el.append(kid);
  return el;
}

/** The label in about `n` characters: a version keeps its ":vN" (names share their start), a run its start. */
function shorten(text, n = 22) {
  if (text.length <= n) return text;
  const tail = /:v\d+$/.exec(text);
  return tail ? `${text.slice(0, n - tail[0].length - 1)}…${tail[0]}` : `${text.slice(0, n - 1)}…`;
}

/** The graph's columns (empty ones dropped) and edges between node ids ("run:<env>", "ver:<ref>"). */
export function lineageModel(env, data) {
  const self = `run:${env}`;
  const unique = (xs) => [...new Set(xs)];
  const upstream = unique(data.used.map((v) => v.env).filter((e) => e && e !== env));
  const downstream = unique(data.logged.flatMap((v) => v.used_by).filter((e) => e !== env));
  const run = (e) => ({ id: `run:${e}`, kind: "run", label: e, env: e });
  const version = (v) => ({ id: `ver:${v.ref}`, kind: "version", label: v.ref, title: `${v.ref} (${v.type})` });
  const columns = [upstream.map(run), data.used.map(version), [{ ...run(env), kind: "self" }],
    data.logged.map(version), downstream.map(run)].filter((c) => c.length);
  const edges = [
    ...data.used.flatMap((v) => [...(v.env && v.env !== env ? [[`run:${v.env}`, `ver:${v.ref}`]] : []),
      [`ver:${v.ref}`, self]]),
    ...data.logged.flatMap((v) => [[self, `ver:${v.ref}`],
      ...v.used_by.filter((e) => e !== env).map((e) => [`ver:${v.ref}`, `run:${e}`])]),
  ];
  return { columns, edges };
}

function capped(column) {
  if (column.length <= MAX_PER_COLUMN) return column;
  const more = column.length - (MAX_PER_COLUMN - 1);
  return [...column.slice(0, MAX_PER_COLUMN - 1), { id: `more:${column[0].id}`, kind: "more", label: `+${more} more` }];
}

/** The SVG of a run's lineage, or null when it logged and used nothing. */
export function lineageGraph(env, data) {
  if (!data.logged.length && !data.used.length) return null;
  const model = lineageModel(env, data);
  const columns = model.columns.map(capped);
  const rows = Math.max(...columns.map((c) => c.length));
  const width = columns.length * NODE_W + (columns.length - 1) * GAP + 2 * PAD;
  const height = rows * ROW - (ROW - NODE_H) + 2 * PAD;
  const at = new Map();
  columns.forEach((column, i) => {
    const top = PAD + ((rows - column.length) * ROW) / 2;
    column.forEach((node, j) => at.set(node.id, { x: PAD + i * (NODE_W + GAP), y: top + j * ROW, node }));
  });
  const root = svg("svg", { class: "lineage-graph", width, height, viewBox: `0 0 ${width} ${height}`,
    role: "img", "aria-label": `lineage of ${env}` });
  root.append(svg("defs", null, svg("marker", { id: "lineage-arrow", viewBox: "0 0 8 8", refX: 8, refY: 4,
    markerWidth: 7, markerHeight: 7, orient: "auto" }, svg("path", { class: "lg-arrow", d: "M0,0 L8,4 L0,8 z" }))));
  for (const [from, to] of model.edges) {
    const a = at.get(from), b = at.get(to);
    if (!a || !b) continue; // a node past the column's cap
    const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2, mid = (x1 + x2) / 2;
    root.append(svg("path", { class: "lg-edge", d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
      "marker-end": "url(#lineage-arrow)", "data-from": from, "data-to": to }));
  }
  for (const { x, y, node } of at.values()) {
    const box = svg("g", { class: `lg-node lg-${node.kind}`, "data-id": node.id, transform: `translate(${x},${y})` },
      svg("title", null, document.createTextNode(node.title || node.label)),
      svg("rect", { width: NODE_W, height: NODE_H, rx: node.kind === "version" ? 12 : 4 }),
      svg("text", { x: NODE_W / 2, y: NODE_H / 2, "text-anchor": "middle", "dominant-baseline": "central" },
        document.createTextNode(shorten(node.label))));
    root.append(node.kind === "run" ? svg("a", { href: api.envPageUrl(node.env) }, box) : box);
  }
  return root;
}
