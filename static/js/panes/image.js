// panes/image.js — image panes: an <img> of the stored blob (data.src, relative to the base URL) with opts.caption;
// a pane with data.history (Visdom's store_history) gets a slider over its images, newest selected. Clicks (in image
// pixels) and keys go to Visdom clients' handlers.
import { reportKeys, sendEvent } from "./visdom_events.js";

const SMALL = 256; // images narrower than this are scaled up by an integer factor, pixelated (MNIST-sized grids)
// Pictures up to this size are drawn with nearest-neighbour filtering when a pane card scales them up to fill it
// (kernels, feature maps, first-batch grids): blurred, a 4x4 kernel is unreadable.
const PIXEL_ART = 512;

/** Give `img` its natural size; small pictures are scaled up by an integer factor, pixelated (MNIST grids). */
export function sizeImage(img, width, height) {
  const w = Number(width) || 0;
  const h = Number(height) || 0;
  if (!(w > 0 && h > 0)) return;
  img.width = w;
  img.height = h;
  const k = w < SMALL ? Math.max(1, Math.floor(SMALL / w)) : 1;
  img.style.width = k > 1 ? `${w * k}px` : "";
  img.classList.toggle("pixelated", k > 1 || (w <= PIXEL_ART && h <= PIXEL_ART));
}

/** Hover text of a picture the SDK min–max normalised: the range its values had (docs: images). */
export function rangeNote(range) {
  if (!Array.isArray(range) || range.length !== 2) return "";
  const [lo, hi] = range.map(Number);
  return `values ${lo.toPrecision(4)} … ${hi.toPrecision(4)}, min–max normalised to 0–255`;
}

/** Where a click at (offsetX, offsetY) falls in the image's own pixels, for an <img> drawn with object-fit: contain. */
export function imagePixel(img, offsetX, offsetY) {
  const w = img.naturalWidth || img.width;
  const h = img.naturalHeight || img.height;
  const cw = img.clientWidth || 1;
  const ch = img.clientHeight || 1;
  const fit = getComputedStyle(img).objectFit === "contain";
  const scale = fit ? Math.min(cw / w, ch / h) : cw / w;
  const sy = fit ? scale : ch / h;
  const left = fit ? (cw - w * scale) / 2 : 0;
  const top = fit ? (ch - h * scale) / 2 : 0;
  const clamp = (v, n) => Math.max(0, Math.min(n - 1, Math.floor(v)));
  return { x: clamp((offsetX - left) / scale, w), y: clamp((offsetY - top) / sy, h) };
}

export function render(el, pane, ctx) {
  const fig = document.createElement("figure");
  fig.className = "image-pane";
  const img = document.createElement("img");
  img.decoding = "async";
  const cap = document.createElement("figcaption");
  const err = document.createElement("div");
  err.className = "pane-error";
  err.hidden = true;
  const slider = document.createElement("input");
  slider.type = "range";
  slider.className = "image-history";
  slider.min = "0";
  slider.hidden = true;
  fig.append(img, cap, slider, err);
  el.appendChild(fig);

  img.addEventListener("load", () => {
    err.hidden = true;
  });
  img.addEventListener("error", () => {
    err.hidden = false;
    err.textContent = "image failed to load";
  });

  const unkeys = reportKeys(fig, ctx);
  img.addEventListener("click", (e) => {
    sendEvent(ctx, { event_type: "Click", image_coord: imagePixel(img, e.offsetX, e.offsetY) });
  });

  let history = [];
  let current = null;

  slider.addEventListener("input", () => {
    const h = history[Number(slider.value)];
    if (h) show(current, { ...current.data, ...h, caption: h.caption }, true);
  });

  function set(p) {
    const d = p.data || {};
    current = p;
    history = Array.isArray(d.history) ? d.history : [];
    slider.hidden = history.length < 2;
    slider.max = String(Math.max(history.length - 1, 0));
    slider.value = slider.max; // a new image arrived: show the newest
    slider.title = `image ${history.length} of ${history.length}`;
    show(p, d, false);
  }

  function show(p, d, fromSlider) {
    const src = typeof d.src === "string" && d.src ? (/^(data|blob):/.test(d.src) ? d.src : ctx.url(d.src)) : "";
    sizeImage(img, d.width, d.height);
    if (src && img.getAttribute("src") !== src) img.src = src;
    const c = fromSlider ? d.caption : p.opts && p.opts.caption;
    const caption = c != null ? String(c) : "";
    if (fromSlider) slider.title = `image ${Number(slider.value) + 1} of ${history.length}`;
    cap.textContent = caption;
    cap.hidden = !caption;
    img.alt = caption || p.title || p.win || "image";
    img.title = rangeNote(p.opts && p.opts.value_range);
    const w = Number(d.width) || 0;
    const h = Number(d.height) || 0;
    ctx.setInfo(w && h ? `${w}×${h}` : "", d.mime || "");
  }

  set(pane);
  return {
    ready: Promise.resolve(),
    update: set,
    extend: () => ctx.refetch(),
    destroy: () => {
      unkeys();
      fig.remove();
    },
  };
}
