// pages/workspace_grid.js — the env page's 12-column pane grid: where a card sits, dragging and resizing it, saving that.
import * as api from "../api.js";
import { getItem, setItem } from "../storage.js";

export const COLS = 12; // must match server/envops.py GRID_COLUMNS
const ROW = 30; // px per grid row (CSS grid-auto-rows); a card spans h rows
const DEFAULT_W = 6;
const DEFAULT_H = 9;

// The chart-size control's widths in grid columns (TensorBoard's card width): three, two or one card a row.
export const CHART_SIZES = { S: 4, M: 6, L: 12 };
const SIZE_KEY = "paneboard.chartSize";

/** The chart size every run page uses ("S", "M" or "L"), kept in this browser. */
export function chartSize() {
  const v = getItem("local", SIZE_KEY);
  return Object.hasOwn(CHART_SIZES, v) ? v : "M";
}

export function setChartSize(size) {
  if (Object.hasOwn(CHART_SIZES, size)) setItem("local", SIZE_KEY, size);
}

/** Grid cell a pane takes before anyone placed it: the chart size's width (full if opts.width is wide), ~330 px high. */
export function defaultSize(pane) {
  const o = (pane && pane.opts) || {};
  const w = Number(o.width) >= 700 ? COLS : CHART_SIZES[chartSize()] || DEFAULT_W;
  const ph = Number(o.height);
  const hgt = ph >= 120 && ph <= 1200 ? Math.ceil((ph + 40) / (ROW + 10)) : DEFAULT_H;
  return { w, h: hgt };
}

const validLayout = (l) => l && [l.x, l.y, l.w, l.h].every(Number.isFinite);

/** Put a card in its saved cell, or let it flow at its default size when it has none. */
export function place(slot, layout) {
  const l = validLayout(layout) ? layout : null;
  slot.layout = l;
  const size = l || defaultSize(slot.pane);
  const st = slot.card.style;
  st.gridColumn = l ? `${l.x + 1} / span ${l.w}` : `span ${Math.min(COLS, size.w)}`;
  // A text card nobody sized takes the height of its text (fitRows), not a chart's.
  st.gridRow = l ? `${l.y + 1} / span ${l.h}` : `span ${slot.fitRows || size.h}`;
  slot.card.dataset.layout = l ? `${l.x},${l.y},${l.w},${l.h}` : "";
  resizePlot(slot);
}

/** Size a flowing text card to its content's height `px` (a few rows for a line, a chart's height at most). */
export function fitRows(slot, px) {
  const rows = Math.max(2, Math.min(DEFAULT_H, Math.ceil((px + 30 + 10) / (ROW + 10))));
  if (slot.fitRows === rows) return;
  slot.fitRows = rows;
  slot.card.dataset.fit = "1";
  if (!slot.layout) slot.card.style.gridRow = `span ${rows}`;
}

export function resizePlot(slot) {
  const plot = slot.card.querySelector(".js-plotly-plot");
  if (plot && window.Plotly) requestAnimationFrame(() => window.Plotly.Plots.resize(plot).catch(() => {}));
}

/** Grid geometry in px: column pitch, row pitch and the grid's origin. */
function metrics(grid) {
  const r = grid.getBoundingClientRect();
  const cs = getComputedStyle(grid);
  const gap = parseFloat(cs.columnGap) || 10;
  const rgap = parseFloat(cs.rowGap) || 10;
  return { left: r.left, top: r.top, gap, col: (r.width + gap) / COLS, row: ROW + rgap };
}

/** The cell the card occupies now (placed or auto-flowed), from its rendered box. */
function cellOf(grid, card) {
  const m = metrics(grid);
  const r = card.getBoundingClientRect();
  const x = Math.max(0, Math.min(COLS - 1, Math.round((r.left - m.left) / m.col)));
  const w = Math.max(1, Math.min(COLS - x, Math.round((r.width + m.gap) / m.col)));
  return { x, y: Math.max(0, Math.round((r.top - m.top) / m.row)), w, h: Math.max(1, Math.round((r.height + m.row - ROW) / m.row)) };
}

/** Store a pane's cell (null: back to the flow) on the server; the layout message places it everywhere. */
export function saveLayout(ws, slot, layout) {
  return ws.act(() => api.put(`${api.envPath(ws.env)}/panes/${encodeURIComponent(slot.win)}/layout`, layout));
}

/** Pointer drag on the card bar moves the pane; the bottom-right handle resizes it. Saved on release. */
export function dragger(ws, slot, mode) {
  return (ev) => {
    if (ev.button !== 0 || (mode === "move" && ev.target.closest("button, a, select, .pane-menu"))) return;
    ev.preventDefault();
    const grid = slot.card.parentElement; // the card's section grid: its cells count from there
    const m = metrics(grid);
    const start = cellOf(grid, slot.card);
    const x0 = ev.clientX, y0 = ev.clientY;
    let cur = start;
    slot.card.classList.add(mode === "move" ? "dragging" : "resizing");
    const move = (e) => {
      const dx = Math.round((e.clientX - x0) / m.col), dy = Math.round((e.clientY - y0) / m.row);
      cur = mode === "move"
        ? { ...start, x: Math.max(0, Math.min(COLS - start.w, start.x + dx)), y: Math.max(0, start.y + dy) }
        : { ...start, w: Math.max(1, Math.min(COLS - start.x, start.w + dx)), h: Math.max(2, start.h + dy) };
      place(slot, cur);
    };
    const up = () => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      slot.card.classList.remove("dragging", "resizing");
      place(slot, cur);
      saveLayout(ws, slot, cur);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  };
}
