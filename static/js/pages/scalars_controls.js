// pages/scalars_controls.js — the Scalars view's side bar: smoothing, axis and scale controls, the run picker.
import { h } from "../dom.js";
import { runColor, setRunColor } from "../run_colors.js";
import { regexMatcher } from "../smoothing.js";
import { groupControls } from "./seed_groups.js";

const X_MODES = [["step", "Step"], ["relative", "Relative"], ["wall", "Wall"]];

/** One labelled control of the side bar. */
function control(label, input, cls) {
  return h("label", { class: `sc-control ${cls}` }, h("span", { class: "sc-label", text: label }), input);
}

/**
 * A swatch showing a run's colour; a click opens the browser's colour picker, and the choice is kept for the run
 * (run_colors.js) and applied through onChange().
 */
export function colorSwatch(run, onChange) {
  const chip = h("button", { type: "button", class: "chip run-color", title: `colour of ${run} (click to change)`,
    "aria-label": `colour of ${run}`, style: `background:${runColor(run)}` });
  chip.addEventListener("click", (ev) => {
    ev.preventDefault(); // inside a <label>: do not tick the run's box
    let input = chip.parentNode.querySelector("input.run-color-input");
    if (!input) {
      input = h("input", { type: "color", class: "run-color-input", value: runColor(run), "aria-label": `pick colour of ${run}` });
      input.addEventListener("input", () => {
        setRunColor(run, input.value);
        chip.style.background = input.value;
        onChange();
      });
      chip.after(input);
    }
    input.click();
  });
  return chip;
}

/** Runs whose lines are drawn: picked and matching the run regex (an invalid one matches nothing). */
export const shownRuns = (sc) => {
  const m = regexMatcher(sc.runFilter.value.trim());
  return sc.runs.filter((r) => sc.picked.has(r) && m(r));
};

/**
 * The side bar: chart options change sc.state and call redraw(); run picks call refresh() (a new read).
 * Sets sc.runFilter and sc.runList.
 */
export function sideBar(sc, { redraw, refresh, reread }) {
  const { state } = sc;
  sc.runFilter = h("input", { type: "search", class: "filter run-filter", placeholder: "filter runs (regex)",
    "aria-label": "filter runs", oninput: () => { drawRuns(sc, refresh); refresh(); } });
  sc.runList = h("div", { class: "sc-runs" });
  const smoothVal = h("span", { class: "smoothing-value", text: "0.60" });
  const smoothIn = h("input", { type: "range", class: "smoothing", min: "0", max: "0.99", step: "0.01", value: "0.6",
    "aria-label": "smoothing", oninput: () => {
      state.smoothing = Number(smoothIn.value);
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
  const setAll = (on) => {
    const m = regexMatcher(sc.runFilter.value.trim());
    for (const r of sc.runs) if (m(r)) (on ? sc.picked.add(r) : sc.picked.delete(r));
    drawRuns(sc, refresh);
    refresh();
  };
  return h("aside", { class: "sc-side" },
    control("Smoothing", h("span", { class: "sc-row" }, smoothIn, smoothVal), "sc-smoothing"),
    control("Horizontal axis", xSel, "sc-x"),
    control("Log scale (y)", logIn, "sc-check"),
    control("Ignore outliers in chart scaling", outIn, "sc-check"),
    groupControls(sc.groups, refresh),
    h("div", { class: "sc-label", text: "Runs" }), sc.runFilter,
    h("div", { class: "sc-row" },
      h("button", { type: "button", class: "btn-small runs-all", onclick: () => setAll(true) }, "all"),
      h("button", { type: "button", class: "btn-small runs-none", onclick: () => setAll(false) }, "none")),
    sc.runList);
}

/** The run list: a checkbox and colour chip per run; runs missing the run regex are hidden, not dropped. */
export function drawRuns(sc, refresh) {
  const m = regexMatcher(sc.runFilter.value.trim());
  sc.runList.replaceChildren(...sc.runs.map((r) => {
    const box = h("input", { type: "checkbox", class: "run-pick", checked: sc.picked.has(r), onchange: () => {
      if (box.checked) sc.picked.add(r);
      else sc.picked.delete(r);
      refresh();
    } });
    return h("label", { class: "sc-run", dataset: { run: r }, hidden: !m(r) },
      box, colorSwatch(r, () => sc.redrawAll()), h("span", { class: "run-name", text: r }));
  }));
}
