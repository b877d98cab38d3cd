// panes/media_list.js — a step's list of pictures (W&B's wandb.log({"examples": [Image, ...]}) stores one record each,
// all at that step): drawn as a grid with a caption under each, the pane's step slider moving the whole grid. Boxes and
// masks are drawn over each cell, with one legend for the grid whose toggles and thresholds apply to every cell; each
// cell pans and zooms on its own (a list's pictures are different pictures: unlike Compare, nothing to keep in sync).
import { overlayGroup } from "./overlay_group.js";
import { panZoom } from "./panzoom.js";

const MAX_SHOWN = 100; // records of one step read at once (the /steps API's cap per request)
const PIXEL_ART = 512; // as image.js: small pictures scaled up stay sharp (nearest-neighbour)

/** Indices of the records at `step` (a list logged at one step), from the pane's step index. */
export function indicesAt(steps, step) {
  const out = [];
  (Array.isArray(steps) ? steps : []).forEach((s, i) => { if (s === step) out.push(i); });
  return out;
}

/**
 * One cell: the picture and its overlay canvas on a stage that pans and zooms on its own (wheel, drag, double-click
 * resets) inside a frame that clips it, the hover tip and the caption under them.
 */
function makeCell(group) {
  const img = document.createElement("img");
  img.decoding = "async";
  const overlay = group.member();
  const stage = document.createElement("div");
  stage.className = "media-stage";
  stage.append(img, overlay.canvas);
  const frame = document.createElement("div");
  frame.className = "media-cell-frame";
  frame.append(stage);
  const cap = document.createElement("figcaption");
  const fig = document.createElement("figure");
  fig.append(frame, overlay.tip, cap);
  return { fig, img, overlay, cap, zoom: panZoom(frame, stage) };
}

/** A grid view: show(indices, ctx) reads those records (one request) and draws them; el holds the legend and grid. */
export function mediaList() {
  const grid = document.createElement("div");
  grid.className = "media-list";
  let cells = []; // reused across steps: a scrub swaps pictures and overlays, not DOM
  const group = overlayGroup(() => cells.map((c) => c.overlay));
  group.legend.classList.add("media-list-legend");
  group.legend.hidden = true;
  const el = document.createElement("div");
  el.className = "media-list-wrap";
  el.append(group.legend, grid);
  let token = 0;

  async function drawCell(c, r, url) {
    const src = /^(data|blob):/.test(r.src) ? r.src : url(r.src);
    const w = Number(r.width) || 0;
    const h = Number(r.height) || 0;
    c.fig.dataset.index = String(r.index);
    if (c.img.getAttribute("src") !== src) c.img.src = src;
    c.img.width = w;
    c.img.height = h;
    c.img.alt = r.caption != null ? String(r.caption) : `step ${r.step}`;
    c.img.classList.toggle("pixelated", w <= PIXEL_ART && h <= PIXEL_ART);
    c.cap.textContent = r.caption != null ? String(r.caption) : "";
    await Promise.all([group.draw(c.overlay, r, url), c.img.decode().catch(() => {})]);
  }

  async function show(indices, ctx) {
    const mine = ++token;
    const i0 = indices[0];
    const i1 = Math.min(indices[indices.length - 1] + 1, i0 + MAX_SHOWN);
    const path = `api/v1/envs/${encodeURIComponent(ctx.env)}/panes/${encodeURIComponent(ctx.win)}/steps?i0=${i0}&i1=${i1}`;
    const res = await fetch(ctx.url(path), { cache: "no-store", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`step read failed: ${res.status}`);
    const body = await res.json();
    if (mine !== token) return;
    const wanted = new Set(indices);
    const recs = (body.records || []).filter((r) => wanted.has(r.index) && r.type === "image");
    while (cells.length < recs.length) cells.push(makeCell(group));
    cells.length = recs.length;
    if (grid.childElementCount !== cells.length) grid.replaceChildren(...cells.map((c) => c.fig));
    const url = (src) => ctx.url(src);
    await group.show(recs, url);
    await Promise.all(recs.map((r, k) => drawCell(cells[k], r, url)));
    if (mine !== token) return;
    // Marked after every cell's picture and overlay are drawn: the step on screen is whole.
    grid.dataset.step = recs.length ? String(recs[0].step) : "";
    grid.dataset.count = String(recs.length);
  }

  return { el, show };
}
