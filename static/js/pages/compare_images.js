// pages/compare_images.js — Compare's "Images" section: one image tag of up to 16 runs side by side, one step slider for
// all (each run shows its last step at or before the slider's, else its first), synced pan/zoom, shared overlay toggles.
import * as api from "../api.js";
import { h } from "../dom.js";
import { runColor } from "../run_colors.js";
import { overlayGroup } from "../panes/overlay_group.js";
import { panZoom } from "../panes/panzoom.js";

export const MAX_RUNS = 16; // the server's cap too: more cells would be thumbnails too small to compare
const PIXEL_ART = 512;
const AROUND = 16; // slider positions read ahead either side with each read (the server allows 32) // as image.js: small pictures scaled up stay sharp (nearest-neighbour)

/** One run's cell: a frame (clips) holding a stage (pan/zoom transforms it) with the picture and its overlay canvas. */
function makeCell(env, group) {
  const img = h("img", { decoding: "async", alt: env });
  const overlay = group.member(); // its own legend stays unused: the section's one legend drives every cell
  const stage = h("div", { class: "media-stage" }, img, overlay.canvas);
  const frame = h("div", { class: "media-content" }, stage);
  const stepEl = h("span", { class: "cell-step" });
  const more = h("span", { class: "cell-more" });
  const caption = h("figcaption", { class: "media-caption" });
  const el = h("figure", { class: "media-pane compare-image-cell", dataset: { env, type: "image" } },
    h("header", { class: "cell-head" }, h("span", { class: "chip", style: `background:${runColor(env)}` }),
      h("a", { class: "cell-env", href: api.envPageUrl(env), text: env, title: env }), stepEl, more),
    frame, caption, overlay.tip);
  return { env, el, img, overlay, stage, frame, stepEl, more, caption, zoom: panZoom(frame, stage) };
}

