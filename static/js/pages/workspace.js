// pages/workspace.js — env page tools: fork/rename/delete/views/config in the header; pane drag, resize, close and menu (PNG, CSV, JSON).
import * as api from "../api.js";
import { askName, h } from "../dom.js";

export const COLS = 12; // must match server/envops.py GRID_COLUMNS
const ROW = 30; // px per grid row (CSS grid-auto-rows); a card spans h rows
const DEFAULT_W = 6;
const DEFAULT_H = 9;

/** Grid cell a pane takes before anyone placed it: half the width (full if opts.width is wide), ~330 px high. */
export function defaultSize(pane) {
  const o = (pane && pane.opts) || {};
  const w = Number(o.width) >= 700 ? COLS : DEFAULT_W;
  const ph = Number(o.height);
  const hgt = ph >= 120 && ph <= 1200 ? Math.ceil((ph + 40) / (ROW + 10)) : DEFAULT_H;
  return { w, h: hgt };
}

const validLayout = (l) => l && [l.x, l.y, l.w, l.h].every(Number.isFinite);

/**
 * The workspace of one env page.
 *   env: the env name; grid: the pane grid element; notice(text, kind): status line;
 *   slots(): Map win -> slot ({win, card, pane, ...}) of app.js.
 */
export function workspace({ env, grid, notice, slots }) {
  grid.classList.add("ws-grid");
  const metaBox = h("div", { class: "env-meta", hidden: true });
  let meta = {};

  async function act(fn) {
    try {
      const r = await fn();
      notice("");
      return r;
    } catch (err) {
      notice(err.message || String(err), "error");
      return null;
    }
  }

  // ------------------------------------------------------------------------------------------ header
  const viewSel = h("select", { class: "views", "aria-label": "load a saved view", onchange: () => {
    const name = viewSel.value;
    viewSel.value = "";
    if (name) act(() => api.post(`${api.envPath(env)}/views/${encodeURIComponent(name)}/load`));
  } });
  const configBtn = h("button", { type: "button", class: "btn-small act-config", hidden: true,
    onclick: () => { metaBox.hidden = !metaBox.hidden; } }, "config");

  function tools() {
    return [
      configBtn, viewSel,
      h("button", { type: "button", class: "btn-small act-save-view", title: "save the current layout as a named view",
        onclick: () => {
          const name = askName("Save this layout as view:", "default");
          if (name) act(() => api.post(`${api.envPath(env)}/views`, { name }));
        } }, "save view"),
      h("button", { type: "button", class: "btn-small act-repack", title: "forget the layout: panes flow in order",
        onclick: () => repack() }, "repack"),
      h("button", { type: "button", class: "btn-small act-fork", onclick: async () => {
        const to = askName(`Fork "${env}" as:`, `${env}_fork`);
        if (to && await act(() => api.post(`${api.envPath(env)}/fork`, { to }))) window.location.href = api.envPageUrl(to);
      } }, "fork"),
      h("button", { type: "button", class: "btn-small act-rename", onclick: () => {
        const to = askName(`Rename "${env}" to:`, env);
        if (to && to !== env) act(() => api.post(`${api.envPath(env)}/rename`, { to }));
      } }, "rename"),
      h("button", { type: "button", class: "btn-small danger act-delete", onclick: () => {
        if (window.confirm(`Delete env "${env}" and all its data? This cannot be undone.`)) act(() => api.del(api.envPath(env)));
      } }, "delete"),
    ];
  }

  function setMeta(m) {
    meta = m || {};
    const views = Object.keys(meta.views || {}).sort();
    viewSel.replaceChildren(h("option", { value: "", text: views.length ? "views…" : "no views" }),
      ...views.map((v) => h("option", { value: v, text: v })));
    const config = meta.config && typeof meta.config === "object" ? meta.config : null;
    configBtn.hidden = !config;
    metaBox.replaceChildren(...(config ? [h("table", { class: "config" }, Object.entries(config).map(([k, v]) =>
      h("tr", null, h("th", { text: k }), h("td", { text: typeof v === "string" ? v : JSON.stringify(v) }))))] : []));
  }

  async function loadMeta() {
    const r = await act(() => api.getJson(`${api.envPath(env)}/meta`));
    if (r) setMeta(r.meta);
  }

  // ------------------------------------------------------------------------------------------ layout
  function place(slot, layout) {
    const l = validLayout(layout) ? layout : null;
    slot.layout = l;
    const size = l || defaultSize(slot.pane);
    const st = slot.card.style;
    st.gridColumn = l ? `${l.x + 1} / span ${l.w}` : `span ${Math.min(COLS, size.w)}`;
    st.gridRow = l ? `${l.y + 1} / span ${l.h}` : `span ${size.h}`;
    slot.card.dataset.layout = l ? `${l.x},${l.y},${l.w},${l.h}` : "";
    resizePlot(slot);
  }

  function resizePlot(slot) {
    const plot = slot.card.querySelector(".js-plotly-plot");
    if (plot && window.Plotly) requestAnimationFrame(() => window.Plotly.Plots.resize(plot).catch(() => {}));
  }

  /** Grid geometry in px: column pitch, row pitch and the grid's origin. */
  function metrics() {
    const r = grid.getBoundingClientRect();
    const cs = getComputedStyle(grid);
    const gap = parseFloat(cs.columnGap) || 10;
    const rgap = parseFloat(cs.rowGap) || 10;
    return { left: r.left, top: r.top, gap, col: (r.width + gap) / COLS, row: ROW + rgap };
  }

  /** The cell the card occupies now (placed or auto-flowed), from its rendered box. */
  function cellOf(card) {
    const m = metrics();
    const r = card.getBoundingClientRect();
    const x = Math.max(0, Math.min(COLS - 1, Math.round((r.left - m.left) / m.col)));
    const w = Math.max(1, Math.min(COLS - x, Math.round((r.width + m.gap) / m.col)));
    return { x, y: Math.max(0, Math.round((r.top - m.top) / m.row)), w, h: Math.max(1, Math.round((r.height + m.row - ROW) / m.row)) };
  }

  function save(slot, layout) {
    return act(() => api.put(`${api.envPath(env)}/panes/${encodeURIComponent(slot.win)}/layout`, layout));
  }

  async function repack() {
    for (const slot of slots().values()) if (slot.layout) await save(slot, null);
  }

  /** Pointer drag on the card bar moves the pane; the bottom-right handle resizes it. Saved on release. */
  function dragger(slot, mode) {
    return (ev) => {
      if (ev.button !== 0 || (mode === "move" && ev.target.closest("button, a, select, .pane-menu"))) return;
      ev.preventDefault();
      const m = metrics();
      const start = cellOf(slot.card);
      const x0 = ev.clientX, y0 = ev.clientY;
      let cur = start;
      slot.card.classList.add(mode === "move" ? "dragging" : "resizing");
      const move = (e) => {
        const dx = Math.round((e.clientX - x0) / m.col), dy = Math.round((e.clientY - y0) / m.row);
        cur = mode === "move"
          ? { ...start, x: Math.max(0, Math.min(COLS - start.w, start.x + dx)), y: Math.max(0, start.y + dy) }
          : { ...start, w: Math.max(1, Math.min(COLS - start.x, start.w + dx)), h: Math.max(2, start.h + dy) };
        place(slot, cur);
      };
      const up = () => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        slot.card.classList.remove("dragging", "resizing");
        place(slot, cur);
        save(slot, cur);
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
    };
  }

  // ------------------------------------------------------------------------------------------ pane menu
  function menu(slot) {
    const plot = () => slot.card.querySelector(".js-plotly-plot");
    const file = `${env}-${slot.win}`.replace(/[^\w.-]+/g, "_");
    const wrap = h("div", { class: "pane-menu" });
    const close = () => { for (const l of document.querySelectorAll(".menu-list")) l.remove(); };
    const item = (cls, text, onclick) => h("button", { type: "button", class: `menu-item ${cls}`, onclick: (e) => {
      e.stopPropagation();
      close();
      onclick();
    } }, text);
    const link = (cls, text, format) => h("a", { class: `menu-item ${cls}`, href: api.exportUrl(env, slot.win, format),
      download: `${file}.${format}`, onclick: () => setTimeout(close) }, text);
    /** Built when opened (and removed when closed): 50 panes keep no hidden menus, links or buttons around. */
    function build() {
      const xy = !!plot();
      return h("div", { class: "menu-list" },
        xy && item("m-png", "Download PNG", () => window.Plotly.downloadImage(plot(), { format: "png", filename: file })),
        xy && item("m-svg", "Download SVG", () => window.Plotly.downloadImage(plot(), { format: "svg", filename: file })),
        xy && link("m-csv", "Data as CSV", "csv"),
        xy && link("m-json", "Data as JSON", "json"),
        xy && item("m-logy", "Toggle log y", () => {
          const p = plot();
          window.Plotly.relayout(p, { "yaxis.type": p.layout.yaxis.type === "log" ? "linear" : "log" });
        }),
        xy && item("m-reset", "Reset zoom", () => window.Plotly.relayout(plot(), { "xaxis.autorange": true, "yaxis.autorange": true })),
        item("m-full", "Fullscreen", () => {
          if (document.fullscreenElement) document.exitFullscreen();
          else slot.card.requestFullscreen().then(() => resizePlot(slot)).catch(() => {});
        }),
        item("m-close", "Close pane", () => {
          if (window.confirm(`Close pane "${slot.title}"? Its data is deleted.`)) {
            act(async () => {
              // Visdom's close event for the script's handlers, sent while the window (its pane_data) still exists.
              await api.post("vis_event", { event_type: "close", target: slot.win, eid: env }).catch(() => null);
              return api.del(`${api.envPath(env)}/panes/${encodeURIComponent(slot.win)}`);
            });
          }
        }));
    }
    wrap.append(h("button", { type: "button", class: "pane-menu-btn", title: "pane menu", "aria-label": "pane menu",
      onclick: (e) => {
        e.stopPropagation();
        const open = wrap.querySelector(".menu-list");
        close();
        if (!open) wrap.append(build());
      } }, "⋯"));
    return wrap;
  }
  document.addEventListener("click", () => {
    for (const l of document.querySelectorAll(".menu-list")) l.remove();
  });

  /** Give a new card its menu, drag bar and resize handle. */
  function attach(slot) {
    const bar = slot.card.querySelector(".card-bar");
    bar.append(menu(slot));
    bar.addEventListener("pointerdown", dragger(slot, "move"));
    slot.card.append(h("div", { class: "resize-handle", title: "resize", onpointerdown: dragger(slot, "resize") }));
    place(slot, null);
  }

  /** Live messages of this env the grid does not handle itself; true if handled. */
  function onMessage(m) {
    if (m.type === "layout") {
      const slot = slots().get(m.win);
      if (slot) place(slot, m.layout);
      return true;
    }
    if (m.type === "meta") {
      setMeta(m.meta);
      return true;
    }
    if (m.type === "env_renamed") {
      notice(`Env "${env}" was renamed to "${m.to}".`, "warn");
      window.location.href = api.envPageUrl(m.to);
      return true;
    }
    return false;
  }

  return { tools, metaBox, place, attach, onMessage, loadMeta, setMeta };
}
