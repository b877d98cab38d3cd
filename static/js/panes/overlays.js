// panes/overlays.js — boxes and masks drawn over a media image from their data, with a legend that toggles each layer and
// class, a score threshold per score key, a mask opacity, and hover text (class, scores, caption).

const PALETTE = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#bfef45", "#fabed4",
  "#469990", "#dcbeff", "#9a6324", "#fffac8", "#800000", "#aaffc3", "#808000", "#ffd8b1", "#000075", "#a9a9a9", "#ffe119"];

/** The colour of a class id: the same id has the same colour in every layer and image. */
export function classColor(id) {
  return PALETTE[Math.abs(Number(id) || 0) % PALETTE.length];
}

const rgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
const maskIds = new Map(); // mask PNG URL -> Promise<{w, h, ids: Uint8Array}> (masks are content-addressed: never change)

function loadMask(url) {
  if (!maskIds.has(url)) {
    maskIds.set(url, new Promise((resolve, reject) => {
      const img = new Image();
      img.onload = () => {
        const c = document.createElement("canvas");
        c.width = img.naturalWidth;
        c.height = img.naturalHeight;
        const g = c.getContext("2d", { willReadFrequently: true });
        g.drawImage(img, 0, 0);
        const rgba = g.getImageData(0, 0, c.width, c.height).data;
        const ids = new Uint8Array(c.width * c.height);
        for (let i = 0; i < ids.length; i++) ids[i] = rgba[i * 4]; // a grey PNG: R is the class id
        resolve({ w: c.width, h: c.height, ids });
      };
      img.onerror = () => { maskIds.delete(url); reject(new Error(`mask ${url} did not load`)); };
      img.src = url;
    }));
  }
  return maskIds.get(url);
}

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
  const tip = el("div", "overlay-tip");
  tip.hidden = true;
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

  function draw() {
    const t0 = performance.now();
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, canvas.width, canvas.height);
    for (const [layer, data] of Object.entries(rec?.overlays?.masks || {})) {
      const m = masks[layer];
      if (!m || state.hiddenLayers.has(`masks:${layer}`) || m.w !== canvas.width || m.h !== canvas.height) continue;
      const lut = new Uint32Array(256); // class id -> RGBA (little-endian ABGR), 0 where hidden
      for (const id of data.classes || []) {
        if (state.hiddenClasses.has(`${layer}:${id}`)) continue;
        const [r, gr, b] = rgb(classColor(id));
        lut[id] = ((Math.round(255 * state.opacity) << 24) | (b << 16) | (gr << 8) | r) >>> 0;
      }
      const out = new ImageData(m.w, m.h);
      const px = new Uint32Array(out.data.buffer);
      const ids = m.ids;
      for (let i = 0; i < ids.length; i++) px[i] = lut[ids[i]];
      const tmp = document.createElement("canvas");
      tmp.width = m.w;
      tmp.height = m.h;
      tmp.getContext("2d").putImageData(out, 0, 0);
      g.drawImage(tmp, 0, 0);
    }
    const line = Math.max(1, Math.round(Math.max(canvas.width, canvas.height) / 300));
    g.lineWidth = line;
    const fontPx = Math.max(9, Math.round(Math.max(canvas.width, canvas.height) / 40));
    g.font = `${fontPx}px sans-serif`;
    g.textBaseline = "bottom";
    for (const { box, label } of visibleBoxes()) {
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
    api.drawMs = performance.now() - t0;
    canvas.dataset.drawMs = api.drawMs.toFixed(2);
    canvas.dataset.boxes = String(visibleBoxes().length);
  }

  function toggle(key, on) {
    if (on) state.hiddenLayers.delete(key); else state.hiddenLayers.add(key);
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

  function buildLegend() {
    legend.replaceChildren();
    const ov = rec?.overlays || {};
    const scoreRange = {};
    for (const kind of ["masks", "boxes"]) {
      for (const [layer, data] of Object.entries(ov[kind] || {})) {
        // Class 0 of a mask is background by convention: shown only when asked, so the picture stays visible.
        if (kind === "masks" && !seen.has(layer)) state.hiddenClasses.add(`${layer}:0`);
        seen.add(layer);
        const row = el("div", "overlay-layer");
        row.append(check(el("b", null, layer), !state.hiddenLayers.has(`${kind}:${layer}`),
          (on) => toggle(`${kind}:${layer}`, on), { layer, kind }));
        const ids = kind === "masks" ? data.classes || []
          : [...new Set((data.boxes || []).map((b) => b.class_id))].sort((a, b) => a - b);
        for (const id of ids) {
          const name = (data.class_labels || {})[id] ?? String(id);
          const chip = el("span", "overlay-chip");
          chip.style.background = classColor(id);
          const key = `${layer}:${id}`;
          row.append(check([chip, document.createTextNode(name)].reduce((f, n) => (f.append(n), f),
            document.createDocumentFragment()), !state.hiddenClasses.has(key), (on) => {
            if (on) state.hiddenClasses.delete(key); else state.hiddenClasses.add(key);
            draw();
          }, { layer, classId: String(id) }));
        }
        for (const b of data.boxes || []) {
          for (const [k, v] of Object.entries(b.scores || {})) {
            const r = scoreRange[k] || (scoreRange[k] = [v, v]);
            r[0] = Math.min(r[0], v);
            r[1] = Math.max(r[1], v);
          }
        }
        legend.append(row);
      }
    }
    for (const [k, [lo, hi]] of Object.entries(scoreRange)) {
      const row = el("label", "overlay-threshold");
      const slider = el("input");
      slider.type = "range";
      slider.min = String(lo);
      slider.max = String(hi);
      slider.step = String((hi - lo) / 100 || 1);
      slider.value = String(Math.max(lo, Math.min(hi, state.thresholds[k] ?? lo)));
      slider.dataset.score = k;
      const value = el("span", "overlay-threshold-value", `≥ ${Number(slider.value).toPrecision(3)}`);
      slider.addEventListener("input", () => {
        state.thresholds[k] = Number(slider.value);
        value.textContent = `≥ ${Number(slider.value).toPrecision(3)}`;
        draw();
      });
      row.append(el("span", null, k), slider, value);
      legend.append(row);
    }
    if (Object.keys(ov.masks || {}).length) {
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
      legend.append(row);
    }
    legend.hidden = !legend.childElementCount;
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
    tip.hidden = !hit;
    if (!hit) return;
    const { box, label, layer } = hit;
    const scores = Object.entries(box.scores || {}).map(([k, v]) => `${k} ${Number(v).toPrecision(3)}`).join(", ");
    tip.textContent = [`${layer}: ${label ?? box.class_id}`, scores, box.caption].filter(Boolean).join(" · ");
  });
  canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
  const area = (b) => (b.xyxy[2] - b.xyxy[0]) * (b.xyxy[3] - b.xyxy[1]);

  /** Show `r`'s overlays over a picture of r.width × r.height; `url` resolves a mask's src. */
  api.show = async (r, url) => {
    rec = r;
    const mine = ++token;
    delete canvas.dataset.ready;
    canvas.width = Number(r.width) || 1;
    canvas.height = Number(r.height) || 1;
    buildLegend();
    masks = {};
    draw();
    const entries = Object.entries(r.overlays?.masks || {});
    const loaded = await Promise.all(entries.map(([, m]) => loadMask(url(m.src)).catch(() => null)));
    if (mine !== token) return;
    entries.forEach(([layer], k) => { if (loaded[k]) masks[layer] = loaded[k]; });
    draw();
    canvas.dataset.ready = "1";
  };
  api.redraw = draw;
  return api;
}
