// pages/scalars_controls.js — the Scalars view's side bar: smoothing, axis and scale controls, the run picker.
import { setSmoothing } from "../chart_prefs.js";
import { h } from "../dom.js";
import { keepMarks } from "./run_marks.js";
import { drawList, selectorEl, shownOf } from "./run_selector.js";
import { groupControls } from "./seed_groups.js";

const X_MODES = [["step", "Step"], ["relative", "Relative"], ["wall", "Wall"]];

/** One labelled control of the side bar. */
function control(label, input, cls) {
  return h("label", { class: `sc-control ${cls}` }, h("span", { class: "sc-label", text: label }), input);
}

/** Runs whose lines are drawn (run_selector.js shownOf: picked, matching the search, or pinned). */
export const shownRuns = (sc) => {
  sc.sel.runs = sc.runs;
  return shownOf(sc.sel);
};

/**
 * The side bar: chart options change sc.state and call redraw(); run picks call reshow() (a draw from what the
 * charts hold) and refresh() (reads of what they lack). Sets sc.runFilter and sc.runList.
 */
export function sideBar(sc, { redraw, refresh, reread, reshow }) {
  const { state } = sc;
  const selector = selectorEl(sc.sel, { onPick: () => { reshow(); refresh(); }, onStyle: redraw,
    onMarks: () => keepMarks("scalars", sc.sel) });
  sc.runFilter = sc.sel.filter;
  sc.runList = sc.sel.list;
  const smoothVal = h("span", { class: "smoothing-value", text: state.smoothing.toFixed(2) });
  const smoothIn = h("input", { type: "range", class: "smoothing", min: "0", max: "0.99", step: "0.01", value: String(state.smoothing),
    "aria-label": "smoothing", oninput: () => {
      state.smoothing = Number(smoothIn.value);
      setSmoothing(state.smoothing); // one setting with run pages and Compare (chart_prefs.js)
      smoothVal.textContent = state.smoothing.toFixed(2);
      redraw();
    } });
  const xSel = h("select", { class: "x-axis", "aria-label": "horizontal axis", onchange: () => {
    state.xmode = xSel.value;
    reread(); // relative and wall axes need the points' wall times, which a step axis does not read
  } }, X_MODES.map(([v, t]) => h("option", { value: v, text: t })));
  const logIn = h("input", { type: "checkbox", class: "log-y", onchange: () => { state.logY = logIn.checked; redraw(); } });
  const outIn = h("input", { type: "checkbox", class: "ignore-outliers", checked: true,
    onchange: () => { state.outliers = outIn.checked; redraw(); } });
  return h("aside", { class: "sc-side" },
    control("Smoothing", h("span", { class: "sc-row" }, smoothIn, smoothVal), "sc-smoothing"),
    control("Horizontal axis", xSel, "sc-x"),
    control("Log scale (y)", logIn, "sc-check"),
    control("Ignore outliers in chart scaling", outIn, "sc-check"),
    groupControls(sc.groups, refresh),
    selector);
}

/** The run list, after the runs changed. */
export function drawRuns(sc) {
  sc.sel.runs = sc.runs;
  drawList(sc.sel);
}
