// panes/pr_curve.js — PR curve panes: precision (y) over recall (x) of the record at the slider's step, newest by default.
import { loadPlotly } from "../plotly_loader.js";
import { stepper } from "./stepper.js";
import { counted } from "../dom.js";

const CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };

function layout() {
  const axis = (title) => ({ title: { text: title, standoff: 4 }, range: [0, 1.02], automargin: true, gridcolor: "#eceef1",
    zeroline: false });
  return {
    autosize: true, margin: { l: 44, r: 10, t: 8, b: 34 }, font: { size: 11 }, showlegend: false, hovermode: "closest",
    xaxis: axis("recall"), yaxis: axis("precision"), uirevision: "keep",
  };
}

export function render(el, pane, ctx) {
  const div = document.createElement("div");
  div.className = "stepped-plot";
  const steps = stepper(ctx, draw);
  const wrap = document.createElement("div");
  wrap.className = "stepped-pane"; // a flex column: the plot takes the card's height left by the step slider
  wrap.append(div, steps.el);
  el.append(wrap);
  let first = true;
  let destroyed = false;

  async function draw(rec) {
    const Plotly = await loadPlotly();
    if (destroyed) return;
    const precision = Array.isArray(rec.precision) ? rec.precision : [];
    const recall = Array.isArray(rec.recall) ? rec.recall : [];
    const n = Math.min(precision.length, recall.length);
    const th = Array.isArray(rec.thresholds) ? rec.thresholds : [];
    const cols = ["tp", "fp", "tn", "fn"].map((k) => (Array.isArray(rec[k]) ? rec[k] : []));
    const trace = {
      type: "scatter", mode: "lines", x: recall.slice(0, n), y: precision.slice(0, n), name: `step ${rec.step}`,
      line: { width: 1.8, color: "#1f77b4" },
      // Hover shows what TensorBoard's PR card shows: threshold and the confusion counts at that point.
      customdata: Array.from({ length: n }, (_, i) => [th[i], ...cols.map((c) => c[i])]),
      hovertemplate: "recall %{x:.4f}<br>precision %{y:.4f}<br>threshold %{customdata[0]:.3f}"
        + "<br>TP %{customdata[1]} FP %{customdata[2]}<br>TN %{customdata[3]} FN %{customdata[4]}<extra></extra>",
      meta: { step: rec.step, index: rec.index },
    };
    if (first) await Plotly.newPlot(div, [trace], layout(), CONFIG);
    else await Plotly.react(div, [trace], layout(), CONFIG);
    first = false;
  }

  function set(p) {
    const d = p.data || {};
    ctx.setInfo(counted(Number(d.count) || 0, "step"), "");
    return steps.set(p);
  }

  return {
    ready: set(pane),
    update: set,
    extend: () => ctx.refetch(),
    destroy() {
      destroyed = true;
      steps.destroy();
      if (window.Plotly) window.Plotly.purge(div);
      wrap.remove();
    },
  };
}
