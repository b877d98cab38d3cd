// pages/env_extends.js — live "extend" messages of the env page: queued per pane, merged, applied once per frame.
import { createSlot, enqueue, fetchPane } from "./env_slots.js";

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

/** Mark a slot as having pending extends and make sure a flush is coming. */
export function schedule(page, slot) {
  page.dirty.add(slot);
  if (page.flushScheduled) return;
  page.flushScheduled = true;
  // One extendTraces per pane per animation frame (hidden tabs get no frames: fall back to a timer).
  if (document.hidden) setTimeout(() => flush(page), 250);
  else requestAnimationFrame(() => flush(page));
}

function flush(page) {
  page.flushScheduled = false;
  for (const slot of [...page.dirty]) {
    if (slot.fetching || !slot.view) continue; // stays dirty; fetchPane reschedules when done
    page.dirty.delete(slot);
    const msgs = slot.pending.filter((m) => !Number.isFinite(m.version) || m.version > slot.version);
    slot.pending = [];
    slot.pendingPoints = 0;
    if (!msgs.length) continue;
    const merged = mergeExtends(msgs, slot.version);
    slot.version = merged.version;
    enqueue(slot, () => slot.view.extend(merged));
  }
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
