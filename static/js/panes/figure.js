// panes/figure.js — generic Plotly figures (heatmap, bar, surface, pie, mesh, raw Visdom `_send`): Plotly.react of data+layout.
import { loadPlotly } from "../plotly_loader.js";
import { mathReady, normalizeLayout, normalizeTrace } from "./plotly_compat.js";

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
const CONFIG = { responsive: true, displaylogo: false };

const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The stored layout (normalised for plotly.js 4) over our defaults. The card's bar shows the pane title, so a
 * layout title equal to it is not drawn again; any other layout title is drawn, with room above the plot.
 */
function plotlyLayout(stored, cardTitle) {
  const layout = {
    autosize: true,
    margin: { l: 44, r: 10, t: 8, b: 32, pad: 0 },
    font: { family: FONT, size: 11, color: "#24292f" },
    paper_bgcolor: "#fff",
    uirevision: "keep", // keep the user's zoom and camera across re-renders
  };
  for (const [k, v] of Object.entries(normalizeLayout(stored))) {
    if (k === "width" || k === "height") continue; // the card decides the size
    layout[k] = isObj(v) && isObj(layout[k]) ? { ...layout[k], ...v } : v;
  }
  const title = isObj(layout.title) ? layout.title.text : undefined;
  if (title === undefined || title === null || title === "" || String(title) === cardTitle) delete layout.title;
  else layout.margin = { ...layout.margin, t: Math.max(Number(layout.margin.t) || 0, 36) };
  return layout;
}

export function render(el, pane, ctx) {
  const div = document.createElement("div");
  div.className = "xy-plot figure-plot";
  el.appendChild(div);
  let destroyed = false;

  async function draw(p) {
    const Plotly = await loadPlotly();
    if (destroyed) return;
    const fig = isObj(p.data) ? p.data : {};
    // Plotly mutates trace objects it is given; the pane object stays the server's copy.
    const data = Array.isArray(fig.data) ? fig.data.filter(isObj).map(normalizeTrace) : [];
    const h = Number(p.opts && p.opts.height); // Visdom's opts.height, in pixels
    div.style.height = h >= 120 && h <= 1200 ? `${h}px` : "";
    await mathReady(fig.layout, data);
    if (destroyed) return;
    await Plotly.react(div, data, plotlyLayout(fig.layout, String(p.title || "")), CONFIG);
    ctx.setInfo(`${data.length} trace${data.length === 1 ? "" : "s"}`, data.map((t) => t.type || "scatter").join(", "));
  }

  return {
    ready: draw(pane),
    update: draw,
    extend: () => ctx.refetch(), // figures change as whole `pane` messages
    destroy() {
      destroyed = true;
      if (window.Plotly) window.Plotly.purge(div);
      div.remove();
    },
  };
}
