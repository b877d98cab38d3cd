// parcoords_svg.js — parallel coordinates in plain SVG (Plotly's parcoords needs WebGL and cannot leave a gap for a
// missing value): one axis per dimension, one line per row, broken where a row has no value, drag on an axis to brush.
const NS = "http://www.w3.org/2000/svg";
const H = 340;
const PAD = { l: 60, r: 60, t: 48, b: 24 };
const MIN_GAP = 96; // px between axes: below this the plot scrolls sideways rather than overprint its labels
const CHAR_PX = 6.4; // about one character of the 11 px label font
const TICK_ROWS = 14; // at most this many tick labels on an axis, so category axes stay legible

function el(name, attrs = {}) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** A CSS colour for t in [0, 1] on a perceptual ramp (viridis from its blue, so both ends show on light and dark). */
export function ramp(t) {
  if (!Number.isFinite(t)) return "rgb(150,150,150)";
  const stops = [[59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  return `rgb(${stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f)).join(",")})`;
}

function extent(d) {
  if (d.range) return d.range;
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of d.values) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (lo === Infinity) return [0, 1];
  const pad = lo === 0 ? 1 : Math.abs(lo) / 2; // one value: mid-axis, ticks in its own units (5e-5, not 0)
  return lo === hi ? [lo - pad, hi + pad] : [lo, hi];
}

const fmtTick = (v) => (Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(1) : String(Number(v.toPrecision(3))));

/** About five round tick values inside [lo, hi], with their labels. */
function niceTicks([lo, hi]) {
  const step0 = (hi - lo) / 4;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0) || step0;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push([v, fmtTick(Math.abs(v) < step * 1e-9 ? 0 : v)]);
  return out.length ? out : [[lo, fmtTick(lo)], [hi, fmtTick(hi)]];
}

/** A label that fits `chars`: the whole name, else its last path part, else that part cut in the middle. */
export function shortLabel(label, chars) {
  if (label.length <= chars) return label;
  const leaf = label.split(/[/.]/).filter(Boolean).pop() || label;
  if (leaf.length <= chars) return leaf;
  const keep = Math.max(1, chars - 1);
  return `${leaf.slice(0, Math.ceil(keep / 2))}…${leaf.slice(leaf.length - Math.floor(keep / 2))}`;
}

/** "M…L…" through the finite points, a new subpath after every gap; a lone point is a dot (round caps). */
export function pathOf(points) {
  let d = "";
  let open = false;
  points.forEach((p, i) => {
    if (!p) { open = false; return; }
    const alone = !open && !points[i + 1];
    d += `${open ? "L" : "M"}${p[0].toFixed(1)},${p[1].toFixed(1)}${alone ? "h0.01" : ""}`;
    open = true;
  });
  return d;
}

/**
 * Draw into `host` (replacing its content). dims: [{label, values, tickvals?, ticktext?, range?}], color: number
 * per row (NaN: grey), ranges: Map(dimension index -> [lo, hi]) already brushed; onBrush(Map) after every brush
 * change; names: a hover text per row (optional). Rows with no value on an axis are not drawn across it.
 */
