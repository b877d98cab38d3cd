// panes/embeddings.js — Visdom embeddings: labelled 2-D points; hover -> EntitySelected, lasso -> RegionSelected.
import { loadPlotly } from "../plotly_loader.js";
import { reportKeys, sendEvent } from "./visdom_events.js";
import { counted } from "../dom.js";

const CONFIG = { responsive: true, displaylogo: false };
const LAYOUT = {
  autosize: true, dragmode: "lasso", hovermode: "closest", showlegend: true,
  margin: { l: 32, r: 8, t: 8, b: 28 }, uirevision: "keep", paper_bgcolor: "#fff",
};

/** One Plotly trace per group (label class), each point carrying its Visdom idx and entity name. */
function traces(points) {
  const groups = new Map();
  for (const p of Array.isArray(points) ? points : []) {
    if (!p || !Array.isArray(p.position)) continue;
    const g = String(p.group ?? 0);
    if (!groups.has(g)) groups.set(g, { x: [], y: [], text: [], customdata: [], name: String(p.label ?? g) });
    const t = groups.get(g);
    t.x.push(Number(p.position[0]));
    t.y.push(Number(p.position[1]));
    t.text.push(String(p.label ?? ""));
    t.customdata.push([p.idx, String(p.name ?? "")]);
  }
  return [...groups.values()].map((t) => ({ ...t, type: "scatter", mode: "markers", marker: { size: 7 },
    hovertemplate: "%{text}<extra></extra>" }));
}

export function render(el, pane, ctx) {
  const div = document.createElement("div");
  div.className = "xy-plot embeddings-plot";
  const preview = document.createElement("div");
  preview.className = "embeddings-preview";
  el.append(div, preview);
  const unkeys = reportKeys(el, ctx);
  let destroyed = false;
  let hovered = null;

  async function draw(p) {
    const Plotly = await loadPlotly();
    if (destroyed) return;
    const d = p.data || {};
    await Plotly.react(div, traces(d.points), LAYOUT, CONFIG);
    // The script's preview HTML (data_getter) arrives sanitized by the server.
    preview.innerHTML = d.loading ? "computing the embedding…" : (d.selected && d.selected.html) || "";
    ctx.setInfo(`${counted((d.points || []).length, "point")}${d.has_previous ? " · zoomed" : ""}`, "");
    if (!div.dataset.wired) {
      div.dataset.wired = "1";
      div.on("plotly_hover", (ev) => {
        const pt = ev.points && ev.points[0];
        if (!pt || !pt.customdata || pt.customdata[0] === hovered) return; // one event per entity
        hovered = pt.customdata[0];
        sendEvent(ctx, { event_type: "EntitySelected", entityId: pt.customdata[1], idx: pt.customdata[0] });
      });
      div.on("plotly_selected", (ev) => {
        const idxs = ((ev && ev.points) || []).map((pt) => pt.customdata && pt.customdata[0]).filter((i) => i != null);
        if (idxs.length) sendEvent(ctx, { event_type: "RegionSelected", selectedIdxs: idxs });
      });
    }
  }

  return {
    ready: draw(pane),
    update: draw,
    extend: () => ctx.refetch(),
    destroy() {
      destroyed = true;
      unkeys();
      if (window.Plotly) window.Plotly.purge(div);
      div.remove();
      preview.remove();
    },
  };
}
