// pages/env_layout.js — a run page's card sizes: the S/M/L chart-size control, text cards as tall as their text,
// and charts redrawn to their card when the grid changes it (a section's lone card takes the whole row).
import { h } from "../dom.js";
import { CHART_SIZES, chartSize, fitRows, setChartSize } from "./workspace_grid.js";

const TITLES = { S: "small charts: three a row", M: "medium charts: two a row", L: "large charts: one a row" };

/** The chart-size buttons of the header: a click re-flows every card nobody placed by hand. */
export function sizeControl(page) {
  const buttons = Object.keys(CHART_SIZES).map((size) => h("button", { type: "button", class: "btn-small chart-size-btn",
    dataset: { size }, title: TITLES[size], "aria-label": TITLES[size], onclick: () => choose(size) }, size));
  function mark() {
    for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.size === chartSize()));
  }
  function choose(size) {
    setChartSize(size);
    mark();
    for (const slot of page.slots.values()) page.ws.place(slot, slot.layout);
  }
  mark();
  return h("span", { class: "chart-size", role: "group", "aria-label": "chart size" }, ...buttons);
}

/**
 * After a text pane (Visdom's text, or add_text's stepped text) is drawn: its flowing card takes the height of the
 * text and its step bar (up to a chart's).
 */
export function fitText(slot) {
  const box = slot.body.querySelector(".text-pane, .media-pane[data-type='text'] .media-text");
  if (!box || box.classList.contains("svg-fit")) return; // a figure (matplotlib SVG) keeps a chart's size
  const bar = slot.body.querySelector(".step-bar");
  fitRows(slot, box.scrollHeight + (bar ? bar.offsetHeight + 12 : 0));
}

/** Redraw a card's Plotly chart when the card changes size (the grid re-flowed, a size chosen, a card added). */
export function cardResizer() {
  const due = new Set();
  const flush = () => {
    for (const card of due) {
      const plot = card.querySelector(".js-plotly-plot");
      if (plot && window.Plotly && plot.data) window.Plotly.Plots.resize(plot).catch(() => {});
    }
    due.clear();
  };
  return new ResizeObserver((entries) => {
    if (!due.size) requestAnimationFrame(flush);
    for (const e of entries) due.add(e.target);
  });
}
