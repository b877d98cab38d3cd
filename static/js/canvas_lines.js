// canvas_lines.js — a sweep's lines painted on a canvas over a Plotly chart's plot area, not as SVG paths.
// Plotly keeps the axes, grid, zoom and pan (from one invisible trace spanning the data); the lines follow its
// axes after every draw. A redraw (a smoothing change, a live point) so costs a canvas paint, not an SVG rebuild.

const layers = new WeakMap(); // plot element -> {canvas, groups, dense, listening}

/** The plot area's axes of a drawn Plotly chart, or null before its first draw. */
export function axesOf(plot) {
  const fl = plot._fullLayout;
  return fl && fl.xaxis && fl.yaxis && fl._size ? { xa: fl.xaxis, ya: fl.yaxis, size: fl._size } : null;
}

const DASHES = { dot: [2, 3], dash: [6, 4], longdash: [10, 5], dashdot: [6, 3, 2, 3], longdashdot: [10, 4, 2, 4] };

/**
 * Paint `groups` ([{color, dash, x, y}], NaN between series) with `ax`'s mapping onto `ctx`, whose origin is the
 * plot area's top-left corner, at `scale` device pixels per CSS pixel.
 */
export function paintLines(ctx, groups, ax, { scale = 1, dense = false, width = 1 } = {}) {
  const { xa, ya } = ax;
  ctx.save();
  ctx.scale(scale, scale);
  ctx.beginPath();
  ctx.rect(0, 0, ax.size.w, ax.size.h);
  ctx.clip(); // a zoomed chart's lines stop at the axes, as Plotly's do
  // One pixel wide: Skia strokes such lines as hairlines, several times faster than any wider (1.2 px: 7x) on a
  // machine without a GPU.
  ctx.lineWidth = width;
  ctx.lineJoin = "round";
  ctx.globalAlpha = dense ? 0.55 : 1; // hundreds of runs: the colour painted last must not hide the rest
  for (const g of groups) {
    ctx.strokeStyle = g.color;
    ctx.setLineDash(DASHES[g.dash] || []);
    ctx.beginPath();
    let pen = false;
    const { x, y } = g;
    for (let i = 0; i < x.length; i++) {
      const px = xa.c2p(x[i]);
      const py = ya.c2p(y[i]);
      if (!Number.isFinite(px) || !Number.isFinite(py)) { // a gap, a missing value or a log axis's <= 0
        pen = false;
        continue;
      }
      if (pen) ctx.lineTo(px, py);
      else ctx.moveTo(px, py);
      pen = true;
    }
    ctx.stroke();
  }
  ctx.restore();
}

function paint(plot, layer) {
  const ax = axesOf(plot);
  if (!ax || !plot.isConnected) return;
  const { size } = ax;
  const ratio = window.devicePixelRatio || 1;
  const { canvas } = layer;
  // Before the highlighted run's overlay (run_hover.js), which must stay on top.
  if (!canvas.isConnected) plot.insertBefore(canvas, plot.querySelector(":scope > .run-hl"));
  Object.assign(canvas.style, { left: `${size.l}px`, top: `${size.t}px`, width: `${size.w}px`, height: `${size.h}px` });
  const w = Math.max(1, Math.round(size.w * ratio));
  const h = Math.max(1, Math.round(size.h * ratio));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, w, h);
  paintLines(ctx, layer.groups, ax, { scale: ratio, dense: layer.dense });
}

/**
 * Show `groups` as the lines of `plot` (drawn by Plotly with boundsTrace's figure); null removes the layer (a
 * chart drawn by Plotly alone again). Call after each Plotly draw; zooms, pans and resizes repaint by themselves.
 */
export function showLines(plot, groups, { dense = false } = {}) {
  let layer = layers.get(plot);
  if (!groups) {
    if (layer) {
      layer.canvas.remove();
      layer.groups = null;
    }
    return;
  }
  if (!layer) {
    const canvas = document.createElement("canvas");
    canvas.className = "run-lines";
    layer = { canvas, groups, dense, listening: false };
    layers.set(plot, layer);
  }
  layer.groups = groups;
  layer.dense = dense;
  if (!layer.listening && typeof plot.on === "function") { // Plotly's own draws: zoom, pan, autoscale, resize
    layer.listening = true;
    plot.on("plotly_afterplot", () => {
      if (layer.groups) paint(plot, layer);
    });
  }
  paint(plot, layer);
}

/** The lines a plot shows on its canvas, or null (downloads paint them into the picture). */
export const linesOf = (plot) => (layers.get(plot) || {}).groups || null;

/**
 * One invisible Plotly trace spanning `groups` (their smallest and largest finite x and y), so that Plotly's
 * autorange, zoom and double-click reset cover the lines as if it drew them. `logY`: only positive y count.
 */
export function boundsTrace(groups, logY = false) {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const g of groups) {
    const { x, y } = g;
    for (let i = 0; i < x.length; i++) {
      const xv = x[i];
      const yv = y[i];
      if (!Number.isFinite(xv) || !Number.isFinite(yv) || (logY && yv <= 0)) continue;
      if (xv < x0) x0 = xv;
      if (xv > x1) x1 = xv;
      if (yv < y0) y0 = yv;
      if (yv > y1) y1 = yv;
    }
  }
  const has = x0 <= x1;
  // Its meta names what the canvas paints, per path: its colour, dash and runs (tests and tools read it).
  const paths = groups.map((g) => ({ color: g.color, dash: g.dash, envs: g.envs }));
  return { type: "scatter", mode: "lines", x: has ? [x0, x1] : [], y: has ? [y0, y1] : [], showlegend: false,
    hoverinfo: "skip", opacity: 0, line: { width: 0 }, meta: { role: "lines", paths } };
}

/**
 * A PNG of `plot` as shown: Plotly's picture with the canvas's lines painted in at the same scale. Resolves to a
 * data URL. Plotly: the loaded module (window.Plotly).
 */
export async function pictureOf(Plotly, plot, scale = 2) {
  const groups = linesOf(plot);
  const url = await Plotly.toImage(plot, { format: "png", scale });
  const ax = axesOf(plot);
  if (!groups || !ax) return url;
  const img = new Image();
  await new Promise((resolve, reject) => {
    img.onload = resolve;
    img.onerror = () => reject(new Error("cannot read the chart's picture"));
    img.src = url;
  });
  const out = document.createElement("canvas");
  out.width = img.width;
  out.height = img.height;
  const ctx = out.getContext("2d");
  ctx.drawImage(img, 0, 0);
  ctx.translate(ax.size.l * scale, ax.size.t * scale);
  const layer = layers.get(plot);
  paintLines(ctx, groups, ax, { scale, dense: !!(layer && layer.dense) });
  return out.toDataURL("image/png");
}
