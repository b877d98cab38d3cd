// panes/stepper.js — the step slider of stepped panes (media, pr_curve): every stored record, read a window at a time
// around the slider and kept, so a scrub shows cached records and prefetches the ones ahead.

/** "2026-11-22 14:03:07" in local time for a wall time in seconds since the epoch ("" when unknown). */
export function fmtWall(wall) {
  const t = Number(wall);
  if (!Number.isFinite(t)) return "";
  const d = new Date(t * 1000);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * A slider over all `data.count` records of a stepped pane (WIRE.md "Stepped kinds") calling show(record) with the
 * rendered record at the chosen index. The newest record is shown (from data.latest, no extra read) until the user
 * moves the slider; moving it back to the end follows new records again. Reads go through
 * GET .../panes/<win>/steps?i0=&i1= a window of WINDOW records ahead of the slider's move, at most one in flight: while
 * dragging only the last position is shown (stale frames are dropped). `prefetch(rec)`, when given, is called for
 * records read but not shown yet (a media pane starts loading their pictures).
 */
const WINDOW = 8; // records per read: a scrub's next steps arrive with the one asked for
const KEEP = 256; // records kept by index; a record is a few KB (an image's boxes at most tens)

export function stepper(ctx, show, prefetch = null) {
  const slider = document.createElement("input");
  slider.type = "range";
  slider.className = "step-slider";
  slider.min = "0";
  slider.step = "1";
  slider.setAttribute("aria-label", "step");
  const label = document.createElement("span");
  label.className = "step-label";
  const wall = document.createElement("span");
  wall.className = "step-wall";
  const el = document.createElement("div");
  el.className = "step-bar";
  el.append(slider, label, wall);

  let steps = [];
  let walls = [];
  let pinned = false; // the user chose a record other than the newest
  let want = -1; // the index the slider asks for
  let inflight = false;
  let destroyed = false;
  let dir = 1; // the way the slider last moved: the window read reaches that way
  const kept = new Map(); // record index -> record, valid while steps[i] and walls[i] still describe it

  function cached(i) {
    const rec = kept.get(i);
    return rec && rec.step === steps[i] && (walls[i] === undefined || rec.wall === walls[i]) ? rec : null;
  }

  async function read(i0, i1) {
    const path = `api/v1/envs/${encodeURIComponent(ctx.env)}/panes/${encodeURIComponent(ctx.win)}/steps?i0=${i0}&i1=${i1}`;
    const res = await fetch(ctx.url(path), { cache: "no-store", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`step read failed: ${res.status}`);
    const body = await res.json();
    const recs = body && Array.isArray(body.records) ? body.records : [];
    recs.forEach((rec, k) => {
      kept.delete(i0 + k);
      kept.set(i0 + k, rec);
    });
    while (kept.size > KEEP) kept.delete(kept.keys().next().value);
    prefetchAround(want);
  }

  /** Hand the kept records just past i (the way the slider moves) to `prefetch`: their pictures load meanwhile. */
  function prefetchAround(i) {
    if (!prefetch || i < 0) return;
    for (let k = 1; k <= WINDOW; k++) {
      const rec = cached(i + dir * k);
      if (rec) prefetch(rec);
    }
  }

  /** The window to read for index i: WINDOW records starting at i, reaching the way the slider moves. */
  function windowOf(i) {
    const n = steps.length;
    const i0 = dir > 0 ? i : Math.max(0, i - WINDOW + 1);
    return [i0, Math.min(n, i0 + WINDOW)];
  }

  function labelFor(i, rec) {
    const step = rec ? rec.step : steps[i];
    const w = rec ? rec.wall : walls[i];
    label.textContent = step === undefined ? "" : `step ${step}`;
    wall.textContent = fmtWall(w);
    wall.title = `record ${i + 1} of ${steps.length}`;
  }

  async function shown(rec, i) {
    el.dataset.index = String(i);
    el.dataset.step = String(rec.step);
    labelFor(i, rec);
    await show(rec);
  }

  let ahead = null; // the read-ahead in flight, if any: one at a time, never holding up what the slider asks for

  /** Read the window past i the way the slider moves, so the next steps are at hand when asked for. */
  function readAhead(i) {
    const next = i + dir * Math.ceil(WINDOW / 2);
    if (ahead || destroyed || next < 0 || next >= steps.length || cached(next)) return;
    ahead = read(...windowOf(next)).catch(() => {}).finally(() => { ahead = null; });
  }

  async function pump() {
    if (inflight) return;
    inflight = true;
    try {
      while (!destroyed && want >= 0 && String(want) !== el.dataset.index) {
        const i = want;
        if (!cached(i) && ahead) await ahead; // it may be reading this very record
        if (!cached(i)) await read(...windowOf(i));
        if (destroyed) return;
        const rec = cached(i);
        if (!rec) throw new Error(`no record ${i}`);
        if (want === i) {
          prefetchAround(i);
          await shown(rec, i);
        }
        readAhead(i);
      }
    } catch (err) {
      ctx.setInfo("step read failed", err && err.message);
    } finally {
      inflight = false;
    }
  }

  slider.addEventListener("input", () => {
    const i = Number(slider.value);
    if (i !== want) dir = i > want ? 1 : -1;
    pinned = i < steps.length - 1;
    want = i;
    labelFor(i, null); // the step is known at once; the record follows
    pump();
  });

  /** A (re)fetched pane: take its steps; show its latest record unless the user pinned an older one. */
  async function set(pane) {
    const d = pane.data || {};
    steps = Array.isArray(d.steps) ? d.steps : [];
    walls = Array.isArray(d.walls) ? d.walls : [];
    const n = steps.length;
    slider.max = String(Math.max(n - 1, 0));
    slider.disabled = n < 2;
    el.hidden = n === 0;
    if (!pinned && d.latest) {
      slider.value = String(n - 1);
      want = n - 1;
      await shown(d.latest, n - 1);
    } else if (pinned) {
      // A `set` may have replaced every record: read the chosen index again (clamped to what is stored now).
      want = Math.min(Number(slider.value), n - 1);
      slider.value = String(want);
      delete el.dataset.index;
      await pump();
    }
  }

  return {
    el,
    set,
    destroy() {
      destroyed = true;
      el.remove();
    },
  };
}
