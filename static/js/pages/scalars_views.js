// pages/scalars_views.js — Scalars charts of several tags overlaid (train/loss with val/loss) and saved Scalars views
// that keep them (with the run selector's pins and baseline); a view lives in the env meta's saved views of the first run shown, and ?view= reopens it.
import * as api from "../api.js";
import { askName, h } from "../dom.js";
import { PREFIX } from "./custom_scalars.js";
import { keepMarks, setMarks } from "./run_marks.js";
import { drawList } from "./run_selector.js";

export const OVERLAY = `${PREFIX}overlays/`; // overlay charts get their own section, like custom scalars
// Tags listed in the overlay picker before it is opened: thousands of options would be thousands of DOM nodes.
const LISTED_CLOSED = 500;

/** Chart specs of the overlays over the tags present: [{title, parts: [{tag, role}]}], a tag labelling its lines. */
export function overlayCharts(overlays, tags) {
  const have = new Set(tags);
  return overlays.map((o) => ({ title: `${OVERLAY}${o.title}`, overlay: true,
    parts: o.tags.filter((t) => have.has(t)).map((tag) => ({ tag, role: null })) }));
}

const viewUrl = (name) => {
  const u = new URL(window.location.href);
  if (name) u.searchParams.set("view", name);
  else u.searchParams.delete("view");
  window.history.replaceState(null, "", u);
};

/** Apply a saved view: its overlays, smoothing, pins and baseline. changed(): the chart list must be read again. */
export function applyView(sc, name, changed) {
  const v = sc.views[name];
  if (!v) return false;
  sc.overlays = (v.overlays || []).map((o) => ({ title: o.title, tags: [...o.tags] }));
  if (typeof v.smoothing === "number") {
    const slider = document.querySelector("input.smoothing");
    if (slider) {
      slider.value = String(v.smoothing);
      slider.dispatchEvent(new Event("input"));
    }
  }
  if (Array.isArray(v.pinned) || typeof v.baseline === "string") { // the view's pins and baseline, if it kept any
    setMarks(sc.sel, { pinned: v.pinned || [], baseline: v.baseline || null });
    drawList(sc.sel);
    keepMarks("scalars", sc.sel);
  }
  sc.view = name;
  viewUrl(name);
  changed();
  return true;
}

/** After a chart list: the views the shown runs hold, listed in the picker; ?view= applied once. */
export function viewsListed(sc, views, tags, changed) {
  sc.views = views || {};
  sc.lineTags = tags;
  const names = Object.keys(sc.views).sort();
  sc.viewSel.replaceChildren(h("option", { value: "", text: names.length ? "views…" : "no views" }),
    ...names.map((n) => h("option", { value: n, text: n, selected: n === sc.view })));
  const want = new URLSearchParams(window.location.search).get("view");
  if (want && !sc.viewTried) {
    sc.viewTried = true;
    if (want !== sc.view) applyView(sc, want, changed);
  }
  listTags(sc);
}

/** The overlay picker's options: the line tags, once its panel is open when they are many. */
function listTags(sc) {
  const tags = sc.lineTags || [];
  const open = sc.tagSel.closest("details")?.open;
  const want = tags.length <= LISTED_CLOSED || open ? tags : [];
  if (sc.tagSel.options.length === want.length && [...sc.tagSel.options].every((o, i) => o.value === want[i])) return;
  sc.tagSel.replaceChildren(...want.map((t) => h("option", { value: t, text: t })));
}

/** The header tools: overlay some tags on one chart, pick a saved view, save the current one. */
export function viewTools(sc, changed) {
  sc.overlays = sc.overlays || [];
  sc.views = {};
  sc.tagSel = h("select", { class: "overlay-tags", multiple: true, size: 6, "aria-label": "tags to overlay" });
  const title = h("input", { type: "text", class: "overlay-title", placeholder: "chart title (optional)",
    "aria-label": "overlay chart title" });
  const say = h("span", { class: "overlay-msg" });
  const add = h("button", { type: "button", class: "btn-small overlay-add", onclick: () => {
    const tags = [...sc.tagSel.selectedOptions].map((o) => o.value);
    if (tags.length < 2) {
      say.textContent = "pick two or more tags";
      return;
    }
    const name = title.value.trim() || tags.join(" + ");
    sc.overlays = [...sc.overlays.filter((o) => o.title !== name), { title: name, tags }];
    say.textContent = "";
    title.value = "";
    panel.open = false;
    changed();
  } }, "overlay on one chart");
  const panel = h("details", { class: "overlay-panel", ontoggle: () => listTags(sc) },
    h("summary", { class: "btn-small", text: "overlay tags" }),
    h("div", { class: "overlay-body" }, sc.tagSel, title, h("span", { class: "sc-row" }, add, say)));
  sc.viewSel = h("select", { class: "scalars-views", "aria-label": "open a saved view", onchange: () => {
    if (sc.viewSel.value) applyView(sc, sc.viewSel.value, changed);
  } }, h("option", { value: "", text: "no views" }));
  const save = h("button", { type: "button", class: "btn-small scalars-save-view",
    title: "save the overlaid charts, smoothing, pins and baseline as a named view", onclick: async () => {
      const anchor = sc.shown[0];
      const name = anchor ? askName("Save this Scalars view as:", sc.view || "default") : null;
      if (!name) return;
      try {
        await api.post(`${api.envPath(anchor)}/views`, { name,
          scalars: { overlays: sc.overlays, smoothing: sc.state.smoothing, pinned: [...sc.sel.pinned].sort(),
            baseline: sc.sel.baseline } });
        sc.view = name;
        viewUrl(name);
        sc.notice(`saved view "${name}" in ${anchor}`, "info");
        sc.needIndex = true; // the views live in the chart list's answer: read it again, not the last one kept
        changed();
      } catch (err) {
        sc.notice(`cannot save the view: ${err.message}`, "error");
      }
    } }, "save view");
  return h("span", { class: "scalars-view-tools" }, panel, sc.viewSel, save);
}
