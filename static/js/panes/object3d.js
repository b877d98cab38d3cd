// panes/object3d.js — 3D point clouds (W&B's Object3D): Plotly's scatter3d of the step's points (RGB, category or height
// colours), 3D boxes as line segments, a step slider; the server thins big clouds to the points budget.
import { loadPlotly } from "../plotly_loader.js";
import { counted } from "../dom.js";
import { classColor } from "./overlays.js";
import { stepper } from "./stepper.js";

const BUDGET = 50_000; // points per cloud drawn: WebGL keeps rotating smoothly
// A step's first draw: ~10k points draw in ~0.6 s in software WebGL (--disable-gpu), 50k in ~3 s.
const FIRST_BUDGET = 10_000;
const CONFIG = { responsive: true, displaylogo: false };

/** Rows of a base64 little-endian float32 buffer, `cols` numbers each, as columns of plain arrays. */
export function decodePoints(b64, cols) {
  const bin = atob(b64 || "");
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const f = new Float32Array(bytes.buffer, 0, Math.floor(bytes.length / 4));
  const n = Math.floor(f.length / cols);
  const out = Array.from({ length: cols }, () => new Array(n));
  for (let i = 0; i < n; i++) for (let c = 0; c < cols; c++) out[c][i] = f[i * cols + c];
  return out;
}

/** The 12 edges of a box given as 8 corners in any order: an edge's midpoint is shared with no other corner pair
 * (a face's two diagonals share theirs, the four space diagonals the centre). */
export function boxEdges(corners) {
  const pairs = [];
  for (let i = 0; i < 8; i++) for (let j = i + 1; j < 8; j++) pairs.push([i, j]);
  const mid = ([i, j]) => corners[i].map((v, k) => ((v + corners[j][k]) / 2).toFixed(5)).join(",");
  const seen = new Map();
  for (const p of pairs) seen.set(mid(p), (seen.get(mid(p)) || 0) + 1);
  return pairs.filter((p) => seen.get(mid(p)) === 1);
}

function boxTrace(box) {
  const xs = [];
  const ys = [];
  const zs = [];
  for (const [i, j] of boxEdges(box.corners)) {
    for (const k of [i, j]) {
      xs.push(box.corners[k][0]);
      ys.push(box.corners[k][1]);
      zs.push(box.corners[k][2]);
    }
    xs.push(null);
    ys.push(null);
    zs.push(null);
  }
  const c = box.color || [255, 80, 80];
  return { type: "scatter3d", mode: "lines", x: xs, y: ys, z: zs, name: box.label || "box", showlegend: false,
    line: { color: `rgb(${c.map(Math.round).join(",")})`, width: 4 }, hoverinfo: "name", meta: { role: "box" } };
}

/** Plotly traces of a record with decoded points: the cloud, then one line trace per box. */
export function cloudTraces(rec) {
  const cols = Number(rec.cols) || 3;
  const p = decodePoints(rec.points, cols);
  const marker = { size: 2 };
  if (cols === 6) marker.color = p[3].map((r, i) => `rgb(${Math.round(r)},${Math.round(p[4][i])},${Math.round(p[5][i])})`);
  else if (cols === 4) marker.color = p[3].map((c) => classColor(Math.round(c)));
  else Object.assign(marker, { color: p[2], colorscale: "Viridis" });
  const cloud = { type: "scatter3d", mode: "markers", x: p[0], y: p[1], z: p[2], marker, name: "points",
    hoverinfo: "x+y+z", showlegend: false, meta: { role: "points" } };
  return [cloud, ...(rec.boxes || []).map(boxTrace)];
}

export function render(el, pane, ctx) {
  const plot = document.createElement("div");
  plot.className = "stepped-plot object3d-pane"; // the plot takes the card's height left by the slider
  const info = document.createElement("div");
  info.className = "object3d-info";
  const steps = stepper(ctx, show);
  const wrap = document.createElement("div");
  wrap.className = "stepped-pane";
  wrap.append(plot, info, steps.el);
  el.append(wrap);
  let drawn = false;
  let latest = 0; // the newest show() call: a refinement of an older step is dropped
  let drawing = Promise.resolve(); // draws one at a time: a refinement never races the next step's draw

  async function pointsOf(rec, budget) {
    if (rec.points !== undefined) return rec;
    const path = `api/v1/envs/${encodeURIComponent(ctx.env)}/panes/${encodeURIComponent(ctx.win)}/points?i=${rec.index}&budget=${budget}`;
    const res = await fetch(ctx.url(path), { cache: "no-store", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`points read failed: ${res.status}`);
    return res.json();
  }

  /** Read the step's points at `budget` and draw them, after any draw in progress; skipped once a newer step is asked. */
  function draw(rec, budget, call) {
    const run = drawing.then(async () => {
      if (call !== latest) return;
      const t0 = performance.now();
      const full = await pointsOf(rec, budget);
      const t1 = performance.now();
      const Plotly = await loadPlotly();
      if (call !== latest) return;
      const t2 = performance.now();
      const layout = { margin: { l: 0, r: 0, t: 0, b: 0 }, uirevision: "keep", paper_bgcolor: "rgba(0,0,0,0)",
        scene: { aspectmode: "data", xaxis: { title: { text: "x" } }, yaxis: { title: { text: "y" } },
          zaxis: { title: { text: "z" } } } };
      const traces = cloudTraces(full);
      const t3 = performance.now();
      if (drawn) await Plotly.react(plot, traces, layout, CONFIG);
      else await Plotly.newPlot(plot, traces, layout, CONFIG);
      drawn = true;
      const t4 = performance.now();
      // Plotly's 3D scene paints on the next animation frame: its WebGL time shows in the frame's.
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
      const t5 = performance.now();
      // at: ms since navigation, when this draw was on screen.
      plot.timings = [...(plot.timings || []).slice(-7), { points: full.shown, read: t1 - t0, plotly: t2 - t1,
        build: t3 - t2, plot: t4 - t3, paint: t5 - t4, at: t5 }];
      const thinned = full.shown < full.n ? ` (${counted(full.shown, "point")} drawn)` : "";
      info.textContent = [`${counted(full.n, "point")}${thinned}`, full.boxes?.length ? counted(full.boxes.length, "box", "boxes") : "",
        full.caption || ""].filter(Boolean).join(" · ");
      plot.dataset.points = String(full.shown);
      plot.dataset.step = String(full.step);
      plot.dataset.full = budget >= BUDGET || full.shown >= full.n ? "1" : "";
    });
    drawing = run.catch(() => {}); // a failed draw does not block the next one; show() reports it
    return run;
  }

  /**
   * Draw a step: a big cloud first at FIRST_BUDGET points (Plotly's scatter3d costs about 60 ms per thousand points
   * in software WebGL), then at the full budget once that is on screen, unless the slider has moved on meanwhile.
   */
  async function show(rec) {
    const call = ++latest;
    const big = rec.points === undefined && Number(rec.n) > FIRST_BUDGET;
    await draw(rec, big ? FIRST_BUDGET : BUDGET, call);
    if (big) draw(rec, BUDGET, call).catch((err) => ctx.setInfo("points read failed", err.message));
  }

  function set(p) {
    pane = p;
    ctx.setInfo(counted(Number(p.data?.count) || 0, "step"), "3D points");
    return steps.set(p);
  }

  return {
    ready: set(pane),
    update: set,
    extend: () => ctx.refetch(),
    destroy() {
      steps.destroy();
      if (drawn && window.Plotly) window.Plotly.purge(plot);
      wrap.remove();
    },
  };
}