export function drawParcoords(host, dims, color, ranges, onBrush, names = null) {
  const n = dims.length;
  const gap = Math.max(MIN_GAP, n > 1 ? ((host.clientWidth || 900) - PAD.l - PAD.r) / (n - 1) : 0);
  const W = Math.max(host.clientWidth || 900, PAD.l + PAD.r + gap * Math.max(0, n - 1));
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "parcoords-svg", role: "img",
    "aria-label": "parallel coordinates" });
  const xs = dims.map((_, i) => PAD.l + i * gap);
  const ext = dims.map(extent);
  const y = (i, v) => PAD.t + (1 - (v - ext[i][0]) / (ext[i][1] - ext[i][0])) * (H - PAD.t - PAD.b);
  const inv = (i, py) => ext[i][0] + (1 - (py - PAD.t) / (H - PAD.t - PAD.b)) * (ext[i][1] - ext[i][0]);
  const cFin = color.filter(Number.isFinite);
  const cLo = cFin.length ? Math.min(...cFin) : 0;
  const cHi = cFin.length ? Math.max(...cFin) : 1;

  const rows = dims.length ? dims[0].values.length : 0;
  // Many runs: thinner, fainter lines, so a sweep of hundreds reads as density rather than a solid block.
  const width = rows > 300 ? 0.8 : rows > 60 ? 1 : 1.5;
  const on = rows > 300 ? 0.35 : rows > 60 ? 0.55 : 0.9;
  const lines = el("g", { class: "pc-lines", fill: "none", "stroke-linecap": "round", "stroke-width": width });
  const paths = [];
  for (let r = 0; r < rows; r++) {
    const pts = dims.map((d, i) => (Number.isFinite(d.values[r]) ? [xs[i], y(i, d.values[r])] : null));
    // One colour value for all (a single run): the ramp's middle, which shows on light and dark alike.
    const t = cHi > cLo ? (color[r] - cLo) / (cHi - cLo) : 0.5;
    const p = el("path", { d: pathOf(pts), stroke: ramp(Number.isFinite(color[r]) ? t : NaN), "data-row": r });
    if (names) {
      const tip = el("title");
      tip.textContent = names[r];
      p.append(tip);
    }
    paths.push(p);
    lines.append(p);
  }
  const restyle = () => {
    paths.forEach((p, r) => {
      const ok = [...ranges].every(([i, [lo, hi]]) => Number.isFinite(dims[i].values[r])
        && dims[i].values[r] >= lo && dims[i].values[r] <= hi);
      p.setAttribute("stroke-opacity", ok ? String(on) : "0.08");
    });
  };
  svg.append(lines);

  // Labels alternate between two rows when the axes are close, so each may take twice the gap.
  const stagger = n > 1 && dims.some((d) => d.label.length * CHAR_PX > gap - 8);
  const chars = Math.max(4, Math.floor(((stagger ? 2 : 1) * gap - 10) / CHAR_PX));
  dims.forEach((d, i) => {
    const g = el("g", { class: "pc-axis", "data-dim": i });
    g.append(el("line", { class: "pc-axis-line", x1: xs[i], x2: xs[i], y1: PAD.t, y2: H - PAD.b }));
    const text = shortLabel(d.label, chars);
    // Centred over its axis, unless that would run past the plot's edge (the first and last axes).
    const half = (text.length * CHAR_PX) / 2;
    const [tx, anchor] = xs[i] - half < 2 ? [2, "start"] : xs[i] + half > W - 2 ? [W - 2, "end"] : [xs[i], "middle"];
    const title = el("text", { class: "pc-title", x: tx, y: PAD.t - (stagger && i % 2 === 0 ? 26 : 12),
      "text-anchor": anchor, "font-size": 11 });
    title.textContent = text;
    const full = el("title");
    full.textContent = d.label;
    g.append(full, title);
    let ticks = d.tickvals ? d.tickvals.map((v, k) => [v, d.ticktext[k]]) : niceTicks(ext[i]);
    const every = Math.ceil(ticks.length / TICK_ROWS);
    if (every > 1) ticks = ticks.filter((_, k) => k % every === 0);
    for (const [v, label] of ticks) {
      const t = el("text", { class: "pc-tick", x: xs[i] - 6, y: y(i, v) + 4, "text-anchor": "end", "font-size": 10 });
      t.textContent = shortLabel(String(label), Math.floor((gap - 16) / 6));
      g.append(t);
    }
    const brush = el("rect", { class: "pc-brush", x: xs[i] - 6, width: 12, fill: "#3b82f6", "fill-opacity": 0.25,
      y: 0, height: 0, visibility: "hidden" });
    // The hit area reaches past both ends of the axis, so a drag can start beyond the extreme values.
    const hit = el("rect", { x: xs[i] - 10, y: PAD.t - 10, width: 20, height: H - PAD.t - PAD.b + 20,
      fill: "transparent", style: "cursor: crosshair" });
    g.append(brush, hit);
    const show = () => {
      const r = ranges.get(i);
      brush.setAttribute("visibility", r ? "visible" : "hidden");
      if (r) {
        const [a, b] = [y(i, r[1]), y(i, r[0])];
        brush.setAttribute("y", a);
        brush.setAttribute("height", Math.max(b - a, 1));
      }
    };
    // Pointer coordinates -> viewBox units (the SVG may be scaled to its box).
    const toY = (ev) => ((ev.clientY - svg.getBoundingClientRect().top) / svg.getBoundingClientRect().height) * H;
    hit.addEventListener("pointerdown", (ev) => {
      const y0 = toY(ev);
      hit.setPointerCapture(ev.pointerId);
      const move = (e) => {
        const [a, b] = [Math.min(y0, toY(e)), Math.max(y0, toY(e))];
        if (b - a < 3) ranges.delete(i); // a click clears the brush
        else ranges.set(i, [inv(i, b), inv(i, a)]);
        show();
        restyle();
      };
      const up = (e) => {
        move(e);
        hit.removeEventListener("pointermove", move);
        hit.removeEventListener("pointerup", up);
        onBrush(ranges);
      };
      hit.addEventListener("pointermove", move);
      hit.addEventListener("pointerup", up);
    });
    show();
    svg.append(g);
  });
  restyle();
  host.replaceChildren(svg);
}
