// pages/env_extends.js — live "extend" messages of the env page: queued per pane, merged, applied in budgeted frames.
import { createSlot, fetchPane, runNow } from "./env_slots.js";

/** Queue an extend message for its pane; a pane out of view or far behind is refetched whole instead. */
export function onExtend(page, m) {
  const slot = page.slots.get(m.win);
  if (!slot) {
    fetchPane(page, createSlot(page, m.win)); // a pane we have not seen: fetch it whole (once in view)
    return;
  }
  if (!slot.fetching && (!slot.visible || slot.stale)) {
    // Out of view: nothing to draw, so the extend only marks it stale; its refetch will hold these points.
    slot.pending = [];
    slot.pendingPoints = 0;
    fetchPane(page, slot);
    return;
  }
  slot.pending.push(m);
  for (const t of m.traces || []) slot.pendingPoints += Array.isArray(t.y) ? t.y.length : 0;
  if (slot.pendingPoints > 4 * page.points) {
    // Far behind (hidden tab, slow fetch): drop the backlog and take the downsampled pane instead.
    slot.pending = [];
    slot.pendingPoints = 0;
    fetchPane(page, slot);
    return;
  }
  schedule(page, slot);
}

/** Mark a slot as having pending extends: the page's frame queue applies them in a coming frame. */
export function schedule(page, slot) {
  page.frames.mark(slot);
}

/**
 * The frame queue's work for one slot: its pending extends merged into one view.extend (one extendTraces per pane
 * per frame at most). Returns the script milliseconds it took, or null while the slot cannot draw (a fetch in
 * flight reschedules it when done; a pane scrolled away has been marked stale and refetches when back in view).
 */
export function applyPending(page, slot) {
  if (slot.removed || slot.fetching || !slot.view) return null;
  const msgs = slot.pending.filter((m) => !Number.isFinite(m.version) || m.version > slot.version);
  slot.pending = [];
  slot.pendingPoints = 0;
  if (!msgs.length) return 0;
  const merged = mergeExtends(msgs, slot.version);
  slot.version = merged.version;
  const t0 = performance.now();
  runNow(slot, () => slot.view.extend(merged));
  return performance.now() - t0;
}

/** The messages' points appended per trace index, in order, under the newest version seen. */
function mergeExtends(msgs, version) {
  const byIdx = new Map();
  for (const m of msgs) {
    if (Number.isFinite(m.version)) version = Math.max(version, m.version);
    for (const t of m.traces || []) {
      let acc = byIdx.get(t.idx);
      if (!acc) byIdx.set(t.idx, (acc = { idx: t.idx, name: t.name, x: [], y: [] }));
      if (Array.isArray(t.x)) for (const v of t.x) acc.x.push(v);
      if (Array.isArray(t.y)) for (const v of t.y) acc.y.push(v);
    }
  }
  return { version, traces: [...byIdx.values()] };
}
