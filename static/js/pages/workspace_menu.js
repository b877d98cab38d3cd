// pages/workspace_menu.js — a pane card's "⋯" menu: PNG/SVG/CSV/JSON export, log y, reset zoom, fullscreen, close.
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
      xy && item("m-reset", "Reset zoom", () => window.Plotly.relayout(plot(), { "xaxis.autorange": true, "yaxis.autorange": true })),
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
