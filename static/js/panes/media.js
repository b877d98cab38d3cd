// panes/media.js — media panes (TensorBoard images, audio, text per step): the record at the slider's step, newest by default.
import { rangeNote, sizeImage } from "./image.js";
import { stepper } from "./stepper.js";
import { counted } from "../dom.js";
import { overlayLayer } from "./overlays.js";
import { loadMask } from "./overlay_masks.js";
import { panZoom } from "./panzoom.js";
import { indicesAt, mediaList } from "./media_list.js";

// Pictures of steps read ahead of the slider, decoded and held (by URL: blobs are content-addressed) so a scrub shows
// them from memory; the oldest go first.
const AHEAD = 24;
const pictures = new Map(); // URL -> decoded HTMLImageElement

function preload(src) {
  if (!src || pictures.has(src)) return;
  const img = new Image();
  img.decoding = "async";
  img.src = src;
  img.decode().catch(() => pictures.delete(src));
  pictures.set(src, img);
  while (pictures.size > AHEAD) pictures.delete(pictures.keys().next().value);
}


export function render(el, pane, ctx) {
  const box = document.createElement("figure");
  box.className = "media-pane";
  const content = document.createElement("div");
  content.className = "media-content";
  const cap = document.createElement("figcaption");
  cap.className = "media-caption";
  box.append(content, cap);
  const steps = stepper(ctx, show, (rec) => {
    if ((rec.type || pane.data?.type || "image") !== "image") return;
    preload(srcOf(rec));
    for (const m of Object.values(rec.overlays?.masks || {})) loadMask(ctx.url(m.src)).catch(() => {});
  });
  const wrap = document.createElement("div");
  wrap.className = "stepped-pane"; // a flex column: the slider stays in view below a tall image or text
  wrap.append(box, steps.el);
  el.append(wrap);

  let kind = null; // the element type shown now: one <img> or <audio> is reused across steps
  let media = null;
  let overlay = null; // boxes and masks over the picture, made with the first record that has any
  let shownToken = 0; // a newer show() makes an older one's picture stale: it stops before marking its frame

  /** The record's blob URL: relative to the base URL unless it is a data:/blob: URI. */
  const srcOf = (rec) => (typeof rec.src === "string" && rec.src
    ? (/^(data|blob):/.test(rec.src) ? rec.src : ctx.url(rec.src)) : "");

  function element(type) {
    if (kind === type) return media;
    kind = type;
    if (type === "image") {
      media = document.createElement("img");
      media.decoding = "async";
      // The picture and its overlay canvas move together: pan and zoom transform the stage, the content clips it.
      const stage = document.createElement("div");
      stage.className = "media-stage";
      stage.append(media);
      if (overlay) stage.append(overlay.canvas); // back from a list grid: the overlay rides on the new stage
      content.replaceChildren(stage);
      panZoom(content, stage);
      return media;
    } else if (type === "audio") {
      media = document.createElement("audio");
      media.controls = true;
      media.preload = "metadata";
    } else {
      media = document.createElement("div");
      media.className = "media-text";
    }
    content.replaceChildren(media);
    return media;
  }

  async function show(rec) {
    const mine = ++shownToken;
    const type = rec.type || pane.data?.type || "image";
    const listed = type === "image" ? indicesAt(pane.data?.steps, rec.step) : [];
    if (listed.length > 1) { // a list of pictures at this step: the grid of all of them
      if (kind !== "list") {
        kind = "list";
        media = mediaList();
        content.replaceChildren(media.el);
      }
      // The single picture's legend and tip belong to a single picture: the grid has its own legend.
      if (overlay) overlay.legend.hidden = overlay.tip.hidden = true;
      await media.show(listed, ctx);
      if (mine !== shownToken) return;
      cap.hidden = true;
      box.dataset.type = "list";
      return;
    }
    const m = element(type);
    if (type === "image") {
      sizeImage(m, rec.width, rec.height);
      const src = srcOf(rec);
      if (m.getAttribute("src") !== src) {
        m.src = src;
        // The picture and its overlay change together; a picture read ahead is decoded already.
        await m.decode().catch(() => {});
        if (mine !== shownToken) return;
      }
      m.alt = rec.caption ? String(rec.caption) : `step ${rec.step}`;
      m.title = rangeNote(rec.value_range);
      if (rec.overlays && !overlay) {
        overlay = overlayLayer();
        m.parentElement.append(overlay.canvas);
        box.append(overlay.tip, overlay.legend);
      }
      if (overlay) {
        overlay.canvas.hidden = overlay.legend.hidden = overlay.tip.hidden = !rec.overlays;
        if (rec.overlays) await overlay.show(rec, (src) => ctx.url(src));
        if (mine !== shownToken) return;
      }
      box.dataset.frame = String(rec.step); // picture and overlay of this step are on screen
    } else if (type === "audio") {
      const src = srcOf(rec);
      if (m.getAttribute("src") !== src) m.src = src;
      m.title = rec.sample_rate ? `${rec.sample_rate} Hz` : "";
    } else {
      // rec.html is sanitized by the server (as a text pane's data.html); the CSP forbids inline scripts on top.
      m.innerHTML = typeof rec.html === "string" ? rec.html : "";
    }
    const caption = rec.caption != null ? String(rec.caption) : "";
    cap.textContent = caption;
    cap.hidden = !caption;
    box.dataset.type = type;
  }

  function set(p) {
    pane = p;
    const d = p.data || {};
    ctx.setInfo(counted(Number(d.count) || 0, "step"), d.type || "");
    return steps.set(p);
  }

  return {
    ready: set(pane),
    update: set,
    extend: () => ctx.refetch(), // new records come as `pane` messages; anything else: refetch
    destroy() {
      steps.destroy();
      wrap.remove();
    },
  };
}
