// pages/compare_images.js — Compare's "Images" section: one image tag of up to 16 runs side by side, one step slider for
// all (each run shows its last step at or before the slider's, else its first), synced pan/zoom, shared overlay toggles.
import * as api from "../api.js";
import { h } from "../dom.js";
import { runColor } from "../run_colors.js";
import { frameReader } from "./compare_frames.js";
import { overlayGroup } from "../panes/overlay_group.js";
import { panZoom } from "../panes/panzoom.js";

export const MAX_RUNS = 16; // the server's cap too: more cells would be thumbnails too small to compare
const PIXEL_ART = 512; // as image.js: small pictures scaled up stay sharp (nearest-neighbour)

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
  let reader = null; // the slider steps' answers (content-addressed pictures: valid until new data), read ahead
  let want = null; // the slider's step, null: the newest of each run
  let inflight = false;
  let shownKey = null;
  let generation = 0;
  let dir = 0; // the scrub's direction: +1 towards newer steps, -1 towards older, 0 not moved yet
  // Where a scrub's frames spend their time (ms summed over frames): bench/media_compare.py prints them.
  const timings = { frames: 0, read: 0, decode: 0, draw: 0 };
  el.timings = timings;

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
    const same = next.size === cells.size && [...next.keys()].every((env, i) => grid.children[i] === next.get(env).el);
    cells = next;
    if (!same) grid.replaceChildren(...[...cells.values()].map((c) => c.el)); // a scrub moves no DOM
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
    // "Ready" means drawn, not merely requested; a picture decoded ahead is complete as soon as its src is set.
    if (!c.img.complete) await c.img.decode().catch(() => {});
  }

  async function apply(res, key) {
    layoutCells(res.runs);
    await group.show(res.runs.map((r) => r.records[0]), url);
    await Promise.all(res.runs.map((r) => showCell(cells.get(r.env), r)));
    shownKey = key;
    el.dataset.step = key === null ? "" : String(key);
    el.dataset.ready = "1";
  }

  /** Show the slider's step; while one frame is in flight only the newest position is shown next (a drag skips). */
  async function pump() {
    if (inflight) return;
    inflight = true;
    const mine = generation;
    try {
      while (want !== shownKey && mine === generation) {
        const step = want;
        delete el.dataset.ready;
        const t0 = performance.now();
        const res = await reader.get(steps, step);
        const t1 = performance.now();
        // Decoded before the swap: every cell changes in the same paint, none waits on its decode.
        await reader.decodeAll(res);
        if (mine !== generation) return;
        // A frame the slider has left while it was read or decoded is dropped when the slider's own is at hand.
        if (step !== want && reader.isReady(want)) continue;
        const t2 = performance.now();
        await apply(res, step);
        timings.frames += 1;
        timings.read += t1 - t0;
        timings.decode += t2 - t1;
        timings.draw += performance.now() - t2;
        if (step !== null) reader.ahead(steps, steps.indexOf(step), dir);
      }
    } finally {
      inflight = false;
    }
  }

  slider.addEventListener("input", () => {
    const from = steps.indexOf(want);
    want = steps[Number(slider.value)] ?? null;
    const to = steps.indexOf(want);
    if (from >= 0 && to !== from) dir = Math.sign(to - from);
    stepLabel.textContent = want === null ? "" : `step ${want}`;
    pump();
  });

  tagPick.addEventListener("change", () => { tag = tagPick.value; load(); });

  /** Read the tags and every run's steps again (new runs, a new tag, new steps) and show the slider's step. */
  async function load() {
    const mine = ++generation;
    reader = frameReader(query, url);
    dir = 0;
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
    if (at === steps.length - 1) reader.seed(want, first);
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
