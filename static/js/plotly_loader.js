// plotly_loader.js — loads the vendored Plotly bundle once, on first use, for every page and pane that draws with it.
import { url } from "./api.js";
import { themePlotly } from "./theme.js";

let plotlyPromise = null;

/** Load the vendored plotly.min.js once (served by paneboard, never a CDN); resolves to window.Plotly. */
export function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!plotlyPromise) {
    plotlyPromise = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url("static/vendor/plotly.min.js");
      s.async = true;
      s.onload = () => {
        if (!window.Plotly) return reject(new Error("plotly.min.js defined no Plotly"));
        // Defaults for every plot on every page: nothing may offer to send a figure off this server.
        window.Plotly.setPlotConfig({ showSendToCloud: false, showEditInChartStudio: false, showLink: false,
                                      displaylogo: false });
        themePlotly(window.Plotly); // figures drawn in the light or dark theme in effect
        resolve(window.Plotly);
      };
      s.onerror = () => {
        plotlyPromise = null;
        s.remove();
        reject(new Error("cannot load static/vendor/plotly.min.js"));
      };
      document.head.appendChild(s);
    });
  }
  return plotlyPromise;
}
