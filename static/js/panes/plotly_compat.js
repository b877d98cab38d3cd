// panes/plotly_compat.js — Visdom's plotly.js 1–2 figures made to draw the same on the plotly.js 4 served here: string
// titles, dropped legacy keys, plotly's default trace mode, and MathJax (vendored) for `$...$` labels.
import { url } from "../api.js";

const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const AXIS = /^(?:[xyz]axis\d*|radialaxis|angularaxis|[abc]axis)$/;
const AXIS_2D = /^[xy]axis\d*$/;
const SUBPLOT = /^(?:scene|polar|ternary)\d*$/;
const LEGACY_TYPES = { heatmapgl: "heatmap", pointcloud: "scattergl" }; // trace types plotly.js 3 removed
export const PTS_LINESONLY = 20; // plotly.js: a scatter trace without `mode` gets markers too below this many points

/**
 * A container's title as plotly.js 4 takes it: plotly.js 1–2 also read `title: "text"`, `titlefont`, `titleside`
 * and `titleposition`, which 3.0 dropped, so Visdom's axis labels and colorbar titles would silently vanish.
 */
function fixTitle(obj) {
  const out = { ...obj };
  let t = out.title;
  if (typeof t === "string" || typeof t === "number") t = { text: String(t) };
  else t = isObj(t) ? { ...t } : undefined;
  for (const [old, key] of [["titlefont", "font"], ["titleside", "side"], ["titleposition", "position"]]) {
    if (out[old] === undefined) continue;
    t = t || {};
    if (t[key] === undefined) t[key] = out[old];
    delete out[old];
  }
  if (t !== undefined) out.title = t;
  return out;
}

function fixAxis(name, ax) {
  const out = fixTitle(ax);
  // Visdom's plotly sized margins by hand; here each 2-D axis grows its margin to fit its ticks and title (a y2
  // axis on the right would otherwise lose its tick labels to our 10 px right margin).
  if (AXIS_2D.test(name) && out.automargin === undefined) out.automargin = true;
  return out;
}

/** A stored layout (any plotly.js version) as plotly.js 4 draws it; the stored object is not changed. */
export function normalizeLayout(layout) {
  if (!isObj(layout)) return {};
  const out = fixTitle(layout);
  for (const [k, v] of Object.entries(out)) {
    if (!isObj(v)) continue;
    if (AXIS.test(k)) out[k] = fixAxis(k, v);
    else if (SUBPLOT.test(k)) {
      const sub = { ...v };
      for (const [ak, av] of Object.entries(sub)) if (AXIS.test(ak) && isObj(av)) sub[ak] = fixAxis(ak, av);
      out[k] = sub;
    } else if (k === "legend") out[k] = fixTitle(v);
  }
  return out;
}

/** One trace as plotly.js 4 draws it (a shallow copy: plotly mutates what it is given). */
export function normalizeTrace(trace) {
  const tr = { ...trace };
  if (LEGACY_TYPES[tr.type]) tr.type = LEGACY_TYPES[tr.type];
  if (isObj(tr.colorbar)) tr.colorbar = fixTitle(tr.colorbar);
  if (isObj(tr.marker) && isObj(tr.marker.colorbar)) tr.marker = { ...tr.marker, colorbar: fixTitle(tr.marker.colorbar) };
  return tr;
}

/** The mode plotly.js gives a scatter trace that names none (as Visdom's `dual_axis_lines` sends them). */
export function defaultMode(npoints) {
  return npoints < PTS_LINESONLY ? "lines+markers" : "lines";
}

const MATH = /\$[^$]+\$/;

/** Whether any label of the figure (layout strings, trace names and texts) holds TeX between `$` signs. */
export function hasMath(layout, traces) {
  if (isObj(layout) && MATH.test(JSON.stringify(layout))) return true;
  return (traces || []).some((t) => isObj(t) && [t.name, t.text, t.hovertext].some((s) => typeof s === "string" && MATH.test(s)));
}

let mathPromise = null;

/** Load the vendored MathJax 3 (tex-svg) once, for plotly.js to typeset `$...$` labels; resolves when ready. */
export function loadMathJax() {
  if (window.MathJax && window.MathJax.tex2svgPromise) return Promise.resolve(window.MathJax);
  if (!mathPromise) {
    mathPromise = new Promise((resolve, reject) => {
      const base = url("static/vendor/mathjax");
      // No page typesetting (plotly asks for each label), no menu (its speech options would load more code).
      window.MathJax = {
        startup: { typeset: false, ready: () => { window.MathJax.startup.defaultReady(); resolve(window.MathJax); } },
        loader: { paths: { mathjax: base }, load: [] },
        options: { enableMenu: false },
        svg: { fontCache: "global" },
      };
      const s = document.createElement("script");
      s.src = `${base}/tex-svg.js`;
      s.async = true;
      s.onerror = () => {
        mathPromise = null;
        s.remove();
        reject(new Error("cannot load static/vendor/mathjax/tex-svg.js"));
      };
      document.head.appendChild(s);
    });
  }
  return mathPromise;
}

/** Load MathJax first when the figure needs it; a failed load only leaves the TeX as text. */
export async function mathReady(layout, traces) {
  if (!hasMath(layout, traces)) return;
  try {
    await loadMathJax();
  } catch (err) {
    console.warn("paneboard:", err.message);
  }
}
