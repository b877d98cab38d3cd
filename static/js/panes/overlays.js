// panes/overlays.js — boxes and masks drawn over a media image from their data, with a legend that toggles each layer and
// class, a score threshold per score key, a mask opacity, and hover text (class, scores, caption).

import { classColor, decodedMask, loadMask, maskStats } from "./overlay_masks.js";

export { classColor };

const NARROW_PX = 480; // a legend narrower than this (a phone) folds its class list

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

/**
 * An overlay over `img` (the pane's <img>): returns {canvas, legend, show(rec, url), drawMs}. The canvas has the
 * image's own pixel size and the same CSS box, so it lines up however the picture is scaled.
 */
export function overlayLayer() {
  const canvas = el("canvas", "overlay-canvas");
  const legend = el("div", "overlay-legend");
  const tip = el("div", "overlay-tip idle");
  const state = { hiddenLayers: new Set(), hiddenClasses: new Set(), thresholds: {}, opacity: 0.5 };
  let rec = null;
  let masks = {}; // layer -> {w, h, ids}
  let token = 0;
  const seen = new Set(); // mask layers whose default toggles are set
  const api = { canvas, legend, tip, drawMs: 0, state };

  function visibleBoxes() {
    const out = [];
    for (const [layer, data] of Object.entries(rec?.overlays?.boxes || {})) {
      if (state.hiddenLayers.has(`boxes:${layer}`)) continue;
      for (const b of data.boxes || []) {
        if (state.hiddenClasses.has(`${layer}:${b.class_id}`)) continue;
        const scores = b.scores || {};
        if (Object.entries(state.thresholds).some(([k, t]) => k in scores && scores[k] < t)) continue;
        out.push({ layer, box: b, label: (data.class_labels || {})[b.class_id] });
      }
    }
    return out;
  }

  // Boxes are painted on their own offscreen canvas, again only when a box toggle or a threshold changes them: a mask
  // toggle or opacity change then costs a few drawImage calls.
  const boxCanvas = document.createElement("canvas");
  let boxesDirty = true;
  let boxCount = 0;
  let paintedScale = 1; // picture pixels per screen pixel when the boxes were last painted

  function screenScale() {
    const shown = canvas.clientWidth; // CSS pixels, before any zoom transform
    return shown > 0 && canvas.width > 0 ? canvas.width / shown : 1;
  }

  function paintBoxes() {
    boxesDirty = false;
    if (boxCanvas.width !== canvas.width || boxCanvas.height !== canvas.height) {
      boxCanvas.width = canvas.width;
      boxCanvas.height = canvas.height;
    }
    const g = boxCanvas.getContext("2d");
    g.clearRect(0, 0, boxCanvas.width, boxCanvas.height);
    const boxes = visibleBoxes();
    boxCount = boxes.length;
    if (!boxCount) return;
    // Sized for the screen as well as the picture: a 512 px picture shown 150 px wide (a list grid, Compare) would
    // draw a one-pixel edge at a third of a screen pixel, and it vanished.
    paintedScale = screenScale();
    const big = Math.max(canvas.width, canvas.height);
    g.lineWidth = Math.max(1, Math.round(big / 300), Math.ceil(1.5 * paintedScale));
    const fontPx = Math.max(Math.round(9 * paintedScale), Math.round(big / 40));
    g.font = `${fontPx}px sans-serif`;
    g.textBaseline = "bottom";
    for (const { box, label } of boxes) {
      const [x0, y0, x1, y1] = box.xyxy;
      const color = classColor(box.class_id);
      g.strokeStyle = color;
      g.strokeRect(x0, y0, x1 - x0, y1 - y0);
      const text = box.caption || label;
      if (text) {
        const w = g.measureText(text).width + 4;
        const h = fontPx + 2;
        g.fillStyle = color;
        g.fillRect(x0, Math.max(0, y0 - h), w, h);
        g.fillStyle = "#fff";
        g.fillText(text, x0 + 2, Math.max(h, y0));
      }
    }
  }

  function draw() {
    const t0 = performance.now();
    const scale = screenScale();
    if (Math.abs(scale - paintedScale) > 0.25 * paintedScale) boxesDirty = true; // shown at another size since
    if (boxesDirty) paintBoxes();
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, canvas.width, canvas.height);
    g.globalAlpha = state.opacity;
    for (const [layer, data] of Object.entries(rec?.overlays?.masks || {})) {
      const m = masks[layer];
      if (!m || state.hiddenLayers.has(`masks:${layer}`) || m.w !== canvas.width || m.h !== canvas.height) continue;
      const shown = (data.classes || []).filter((id) => !state.hiddenClasses.has(`${layer}:${id}`));
      for (const { x, y, canvas: c } of m.layers(shown)) g.drawImage(c, x, y);
    }
    g.globalAlpha = 1;
    if (boxCount) g.drawImage(boxCanvas, 0, 0);
    api.drawMs = performance.now() - t0;
    canvas.dataset.drawMs = api.drawMs.toFixed(2);
    canvas.dataset.boxes = String(boxCount);
    canvas.dataset.maskDecodes = String(maskStats.decodes);
    canvas.dataset.maskPaints = String(maskStats.paints);
  }

  function toggle(key, on) {
    if (on) state.hiddenLayers.delete(key); else state.hiddenLayers.add(key);
    hiddenCount();
    if (key.startsWith("boxes:")) boxesDirty = true;
    draw();
  }

  function check(label, on, onChange, attrs) {
    const lab = el("label", "overlay-toggle");
    const box = el("input");
    box.type = "checkbox";
    box.checked = on;
    Object.assign(box.dataset, attrs);
    box.addEventListener("change", () => onChange(box.checked));
    lab.append(box, label);
    return lab;
  }

  /** What the legend shows for the record: its layers with their classes, and each score key's range. */
  function legendModel() {
    const ov = rec?.overlays || {};
    const layers = [];
    const scores = {};
    for (const kind of ["masks", "boxes"]) {
      for (const [layer, data] of Object.entries(ov[kind] || {})) {
        const ids = kind === "masks" ? data.classes || []
          : [...new Set((data.boxes || []).map((b) => b.class_id))].sort((a, b) => a - b);
        layers.push({ kind, layer, classes: ids.map((id) => [id, (data.class_labels || {})[id] ?? String(id)]) });
        for (const b of data.boxes || []) {
          for (const [k, v] of Object.entries(b.scores || {})) {
            const r = scores[k] || (scores[k] = [v, v]);
            r[0] = Math.min(r[0], v);
            r[1] = Math.max(r[1], v);
          }
        }
      }
    }
    return { layers, scores, masks: Object.keys(ov.masks || {}).length > 0 };
  }

  let legendKey = null; // the legend's layers, classes and score keys: a step with the same ones keeps its DOM
  const scoreSliders = {}; // score key -> {slider, value}

  function setRange(k, lo, hi) {
    const { slider, value } = scoreSliders[k];
    slider.min = String(lo);
    slider.max = String(hi);
    slider.step = String((hi - lo) / 100 || 1);
    slider.value = String(Math.max(lo, Math.min(hi, state.thresholds[k] ?? lo)));
    value.textContent = `≥ ${Number(slider.value).toPrecision(3)}`;
  }

  // In a narrow pane (a phone) the layers and classes fold away under a summary, start folded and open as a sheet over
  // the picture, so the picture and the sliders keep their room; a wide pane shows them above the sliders.
  const rows = el("div", "overlay-rows");
  const controls = el("div", "overlay-controls");
  const classesBox = el("details", "overlay-classes");
  const summary = el("summary", null, "layers and classes");
  const backgrounds = new Set(); // the mask classes 0 hidden by default
  let userFolded = false; // the user opened or closed the list: their choice stands, whatever the width
  classesBox.open = true;
  summary.addEventListener("click", () => { userFolded = true; });
  new ResizeObserver(() => {
    const narrow = legend.clientWidth > 0 && legend.clientWidth < NARROW_PX;
    if (narrow === legend.classList.contains("narrow")) return;
    legend.classList.toggle("narrow", narrow);
    if (!userFolded) classesBox.open = !narrow;
    place();
  }).observe(legend);

  function place() {
    const narrow = legend.classList.contains("narrow");
    const parts = narrow ? [controls, classesBox] : [rows, controls];
    if (narrow) classesBox.replaceChildren(summary, rows);
    legend.replaceChildren(...parts.filter((p) => p.childElementCount && (p !== classesBox || rows.childElementCount)));
    legend.hidden = !legend.childElementCount;
  }

  function hiddenCount() {
    // A mask's background, hidden by default, is not news: the count is of what the user hid.
    const n = state.hiddenLayers.size + [...state.hiddenClasses].filter((k) => !backgrounds.has(k)).length;
    summary.textContent = n ? `layers and classes · ${n} hidden` : "layers and classes";
  }

  function buildLegend() {
    const model = legendModel();
    const key = JSON.stringify([model.layers, Object.keys(model.scores), model.masks]);
    if (key === legendKey) {
      // A scrub over steps of the same classes: only the score ranges move.
      for (const [k, [lo, hi]] of Object.entries(model.scores)) setRange(k, lo, hi);
      return;
    }
    legendKey = key;
    controls.replaceChildren();
    rows.replaceChildren();
    for (const { kind, layer, classes } of model.layers) {
      // Class 0 of a mask is background by convention: shown only when asked, so the picture stays visible.
      if (kind === "masks" && !seen.has(layer)) {
        state.hiddenClasses.add(`${layer}:0`);
        backgrounds.add(`${layer}:0`);
      }
      seen.add(layer);
      const row = el("div", "overlay-layer");
      row.append(check(el("b", null, layer), !state.hiddenLayers.has(`${kind}:${layer}`),
        (on) => toggle(`${kind}:${layer}`, on), { layer, kind }));
      for (const [id, name] of classes) {
        const chip = el("span", "overlay-chip");
        chip.style.background = classColor(id);
        const hideKey = `${layer}:${id}`;
        row.append(check([chip, document.createTextNode(name)].reduce((f, n) => (f.append(n), f),
          document.createDocumentFragment()), !state.hiddenClasses.has(hideKey), (on) => {
          if (on) state.hiddenClasses.delete(hideKey); else state.hiddenClasses.add(hideKey);
          if (kind === "boxes") boxesDirty = true;
          hiddenCount();
          draw();
        }, { layer, classId: String(id) }));
      }
      rows.append(row);
    }
    for (const [k, [lo, hi]] of Object.entries(model.scores)) {
      const row = el("label", "overlay-threshold");
      const slider = el("input");
      slider.type = "range";
      slider.dataset.score = k;
      const value = el("span", "overlay-threshold-value");
      scoreSliders[k] = { slider, value };
      setRange(k, lo, hi);
      slider.addEventListener("input", () => {
        state.thresholds[k] = Number(slider.value);
        value.textContent = `≥ ${Number(slider.value).toPrecision(3)}`;
        boxesDirty = true;
        draw();
      });
      row.append(el("span", null, k), slider, value);
      controls.append(row);
    }
    if (model.masks) {
      const row = el("label", "overlay-threshold");
      const slider = el("input");
      slider.type = "range";
      slider.min = "0";
      slider.max = "1";
      slider.step = "0.05";
      slider.value = String(state.opacity);
      slider.dataset.opacity = "";
      slider.addEventListener("input", () => { state.opacity = Number(slider.value); draw(); });
      row.append(el("span", null, "mask opacity"), slider);
      controls.append(row);
    }
    place();
    hiddenCount();
  }

  /** Where a pointer event falls in the image's pixels (the canvas is drawn with object-fit: contain). */
  function pixelOf(ev) {
    const r = canvas.getBoundingClientRect();
    const s = Math.min(r.width / canvas.width, r.height / canvas.height);
    const ox = (r.width - canvas.width * s) / 2;
    const oy = (r.height - canvas.height * s) / 2;
    return [(ev.clientX - r.left - ox) / s, (ev.clientY - r.top - oy) / s];
  }

  canvas.addEventListener("mousemove", (ev) => {
    const [x, y] = pixelOf(ev);
    const hits = visibleBoxes().filter(({ box: { xyxy: [x0, y0, x1, y1] } }) => x >= x0 && x <= x1 && y >= y0 && y <= y1);
    hits.sort((a, b) => area(a.box) - area(b.box)); // the smallest box under the pointer is the one meant
    const hit = hits[0];
    tip.classList.toggle("idle", !hit);
    if (!hit) return;
    const { box, label, layer } = hit;
    const scores = Object.entries(box.scores || {}).map(([k, v]) => `${k} ${Number(v).toPrecision(3)}`).join(", ");
    tip.textContent = [`${layer}: ${label ?? box.class_id}`, scores, box.caption].filter(Boolean).join(" · ");
  });
  canvas.addEventListener("mouseleave", () => tip.classList.add("idle"));
  const area = (b) => (b.xyxy[2] - b.xyxy[0]) * (b.xyxy[3] - b.xyxy[1]);

  /** Show `r`'s overlays over a picture of r.width × r.height; `url` resolves a mask's src. */
  api.show = async (r, url) => {
    const t0 = performance.now();
    rec = r;
    const mine = ++token;
    delete canvas.dataset.ready;
    const w = Number(r.width) || 1;
    const h = Number(r.height) || 1;
    // Setting a canvas's size clears and reallocates it: a step of the same size keeps it.
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    buildLegend();
    boxesDirty = true;
    const entries = Object.entries(r.overlays?.masks || {});
    // Masks decoded before (unchanged across steps) are at hand: one draw with them, not a box-only frame first.
    const known = entries.map(([, m]) => decodedMask(url(m.src)));
    if (known.every(Boolean)) {
      masks = Object.fromEntries(entries.map(([layer], k) => [layer, known[k]]));
    } else {
      masks = {};
      draw();
      const loaded = await Promise.all(entries.map(([, m]) => loadMask(url(m.src)).catch(() => null)));
      if (mine !== token) return;
      entries.forEach(([layer], k) => { if (loaded[k]) masks[layer] = loaded[k]; });
    }
    draw();
    api.firstDrawMs = performance.now() - t0;
    canvas.dataset.firstDrawMs = api.firstDrawMs.toFixed(2);
    canvas.dataset.ready = "1";
  };
  // A caller that set `state` itself (Compare's shared legend) may have changed which boxes show: paint them again.
  api.redraw = () => { boxesDirty = true; draw(); };
  return api;
}
