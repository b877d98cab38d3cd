// pages/workspace_menu.js — a pane card's "⋯" menu: PNG/SVG/CSV/JSON export, log y, reset zoom, a link to the pane,
// fullscreen, close.
import * as api from "../api.js";
import { h } from "../dom.js";
import { resizePlot } from "./workspace_grid.js";

const closeMenus = () => { for (const l of document.querySelectorAll(".menu-list")) l.remove(); };

/** The menu button of one card; its list is built when opened (50 panes keep no hidden menus around). */
export function paneMenu(ws, slot) {
  const { env } = ws;
  const plot = () => slot.card.querySelector(".js-plotly-plot");
  const file = `${env}-${slot.win}`.replace(/[^\w.-]+/g, "_");
  const wrap = h("div", { class: "pane-menu" });
  const item = (cls, text, onclick) => h("button", { type: "button", class: `menu-item ${cls}`, onclick: (e) => {
    e.stopPropagation();
    closeMenus();
    onclick();
  } }, text);
  const link = (cls, text, format) => h("a", { class: `menu-item ${cls}`, href: api.exportUrl(env, slot.win, format),
    download: `${file}.${format}`, onclick: () => setTimeout(closeMenus) }, text);
  function build() {
    const xy = !!plot();
    return h("div", { class: "menu-list" },
      xy && item("m-png", "Download PNG", () => window.Plotly.downloadImage(plot(), { format: "png", filename: file })),
      xy && item("m-svg", "Download SVG", () => window.Plotly.downloadImage(plot(), { format: "svg", filename: file })),
      xy && link("m-csv", "Data as CSV", "csv"),
      xy && link("m-json", "Data as JSON", "json"),
      xy && item("m-logy", "Toggle log y", () => {
        const p = plot();
        window.Plotly.relayout(p, { "yaxis.type": p.layout.yaxis.type === "log" ? "linear" : "log" });
      }),
      xy && epochAxis(ws, slot) && item("m-epoch", slot.view.xMapped() ? "x axis: step" : "x axis: epoch",
        () => ws.act(() => toggleEpochAxis(ws, slot))),
      xy && item("m-reset", "Reset zoom", () => window.Plotly.relayout(plot(), { "xaxis.autorange": true, "yaxis.autorange": true })),
      h("a", { class: "menu-item m-link", href: api.panePageUrl(env, slot.win), title: "a link that opens this run at this pane",
        onclick: () => setTimeout(closeMenus) }, "Link to this pane"),
      item("m-full", "Fullscreen", () => {
        if (document.fullscreenElement) document.exitFullscreen();
        else slot.card.requestFullscreen().then(() => resizePlot(slot)).catch(() => {});
      }),
      item("m-close", "Close pane", () => closePane(ws, slot)));
  }
  wrap.append(h("button", { type: "button", class: "pane-menu-btn", title: "pane menu", "aria-label": "pane menu",
    onclick: (e) => {
      e.stopPropagation();
      const open = wrap.querySelector(".menu-list");
      closeMenus();
      if (!open) wrap.append(build());
    } }, "⋯"));
  return wrap;
}

/** A step-indexed pane can switch to epochs when the env logs an `epoch` pane (step -> epoch, as Lightning
 * and the Hugging Face Trainer do). */
function epochAxis(ws, slot) {
  const epoch = ws.slots().get("epoch") || ws.slots().get("train/epoch");
  return epoch && epoch !== slot && slot.view && typeof slot.view.setXMap === "function";
}

async function toggleEpochAxis(ws, slot) {
  if (slot.view.xMapped()) return slot.view.setXMap(null);
  const win = ws.slots().has("epoch") ? "epoch" : "train/epoch";
  const pane = await api.getPane(ws.env, win, 100000);
  const t = (pane.data && pane.data.traces && pane.data.traces[0]) || { x: [], y: [] };
  const pts = t.x.map((x, i) => [x, t.y[i]]).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
    .sort((a, b) => a[0] - b[0]);
  // Anchors: the first step logged in each epoch. Steps between two anchors get a fractional epoch.
  const anchors = pts.filter((p, i) => i === 0 || p[1] !== pts[i - 1][1]);
  if (!anchors.length) throw new Error(`pane "${win}" has no points to map steps to epochs`);
  return slot.view.setXMap({ map: (x) => stepToEpoch(anchors, x), label: "epoch" });
}

/** The (fractional) epoch at `step`: linear between the anchors (first step of each epoch), past the last one at
 * the pace of the epoch before it, clamped before the first. */
export function stepToEpoch(anchors, step) {
  const n = anchors.length;
  if (step <= anchors[0][0] || n === 1) return anchors[0][1]; // before the first epoch, or only one known
  let lo = 0, hi = n - 1;
  if (step >= anchors[hi][0]) {
    lo = n - 2; // extrapolate with the last full epoch's length
  } else {
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (anchors[mid][0] <= step) lo = mid; else hi = mid;
    }
  }
  const [x0, y0] = anchors[lo], [x1, y1] = anchors[lo + 1];
  return y0 + (y1 - y0) * (step - x0) / (x1 - x0);
}

function closePane(ws, slot) {
  if (!window.confirm(`Close pane "${slot.title}"? Its data is deleted.`)) return;
  ws.act(async () => {
    // Visdom's close event for the script's handlers, sent while the window (its pane_data) still exists.
    await api.post("vis_event", { event_type: "close", target: slot.win, eid: ws.env }).catch(() => null);
    return api.del(`${api.envPath(ws.env)}/panes/${encodeURIComponent(slot.win)}`);
  });
}

/** A click anywhere else closes an open menu. */
export function closeMenusOnOutsideClick() {
  document.addEventListener("click", closeMenus);
}
