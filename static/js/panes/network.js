// panes/network.js — network panes (Visdom's `graph`): a force-directed layout computed here, drawn with Plotly
// (edges as one NaN-separated line trace, nodes as markers; labels as text, never markup).
import { loadPlotly } from "../plotly_loader.js";
import { counted } from "../dom.js";

const ITERATIONS = 150;

/** Fruchterman–Reingold on a deterministic circle start, so the same graph always gets the same picture. */
export function layoutGraph(n, edges) {
  const pos = Array.from({ length: n }, (_, i) => [Math.cos((2 * Math.PI * i) / Math.max(n, 1)), Math.sin((2 * Math.PI * i) / Math.max(n, 1))]);
  if (n < 2) return pos;
  const k = Math.sqrt(4 / n);
  const steps = n > 2000 ? 30 : ITERATIONS; // big graphs: a rougher layout rather than a frozen page
  let temp = 0.1;
  for (let it = 0; it < steps; it += 1) {
    const disp = pos.map(() => [0, 0]);
    for (let i = 0; i < n; i += 1) {
      for (let j = i + 1; j < n; j += 1) {
        const dx = pos[i][0] - pos[j][0];
        const dy = pos[i][1] - pos[j][1];
        const d2 = Math.max(dx * dx + dy * dy, 1e-6);
        const f = (k * k) / d2;
        disp[i][0] += dx * f; disp[i][1] += dy * f;
        disp[j][0] -= dx * f; disp[j][1] -= dy * f;
      }
    }
    for (const e of edges) {
      const a = e.source;
      const b = e.target;
      if (a === b) continue;
      const dx = pos[a][0] - pos[b][0];
      const dy = pos[a][1] - pos[b][1];
      const d = Math.max(Math.hypot(dx, dy), 1e-3);
      const f = d / k;
      disp[a][0] -= dx * f; disp[a][1] -= dy * f;
      disp[b][0] += dx * f; disp[b][1] += dy * f;
    }
    for (let i = 0; i < n; i += 1) {
      const d = Math.max(Math.hypot(disp[i][0], disp[i][1]), 1e-9);
      const step = Math.min(d, temp);
      pos[i][0] += (disp[i][0] / d) * step;
      pos[i][1] += (disp[i][1] / d) * step;
    }
    temp *= 0.97;
  }
  return pos;
}

export function render(el, pane, ctx) {
  const div = document.createElement("div");
  div.className = "xy-plot network-plot";
  el.appendChild(div);
  let destroyed = false;

  async function draw(p) {
    const Plotly = await loadPlotly();
    if (destroyed) return;
    const d = p.data || {};
    const o = p.opts || {};
    const nodes = Array.isArray(d.nodes) ? d.nodes : [];
    const edges = (Array.isArray(d.edges) ? d.edges : []).filter(
      (e) => Number.isInteger(e.source) && Number.isInteger(e.target) && e.source < nodes.length && e.target < nodes.length,
    );
    const pos = layoutGraph(nodes.length, edges);
    const ex = [];
    const ey = [];
    const mx = [];
    const my = [];
    const mt = [];
    for (const e of edges) {
      const a = pos[e.source];
      const b = pos[e.target];
      ex.push(a[0], b[0], null);
      ey.push(a[1], b[1], null);
      mx.push((a[0] + b[0]) / 2);
      my.push((a[1] + b[1]) / 2);
      mt.push(e.label == null ? "" : String(e.label));
    }
    const labels = nodes.map((nd, i) => (nd.label == null ? String(i) : String(nd.label)));
    const showV = o.showVertexLabels !== false;
    const showE = o.showEdgeLabels === true || o.showEdgeLabels === "always";
    const data = [
      { type: "scatter", mode: "lines", x: ex, y: ey, hoverinfo: "skip", line: { color: "#9aa3ad", width: 1 }, name: "edges" },
      { type: "scatter", mode: showE ? "text" : "markers", x: mx, y: my, text: mt, hoverinfo: "text", marker: { size: 1, opacity: 0 }, name: "edge labels" },
      { type: "scatter", mode: showV ? "markers+text" : "markers", x: pos.map((q) => q[0]), y: pos.map((q) => q[1]), text: labels,
        textposition: "top center", hoverinfo: "text", marker: { size: 10, color: "#4c78a8" }, name: "nodes" },
    ];
    // Arrowheads for directed graphs, as annotations (they cost a DOM node each: only for modest graphs).
    const annotations = o.directed && edges.length <= 300 ? edges.map((e) => ({
      x: pos[e.target][0], y: pos[e.target][1], ax: pos[e.source][0], ay: pos[e.source][1],
      xref: "x", yref: "y", axref: "x", ayref: "y", showarrow: true, arrowhead: 2, arrowsize: 1, arrowwidth: 1,
      arrowcolor: "#9aa3ad", standoff: 6, text: "",
    })) : [];
    const layout = {
      autosize: true, showlegend: false, hovermode: "closest", annotations,
      margin: { l: 8, r: 8, t: 8, b: 8 },
      xaxis: { visible: false }, yaxis: { visible: false, scaleanchor: "x" },
      uirevision: "keep",
    };
    const h = Number(o.height);
    div.style.height = h >= 120 && h <= 1200 ? `${h}px` : "";
    await Plotly.react(div, data, layout, { responsive: true, displaylogo: false });
    ctx.setInfo(`${counted(nodes.length, "node")}, ${counted(edges.length, "edge")}`, "");
  }

  return {
    ready: draw(pane),
    update: draw,
    extend: () => ctx.refetch(),
    destroy() {
      destroyed = true;
      if (window.Plotly) window.Plotly.purge(div);
      div.remove();
    },
  };
}
