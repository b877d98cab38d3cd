// panes/registry.js — the one list mapping a pane kind to its module; unknown kinds get a small "unsupported" card.
import * as xy from "./xy.js";
import * as text from "./text.js";
import * as image from "./image.js";
import * as figure from "./figure.js";
import * as properties from "./properties.js";
import * as network from "./network.js";
import * as embeddings from "./embeddings.js";
import * as histogram from "./histogram.js";
import * as media from "./media.js";
import * as prCurve from "./pr_curve.js";
import * as modelGraph from "./model_graph.js";
import * as projector from "./projector.js";
import * as table from "./table.js";
import * as object3d from "./object3d.js";

/*
 * Every pane module exports render(el, pane, ctx) -> view, where
 *   el    the card body (empty), pane the rendered pane from the read API (WIRE.md §3),
 *   ctx   {env, win, points, url(path), refetch(), setInfo(text, title), setPoints(n)};
 *   view  {ready: Promise, update(pane), extend(msg), destroy()}; update/extend may return promises.
 * extend(msg) gets one merged message per animation frame: {version, traces: [{idx, name, x, y}]};
 * a module that cannot apply it calls ctx.refetch(). The page never calls two methods of a view at once.
 */
const KINDS = new Map([
  ["line", xy],
  ["scatter", xy],
  ["text", text],
  ["image", image],
  ["figure", figure],
  ["properties", properties],
  ["network", network],
  ["embeddings", embeddings],
  ["histogram", histogram],
  ["media", media],
  ["pr_curve", prCurve],
  ["model_graph", modelGraph],
  ["projector", projector],
  ["table", table],
  ["object3d", object3d],
]);

const unsupported = {
  render(el, pane) {
    const box = document.createElement("div");
    box.className = "pane-unsupported";
    box.textContent = `unsupported pane kind ${JSON.stringify(String(pane.kind))}`;
    el.appendChild(box);
    return {
      ready: Promise.resolve(),
      update() {},
      extend() {},
      destroy() {
        box.remove();
      },
    };
  },
};

/** The module that renders `kind` (never throws; unknown kinds get the unsupported card). */
export function moduleFor(kind) {
  return KINDS.get(kind) || unsupported;
}

export const knownKinds = () => [...KINDS.keys()];
