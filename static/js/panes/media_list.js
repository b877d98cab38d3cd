// panes/media_list.js — a step's list of pictures (W&B's wandb.log({"examples": [Image, ...]}) stores one record each,
// all at that step): drawn as a grid with a caption under each, the pane's step slider moving the whole grid.

const MAX_SHOWN = 100; // records of one step read at once (the /steps API's cap per request)

/** Indices of the records at `step` (a list logged at one step), from the pane's step index. */
export function indicesAt(steps, step) {
  const out = [];
  (Array.isArray(steps) ? steps : []).forEach((s, i) => { if (s === step) out.push(i); });
  return out;
}

/** A grid view: show(indices, ctx) reads those records (one request) and draws them; el is the grid. */
export function mediaList() {
  const el = document.createElement("div");
  el.className = "media-list";
  let token = 0;

  async function show(indices, ctx) {
    const mine = ++token;
    const i0 = indices[0];
    const i1 = Math.min(indices[indices.length - 1] + 1, i0 + MAX_SHOWN);
    const path = `api/v1/envs/${encodeURIComponent(ctx.env)}/panes/${encodeURIComponent(ctx.win)}/steps?i0=${i0}&i1=${i1}`;
    const res = await fetch(ctx.url(path), { cache: "no-store", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`step read failed: ${res.status}`);
    const body = await res.json();
    if (mine !== token) return;
    const wanted = new Set(indices);
    const recs = (body.records || []).filter((r) => wanted.has(r.index) && r.type === "image");
    el.replaceChildren(...recs.map((r) => {
      const fig = document.createElement("figure");
      fig.dataset.index = String(r.index);
      const img = document.createElement("img");
      img.decoding = "async";
      img.src = /^(data|blob):/.test(r.src) ? r.src : ctx.url(r.src);
      img.width = Number(r.width) || 0;
      img.height = Number(r.height) || 0;
      img.alt = r.caption != null ? String(r.caption) : `step ${r.step}`;
      img.classList.toggle("pixelated", img.width <= 512 && img.height <= 512);
      const cap = document.createElement("figcaption");
      cap.textContent = r.caption != null ? String(r.caption) : "";
      fig.append(img, cap);
      return fig;
    }));
    el.dataset.step = recs.length ? String(recs[0].step) : "";
    el.dataset.count = String(recs.length);
  }

  return { el, show };
}
