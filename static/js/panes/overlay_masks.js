// panes/overlay_masks.js — mask PNGs decoded once per content address into class ids and per-class coloured canvases,
// so a class toggle or an opacity change only recomposites (drawImage) and a mask unchanged across steps decodes once.

const PALETTE = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#bfef45", "#fabed4",
  "#469990", "#dcbeff", "#9a6324", "#fffac8", "#800000", "#aaffc3", "#808000", "#ffd8b1", "#000075", "#a9a9a9", "#ffe119"];

/** The colour of a class id: the same id has the same colour in every layer and image. */
export function classColor(id) {
  return PALETTE[Math.abs(Number(id) || 0) % PALETTE.length];
}

const rgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
// Masks are content-addressed (their URL names their hash), so an entry never goes stale; the bound keeps a long scrub
// over many distinct masks from holding every decode.
const MAX_MASKS = 48;
// Per-class canvases cost the sum of the classes' bounding boxes; past this many image areas (a mask of many scattered
// classes) a layer is painted whole for each set of hidden classes instead.
const MAX_CLASS_AREA = 6;
const masks = new Map(); // mask URL -> Promise<Mask>
const decoded = new Map(); // mask URL -> Mask, for the masks in `masks` whose decode is done
// How many mask PNGs were decoded and class canvases painted, page-wide: tests check that steps and toggles reuse them.
export const maskStats = { decodes: 0, paints: 0 };

/** A decoded mask: its size, class ids per pixel, each class's bounding box, and coloured canvases made on demand. */
class Mask {
  constructor(w, h, ids) {
    this.w = w;
    this.h = h;
    this.ids = ids;
    // Bounding boxes in typed arrays: a Map lookup per pixel would cost more than the whole decode.
    const lo = new Int32Array(512).fill(1 << 30); // [x0, y0] per class id
    const hi = new Int32Array(512).fill(-1); // [x1, y1] per class id
    for (let y = 0, i = 0; y < h; y++) {
      for (let x = 0; x < w; x++, i++) {
        const k = ids[i] << 1;
        if (x < lo[k]) lo[k] = x;
        if (x > hi[k]) hi[k] = x;
        if (hi[k + 1] < 0) lo[k + 1] = y;
        hi[k + 1] = y;
      }
    }
    this.bounds = new Map(); // class id -> [x0, y0, x1, y1] inclusive
    for (let id = 0; id < 256; id++) {
      if (hi[2 * id] >= 0) this.bounds.set(id, [lo[2 * id], lo[2 * id + 1], hi[2 * id], hi[2 * id + 1]]);
    }
    let area = 0;
    for (const [x0, y0, x1, y1] of this.bounds.values()) area += (x1 - x0 + 1) * (y1 - y0 + 1);
    this.perClass = area <= MAX_CLASS_AREA * w * h;
    this.painted = new Map(); // class id (or "layer:<hidden key>") -> {x, y, canvas}
  }

  /** The pixels of the classes in `ids` in their colours, opaque, cropped to their bounding box. */
  paint(ids) {
    let [x0, y0, x1, y1] = [this.w, this.h, -1, -1];
    const lut = new Uint32Array(256); // class id -> RGBA (little-endian ABGR); 0 for classes not painted
    for (const id of ids) {
      const b = this.bounds.get(id);
      if (!b) continue;
      [x0, y0, x1, y1] = [Math.min(x0, b[0]), Math.min(y0, b[1]), Math.max(x1, b[2]), Math.max(y1, b[3])];
      const [r, g, bl] = rgb(classColor(id));
      lut[id] = ((255 << 24) | (bl << 16) | (g << 8) | r) >>> 0;
    }
    if (x1 < 0) return null;
    maskStats.paints += 1;
    const w = x1 - x0 + 1;
    const h = y1 - y0 + 1;
    const out = new ImageData(w, h);
    const px = new Uint32Array(out.data.buffer);
    const src = this.ids;
    for (let y = 0; y < h; y++) {
      const row = (y0 + y) * this.w + x0;
      const o = y * w;
      for (let x = 0; x < w; x++) px[o + x] = lut[src[row + x]];
    }
    const canvas = document.createElement("canvas");
    canvas.width = w;
    canvas.height = h;
    canvas.getContext("2d").putImageData(out, 0, 0);
    return { x: x0, y: y0, canvas };
  }

  /** The canvases to draw for the classes in `shown` (cached: a toggle then only recomposites). */
  layers(shown) {
    if (this.perClass) {
      const out = [];
      for (const id of shown) {
        if (!this.painted.has(id)) this.painted.set(id, this.paint([id]));
        const p = this.painted.get(id);
        if (p) out.push(p);
      }
      return out;
    }
    const key = `layer:${[...shown].sort((a, b) => a - b).join(",")}`;
    if (!this.painted.has(key)) {
      // One set of hidden classes per layer is kept: the one being looked at.
      for (const k of this.painted.keys()) if (typeof k === "string") this.painted.delete(k);
      this.painted.set(key, this.paint(shown));
    }
    const p = this.painted.get(key);
    return p ? [p] : [];
  }
}

async function decode(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`mask ${url}: HTTP ${res.status}`);
  // createImageBitmap decodes off the main thread; "none" keeps a grey PNG's values exact (no colour management).
  const bmp = await createImageBitmap(await res.blob(), { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  const c = document.createElement("canvas");
  c.width = bmp.width;
  c.height = bmp.height;
  const g = c.getContext("2d", { willReadFrequently: true });
  g.drawImage(bmp, 0, 0);
  bmp.close();
  const rgba = new Uint32Array(g.getImageData(0, 0, c.width, c.height).data.buffer);
  const ids = new Uint8Array(rgba.length);
  for (let i = 0; i < ids.length; i++) ids[i] = rgba[i] & 0xff; // a grey PNG: R (the low byte) is the class id
  maskStats.decodes += 1;
  return new Mask(c.width, c.height, ids);
}

/** The decoded mask at `url`, decoded at most once while it stays among the last MAX_MASKS used. */
export function loadMask(url) {
  let p = masks.get(url);
  if (p) masks.delete(url); // re-inserted below: the Map's order is the order of use
  else {
    p = decode(url).then((m) => { if (masks.get(url) === p) decoded.set(url, m); return m; },
      (err) => { masks.delete(url); throw err; });
  }
  masks.set(url, p);
  while (masks.size > MAX_MASKS) {
    const old = masks.keys().next().value;
    masks.delete(old);
    decoded.delete(old);
  }
  return p;
}

/** The mask at `url` if its decode is done (no waiting: a step whose masks are all known draws in one go). */
export function decodedMask(url) {
  const m = decoded.get(url);
  if (m) loadMask(url); // marks it used
  return m || null;
}
