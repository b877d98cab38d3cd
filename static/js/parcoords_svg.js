// parcoords_svg.js — parallel coordinates in plain SVG, for browsers without WebGL (Plotly's parcoords needs it:
// remote desktops, VMs and headless browsers): one axis per dimension, one line per row, drag on an axis to brush.
const NS = "http://www.w3.org/2000/svg";
const W = 900;
const H = 340;
const PAD = { l: 60, r: 60, t: 40, b: 24 };

function el(name, attrs = {}) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** A CSS colour on a light-to-dark ramp (Viridis-like ends) for t in [0, 1]. */
function ramp(t) {
  const a = [68, 1, 84];
  const b = [253, 231, 37];
  const c = a.map((v, i) => Math.round(v + (b[i] - v) * (Number.isFinite(t) ? t : 0)));
  return `rgb(${c.join(",")})`;
}

function extent(d) {
  if (d.range) return d.range;
  const fin = d.values.filter(Number.isFinite);
  if (!fin.length) return [0, 1];
  const lo = Math.min(...fin);
  const hi = Math.max(...fin);
  return lo === hi ? [lo - 1, hi + 1] : [lo, hi];
}

/**
 * Draw into `host` (replacing its content). dims: [{label, values, tickvals?, ticktext?, range?}], color: number
 * per row, ranges: Map(dimension index -> [lo, hi]) already brushed; onBrush(Map) after every brush change.
 */
export function drawParcoords(host, dims, color, ranges, onBrush) {
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "parcoords-svg", role: "img",
    "aria-label": "parallel coordinates" });
  const n = dims.length;
  const xs = dims.map((_, i) => PAD.l + (n === 1 ? 0 : (i * (W - PAD.l - PAD.r)) / (n - 1)));
  const ext = dims.map(extent);
  const y = (i, v) => PAD.t + (1 - (v - ext[i][0]) / (ext[i][1] - ext[i][0])) * (H - PAD.t - PAD.b);
  const inv = (i, py) => ext[i][0] + (1 - (py - PAD.t) / (H - PAD.t - PAD.b)) * (ext[i][1] - ext[i][0]);
  const cFin = color.filter(Number.isFinite);
  const cLo = cFin.length ? Math.min(...cFin) : 0;
  const cHi = cFin.length ? Math.max(...cFin) : 1;

  const lines = el("g", { class: "pc-lines", fill: "none" });
  const rows = dims.length ? dims[0].values.length : 0;
  const paths = [];
  for (let r = 0; r < rows; r++) {
    const pts = dims.map((d, i) => (Number.isFinite(d.values[r]) ? `${xs[i]},${y(i, d.values[r])}` : null));
    const p = el("path", { d: `M${pts.filter(Boolean).join("L")}`, stroke: ramp((color[r] - cLo) / (cHi - cLo || 1)),
      "stroke-width": 1.5, "data-row": r });
    paths.push(p);
    lines.append(p);
  }
  const restyle = () => {
    paths.forEach((p, r) => {
      const ok = [...ranges].every(([i, [lo, hi]]) => Number.isFinite(dims[i].values[r])
        && dims[i].values[r] >= lo && dims[i].values[r] <= hi);
      p.setAttribute("stroke-opacity", ok ? "0.9" : "0.08");
    });
  };
  svg.append(lines);

  dims.forEach((d, i) => {
    const g = el("g", { class: "pc-axis", "data-dim": i });
    g.append(el("line", { x1: xs[i], x2: xs[i], y1: PAD.t, y2: H - PAD.b, stroke: "#555" }));
    const title = el("text", { x: xs[i], y: PAD.t - 14, "text-anchor": "middle", "font-size": 11 });
    title.textContent = d.label;
    g.append(title);
    const ticks = d.tickvals ? d.tickvals.map((v, k) => [v, d.ticktext[k]]) : [ext[i][0], ext[i][1]].map((v) => [v, v.toPrecision(3)]);
    for (const [v, label] of ticks) {
      const t = el("text", { x: xs[i] - 6, y: y(i, v) + 4, "text-anchor": "end", "font-size": 10, fill: "#444" });
      t.textContent = String(label);
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
    // Pointer coordinates -> viewBox units (the SVG is scaled to its box).
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

/** True where WebGL (needed by Plotly's parcoords) is available. */
export function hasWebGL() {
  try {
    const c = document.createElement("canvas");
    return Boolean(c.getContext("webgl") || c.getContext("experimental-webgl"));
  } catch {
    return false;
  }
}
