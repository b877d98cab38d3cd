// panes/stepper.js — the step slider of stepped panes (media, pr_curve): every stored record, fetched one at a time.

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
 * GET .../panes/<win>/steps?i0=i&i1=i+1, at most one in flight: while dragging only the last position is read.
 */
export function stepper(ctx, show) {
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

  async function pump() {
    if (inflight) return;
    inflight = true;
    try {
      while (!destroyed && want >= 0 && String(want) !== el.dataset.index) {
        const i = want;
        const path = `api/v1/envs/${encodeURIComponent(ctx.env)}/panes/${encodeURIComponent(ctx.win)}/steps?i0=${i}&i1=${i + 1}`;
        const res = await fetch(ctx.url(path), { cache: "no-store", headers: { Accept: "application/json" } });
        if (!res.ok) throw new Error(`step read failed: ${res.status}`);
        const body = await res.json();
        const rec = body && Array.isArray(body.records) ? body.records[0] : null;
        if (destroyed) return;
        if (!rec) throw new Error(`no record ${i}`);
        if (want === i) await shown(rec, i);
      }
    } catch (err) {
      ctx.setInfo("step read failed", err && err.message);
    } finally {
      inflight = false;
    }
  }

  slider.addEventListener("input", () => {
    const i = Number(slider.value);
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