/** The section; setRuns(envs) shows the first 16 of them, refresh() rereads after new data. */
export function imagesSection() {
  const tagPick = h("select", { class: "images-tag", "aria-label": "image tag" });
  const slider = h("input", { type: "range", class: "step-slider images-step", min: "0", step: "1", "aria-label": "step" });
  const stepLabel = h("span", { class: "step-label" });
  const note = h("span", { class: "images-note", text: "each run: its last step at or before the slider's, else its first" });
  let cells = new Map(); // env -> cell
  const group = overlayGroup(() => [...cells.values()].map((c) => c.overlay));
  const grid = h("div", { class: "compare-images-grid" });
  const over = h("span", { class: "images-note images-over" });
  const el = h("section", { class: "compare-images", hidden: true },
    h("header", { class: "images-head" }, h("h3", { text: "Images" }), tagPick, slider, stepLabel),
    note, over, group.legend, grid);
  let envs = [];
  let tag = null;
  let steps = []; // the union of every run's steps: the slider's positions
  let cache = new Map(); // slider step -> the answer (content-addressed pictures: stays valid until new data)
  let want = null; // the slider's step, null: the newest of each run
  let inflight = false;
  let shownKey = null;
  let generation = 0;

  const url = (path) => api.url(path);
  const query = (step) => `api/v1/compare/images?envs=${api.envsQuery(envs)}${tag ? `&tag=${encodeURIComponent(tag)}` : ""}`
    + (step === null ? "" : `&step=${encodeURIComponent(step)}`);

  // Zoom and pan of one cell apply to all: every cell has the same box, so the same transform shows the same region.
  function syncZoom(from) {
    for (const c of cells.values()) {
      if (c === from) continue;
      Object.assign(c.zoom.state, from.zoom.state);
      const s = c.zoom.state;
      c.stage.style.transform = s.k === 1 && !s.x && !s.y ? "" : `translate(${s.x}px, ${s.y}px) scale(${s.k})`;
      c.stage.dataset.zoom = s.k.toFixed(3);
    }
  }

  function layoutCells(runs) {
    const next = new Map();
    for (const r of runs) {
      let c = cells.get(r.env);
      if (!c) {
        c = makeCell(r.env, group);
        for (const ev of ["wheel", "pointermove", "dblclick"]) c.frame.addEventListener(ev, () => syncZoom(c));
      }
      next.set(r.env, c);
    }
    cells = next;
    grid.replaceChildren(...[...cells.values()].map((c) => c.el));
  }

  async function showCell(c, run) {
    const rec = run.records[0];
    c.el.dataset.step = run.step === null ? "" : String(run.step);
    c.stepEl.textContent = run.step === null ? "no pictures" : `step ${run.step}`;
    c.more.textContent = run.count > 1 ? `1 of ${run.count}` : "";
    c.caption.textContent = rec?.caption != null ? String(rec.caption) : (run.error || "");
    c.img.hidden = !rec;
    if (!rec) return;
    const w = Number(rec.width) || 0;
    const hgt = Number(rec.height) || 0;
    c.img.width = w;
    c.img.height = hgt;
    c.img.classList.toggle("pixelated", w <= PIXEL_ART && hgt <= PIXEL_ART);
    const src = url(rec.src);
    if (c.img.getAttribute("src") !== src) c.img.src = src;
    await group.draw(c.overlay, rec, url);
    await c.img.decode().catch(() => {}); // "ready" means drawn, not merely requested
  }

  async function apply(res, key) {
    layoutCells(res.runs);
    await group.show(res.runs.map((r) => r.records[0]), url);
    await Promise.all(res.runs.map((r) => showCell(cells.get(r.env), r)));
    shownKey = key;
    el.dataset.step = key === null ? "" : String(key);
    el.dataset.ready = "1";
  }

  /** The answer for a slider step; each read brings AROUND positions either side too, cached for the scrub. */
  function fetchStep(step) {
    const key = step === null ? "latest" : String(step);
    if (!cache.has(key)) {
      const read = api.getJson(`${query(step)}&around=${AROUND}`);
      cache.set(key, read.catch((err) => { cache.delete(key); throw err; }));
      read.then((res) => {
        for (const f of res.frames || []) {
          if (cache.has(String(f.step))) continue;
          cache.set(String(f.step), Promise.resolve(f));
          // The pictures into the HTTP cache too (blobs are content-addressed, cached for good): a scrub then only decodes.
          for (const r of f.runs) if (r.records[0]) new Image().src = url(r.records[0].src);
        }
      }, () => {});
    }
    return cache.get(key);
  }

  /** Read ahead before the scrub gets there: the position half a read-ahead away, either way, once. */
  function readAhead(step) {
    const at = steps.indexOf(step);
    for (const i of [at + AROUND / 2, at - AROUND / 2]) {
      if (i >= 0 && i < steps.length && !cache.has(String(steps[i]))) fetchStep(steps[i]).catch(() => {});
    }
  }

  /** Show the slider's step; while one read is in flight only the newest position is read next (a drag skips). */
  async function pump() {
    if (inflight) return;
    inflight = true;
    const mine = generation;
    try {
      while (want !== shownKey && mine === generation) {
        const step = want;
        delete el.dataset.ready;
        const res = await fetchStep(step);
        if (mine !== generation) return;
        await apply(res, step);
        if (step !== null) readAhead(step);
      }
    } finally {
      inflight = false;
    }
  }

  slider.addEventListener("input", () => {
    want = steps[Number(slider.value)] ?? null;
    stepLabel.textContent = want === null ? "" : `step ${want}`;
    pump();
  });

  tagPick.addEventListener("change", () => { tag = tagPick.value; load(); });

  /** Read the tags and every run's steps again (new runs, a new tag, new steps) and show the slider's step. */
  async function load() {
    const mine = ++generation;
    cache = new Map();
    shownKey = undefined;
    if (!envs.length) {
      el.hidden = true;
      return;
    }
    const first = await api.getJson(query(null));
    if (mine !== generation) return;
    el.hidden = !first.tags.length;
    if (!first.tags.length) return;
    tag = first.tag;
    tagPick.replaceChildren(...first.tags.map((t) => h("option", { value: t.tag, text: `${t.tag} (${t.runs})` })));
    tagPick.value = tag;
    steps = [...new Set(first.runs.flatMap((r) => r.steps))].sort((a, b) => a - b);
    slider.max = String(Math.max(steps.length - 1, 0));
    slider.disabled = steps.length < 2;
    const at = want === null || !steps.includes(want) ? steps.length - 1 : steps.indexOf(want);
    slider.value = String(at);
    want = steps[at] ?? null;
    stepLabel.textContent = want === null ? "" : `step ${want}`;
    // Without ?step each run showed its newest: the same pictures as at the union's newest step, read once.
    if (at === steps.length - 1) cache.set(String(want), Promise.resolve(first));
    await pump();
  }

  return {
    el,
    setRuns(list) {
      const next = list.slice(0, MAX_RUNS);
      // Say which runs the grid leaves out, rather than taking the first 16 silently.
      over.textContent = list.length > MAX_RUNS
        ? `showing the first ${MAX_RUNS} of ${list.length} shown runs: hide runs in the selector to choose others` : "";
      if (next.join("\n") === envs.join("\n")) return Promise.resolve();
      envs = next;
      return load();
    },
    refresh: () => load(),
  };
}
