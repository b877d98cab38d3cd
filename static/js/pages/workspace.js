// pages/workspace.js — env page tools: fork/rename/delete/views/config in the header; wires each card's drag, resize and menu.
import * as api from "../api.js";
import { askName, h } from "../dom.js";
import { dragger, place, saveLayout } from "./workspace_grid.js";
import { closeMenusOnOutsideClick, paneMenu } from "./workspace_menu.js";

/**
 * The workspace of one env page.
 *   env: the env name; grid: the pane grid element; notice(text, kind): status line;
 *   slots(): Map win -> slot ({win, card, pane, ...}) of app.js.
 */
export function workspace({ env, grid, notice, slots, showConfig = null }) {
  grid.classList.add("ws-grid");
  const metaBox = h("div", { class: "env-meta", hidden: true });
  let meta = {};
  const ws = { env, grid, act, slots };

  /** Run a request; its error (if any) goes to the status line and the result is null. */
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
  // The config is shown once, as a tree in the run panel (run_panel.js): the button opens it there.
  const configBtn = h("button", { type: "button", class: "btn-small act-config", hidden: true,
    onclick: () => (showConfig ? showConfig() : (metaBox.hidden = !metaBox.hidden)) }, "config");

  function tools() {
    return [
      configBtn, viewSel,
      h("a", { class: "btn-small act-snapshot", href: api.url(`${api.envPath(env)}/snapshot.html`), download: "",
        title: "download this run as one HTML file (data and Plotly inside; opens offline)" }, "snapshot"),
      h("button", { type: "button", class: "btn-small act-save-view", title: "save the current layout as a named view",
        onclick: () => {
          const name = askName("Save this layout as view:", "default");
          if (name) act(() => api.post(`${api.envPath(env)}/views`, { name }));
        } }, "save view"),
      // "tidy layout", not Visdom's "repack": the label says what it does to the page.
      h("button", { type: "button", class: "btn-small act-repack",
        title: "forget moved and resized panes: every pane goes back to its place in order, at its default size",
        onclick: () => repack() }, "tidy layout"),
      h("button", { type: "button", class: "btn-small act-fork", onclick: async () => {
        const to = askName(`Fork "${env}" as:`, `${env}_fork`);
        if (to && await act(() => api.post(`${api.envPath(env)}/fork`, { to }))) window.location.href = api.envPageUrl(to);
      } }, "fork"),
      h("button", { type: "button", class: "btn-small act-rename", onclick: () => {
        const to = askName(`Rename "${env}" to:`, env);
        if (to && to !== env) act(() => api.post(`${api.envPath(env)}/rename`, { to }));
      } }, "rename"),
      h("button", { type: "button", class: "btn-small danger act-delete", onclick: () => {
        if (window.confirm(`Delete run "${env}" and all its data? This cannot be undone.`)) act(() => api.del(api.envPath(env)));
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
    metaBox.replaceChildren(...(config && !showConfig ? [h("table", { class: "config" }, Object.entries(config).map(([k, v]) =>
      h("tr", null, h("th", { text: k }), h("td", { text: typeof v === "string" ? v : JSON.stringify(v) }))))] : []));
  }

  async function loadMeta() {
    const r = await act(() => api.getJson(`${api.envPath(env)}/meta`));
    if (r) setMeta(r.meta);
  }

  async function repack() {
    for (const slot of slots().values()) if (slot.layout) await saveLayout(ws, slot, null);
  }

  closeMenusOnOutsideClick();

  /** Give a new card its menu, drag bar and resize handle. */
  function attach(slot) {
    const bar = slot.card.querySelector(".card-bar");
    bar.append(paneMenu(ws, slot));
    bar.addEventListener("pointerdown", dragger(ws, slot, "move"));
    slot.card.append(h("div", { class: "resize-handle", title: "resize", onpointerdown: dragger(ws, slot, "resize") }));
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
      notice(`Run "${env}" was renamed to "${m.to}".`, "warn");
      window.location.href = api.envPageUrl(m.to);
      return true;
    }
    return false;
  }

  return { tools, metaBox, place, attach, onMessage, loadMeta, setMeta };
}
