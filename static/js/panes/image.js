// panes/image.js — image panes: an <img> of the stored blob (data.src, relative to the base URL) with opts.caption.

const SMALL = 256; // images narrower than this are scaled up by an integer factor, pixelated (MNIST-sized grids)

export function render(el, pane, ctx) {
  const fig = document.createElement("figure");
  fig.className = "image-pane";
  const img = document.createElement("img");
  img.decoding = "async";
  const cap = document.createElement("figcaption");
  const err = document.createElement("div");
  err.className = "pane-error";
  err.hidden = true;
  fig.append(img, cap, err);
  el.appendChild(fig);

  img.addEventListener("load", () => {
    err.hidden = true;
  });
  img.addEventListener("error", () => {
    err.hidden = false;
    err.textContent = "image failed to load";
  });

  function set(p) {
    const d = p.data || {};
    const src = typeof d.src === "string" && d.src ? (/^(data|blob):/.test(d.src) ? d.src : ctx.url(d.src)) : "";
    const w = Number(d.width) || 0;
    const h = Number(d.height) || 0;
    if (w > 0 && h > 0) {
      img.width = w;
      img.height = h;
      const k = w < SMALL ? Math.max(1, Math.floor(SMALL / w)) : 1;
      img.style.width = k > 1 ? `${w * k}px` : "";
      img.classList.toggle("pixelated", k > 1);
    }
    if (src && img.getAttribute("src") !== src) img.src = src;
    const caption = p.opts && p.opts.caption != null ? String(p.opts.caption) : "";
    cap.textContent = caption;
    cap.hidden = !caption;
    img.alt = caption || p.title || p.win || "image";
    ctx.setInfo(w && h ? `${w}×${h}` : "", d.mime || "");
  }

  set(pane);
  return {
    ready: Promise.resolve(),
    update: set,
    extend: () => ctx.refetch(),
    destroy: () => fig.remove(),
  };
}
