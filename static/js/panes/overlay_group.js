// panes/overlay_group.js — one legend driving the overlays of many pictures (Compare's cells, a step's list grid): its
// layer and class toggles, score thresholds and mask opacity apply to every member's boxes and masks alike.
import { overlayLayer } from "./overlays.js";

/** Overlays of every record merged into one record: the shared legend lists every layer, class and score. */
export function mergedOverlays(records) {
  const out = { boxes: {}, masks: {} };
  for (const rec of records) {
    for (const [layer, data] of Object.entries(rec?.overlays?.boxes || {})) {
      const into = out.boxes[layer] || (out.boxes[layer] = { boxes: [], class_labels: {} });
      Object.assign(into.class_labels, data.class_labels || {});
      for (const b of data.boxes || []) into.boxes.push({ class_id: b.class_id, scores: b.scores, xyxy: [0, 0, 0, 0] });
    }
    for (const [layer, data] of Object.entries(rec?.overlays?.masks || {})) {
      const into = out.masks[layer] || (out.masks[layer] = { src: data.src, classes: [], class_labels: {} });
      Object.assign(into.class_labels, data.class_labels || {});
      into.classes = [...new Set([...into.classes, ...(data.classes || [])])].sort((a, b) => a - b);
    }
  }
  return out;
}

/** The legend's shape (layers, classes, score keys and ranges): rebuilt only when it changes, not on every step. */
const legendKey = (ov) => JSON.stringify([Object.entries(ov.masks).map(([l, m]) => [l, m.classes]),
  Object.entries(ov.boxes).map(([l, b]) => [l, [...new Set(b.boxes.map((x) => x.class_id))].sort(),
    b.boxes.map((x) => Object.entries(x.scores || {})).flat().map(([k, v]) => `${k}${v}`).sort()])]);

function copyState(from, to) {
  for (const key of ["hiddenLayers", "hiddenClasses"]) {
    to[key].clear();
    for (const k of from[key]) to[key].add(k);
  }
  for (const k of Object.keys(to.thresholds)) delete to.thresholds[k];
  Object.assign(to.thresholds, from.thresholds);
  to.opacity = from.opacity;
}

/**
 * A group: `legend` (place it once), member() makes a member's overlay layer (its own legend stays unused), show(records,
 * url) sets the legend from the records shown now, draw(member, rec, url) draws one member's record under the group's
 * toggles. `members()` lists the current members: a toggle redraws each of them.
 */
export function overlayGroup(members) {
  const master = overlayLayer(); // drawn nowhere: its legend is the toggles and thresholds of every member
  let shape = "";

  for (const ev of ["input", "change"]) {
    master.legend.addEventListener(ev, () => {
      for (const o of members()) {
        copyState(master.state, o.state);
        o.redraw();
      }
    });
  }

  function member() {
    const o = overlayLayer();
    o.canvas.hidden = true;
    return o;
  }

  async function show(records, url) {
    const ov = mergedOverlays(records.filter(Boolean));
    const next = legendKey(ov);
    if (next !== shape) {
      shape = next;
      await master.show({ width: 1, height: 1, overlays: ov }, url);
    }
    master.legend.hidden = !Object.keys(ov.boxes).length && !Object.keys(ov.masks).length;
  }

  async function draw(o, rec, url) {
    o.canvas.hidden = !rec?.overlays;
    if (!rec?.overlays) return;
    await o.show(rec, url);
    copyState(master.state, o.state);
    o.redraw();
  }

  return { legend: master.legend, state: master.state, member, show, draw };
}
