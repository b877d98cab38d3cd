// pages/run_marks.js — pinned runs and the baseline run of a page's run selector, kept after a reload: in the URL
// (?pinned=a,b&baseline=c, so a link shows them too) and in this browser for the next visit of the page.
import { getJSON, setJSON } from "../storage.js";

const KEY = "paneboard.runMarks."; // + the page ("scalars", "compare")

const names = (raw) => [...new Set(String(raw).split(",").map((s) => s.trim()).filter(Boolean))];

/** The marks to start with: the URL's if it names any, else this browser's last ones on the page. */
export function readMarks(page) {
  const q = new URLSearchParams(window.location.search);
  if (q.has("pinned") || q.has("baseline")) {
    return { pinned: names(q.get("pinned") || ""), baseline: q.get("baseline") || null };
  }
  const kept = getJSON("local", KEY + page, null);
  if (!kept || typeof kept !== "object") return { pinned: [], baseline: null };
  return { pinned: Array.isArray(kept.pinned) ? kept.pinned.filter((r) => typeof r === "string") : [],
    baseline: typeof kept.baseline === "string" ? kept.baseline : null };
}

/** Keep the selector's marks (after a pin, an unpin or a baseline change, or a saved view applied). */
export function keepMarks(page, sel) {
  const pinned = [...sel.pinned].sort();
  const u = new URL(window.location.href);
  if (pinned.length) u.searchParams.set("pinned", pinned.join(","));
  else u.searchParams.delete("pinned");
  if (sel.baseline) u.searchParams.set("baseline", sel.baseline);
  else u.searchParams.delete("baseline");
  window.history.replaceState(null, "", u);
  setJSON("local", KEY + page, { pinned, baseline: sel.baseline || null });
}

/** Put marks (a saved view's, or readMarks()) on the selector, keeping its Set (the charts' tooltips hold it). */
export function setMarks(sel, { pinned = [], baseline = null }) {
  sel.pinned.clear();
  for (const r of pinned) sel.pinned.add(r);
  sel.baseline = baseline || null;
}
