// pages/envlist.js — the env list page: search, sort, tree grouped by the prefix before the first "_", fork/rename/delete, compare.
import * as api from "../api.js";
import { askName, fmtInt, h, timeEl, toMs } from "../dom.js";

/** The group of an env: Visdom users name envs "<project>_<run>", so the text before the first "_" (if any). */
export const groupOf = (name) => {
  const i = String(name).indexOf("_");
  return i > 0 ? String(name).slice(0, i) : null;
};

/**
 * Render the env list into #main. connect(subscribe, load, handle) follows the live channel (app.js);
 * notice(text, kind) shows a status line.
 */
export function envListPage({ connect, notice }) {
  document.title = "paneboard";
  const $ = (id) => document.getElementById(id);
  $("crumbs").replaceChildren(h("span", { class: "crumb-current", text: "envs" }));
  const envs = new Map();
  const selected = new Set();
  const collapsed = new Set();
  let sort = { key: "name", dir: 1 };
  let filter = "";
  const cols = [["name", "Env"], ["panes", "Panes"], ["points", "Points"], ["updated", "Updated"], ["created", "Created"]];
  const head = h("tr", null, h("th", { class: "col-pick" }), cols.map(([key, label]) =>
    h("th", { class: `col-${key}`, dataset: { key }, onclick: () => {
      sort = { key, dir: sort.key === key ? -sort.dir : key === "name" ? 1 : -1 };
      draw();
    } }, label)), h("th", { class: "col-actions" }));
  const body = h("tbody");
  const empty = h("div", { class: "empty", hidden: true },
    "No envs yet. Log something from a script: ", h("code", { text: 'paneboard.Client(env="main").line(...)' }));
  const search = h("input", { type: "search", class: "filter", placeholder: "filter envs", "aria-label": "filter envs",
    oninput: () => { filter = search.value.trim().toLowerCase(); draw(); } });
  const compareBtn = h("button", { type: "button", class: "btn compare-btn", disabled: true, onclick: () => {
    window.location.href = api.comparePageUrl([...selected]);
  } }, "Compare");
  // Scalars view (TensorBoard-style): the ticked envs as its runs, every env when none is ticked.
  const scalarsBtn = h("button", { type: "button", class: "btn scalars-btn", onclick: () => {
    window.location.href = api.scalarsPageUrl([...selected]);
  } }, "Scalars");
  const hparamsBtn = h("button", { type: "button", class: "btn hparams-btn", onclick: () => {
    window.location.href = api.hparamsPageUrl([...selected]);
  } }, "HParams");
  $("tools").replaceChildren(search, compareBtn, scalarsBtn, hparamsBtn);
  $("main").replaceChildren(h("div", { class: "env-list" }, h("table", { class: "envs" }, h("thead", null, head), body), empty));

  async function act(fn) {
    try {
      await fn();
      notice("");
    } catch (err) {
      notice(err.message || String(err), "error");
    }
  }

  const actions = (e) => h("td", { class: "col-actions" },
    h("button", { type: "button", class: "btn-small act-fork", title: "fork: a copy with the same panes and data",
      onclick: () => {
        const to = askName(`Fork "${e.name}" as:`, `${e.name}_fork`);
        if (to) act(() => api.post(`${api.envPath(e.name)}/fork`, { to }));
      } }, "fork"),
    h("button", { type: "button", class: "btn-small act-rename", onclick: () => {
      const to = askName(`Rename "${e.name}" to:`, e.name);
      if (to && to !== e.name) act(() => api.post(`${api.envPath(e.name)}/rename`, { to }));
    } }, "rename"),
    h("button", { type: "button", class: "btn-small danger act-delete", onclick: () => {
      if (window.confirm(`Delete env "${e.name}" and all its data? This cannot be undone.`)) {
        act(() => api.del(api.envPath(e.name)));
      }
    } }, "delete"));

  function row(e, grouped) {
    const pick = h("input", { type: "checkbox", class: "pick", "aria-label": `select ${e.name} to compare`,
      checked: selected.has(e.name), onchange: () => {
        if (pick.checked) selected.add(e.name);
        else selected.delete(e.name);
        compareBtn.disabled = selected.size < 2;
      } });
    return h("tr", { dataset: { env: e.name }, class: grouped ? "in-group" : null },
      h("td", { class: "col-pick" }, pick),
      h("td", { class: "col-name" }, h("a", { href: api.envPageUrl(e.name), text: e.name }),
        e.forked_from ? h("span", { class: "forked", text: ` fork of ${e.forked_from}` }) : null),
      h("td", { class: "col-panes num", text: fmtInt(e.panes) }),
      h("td", { class: "col-points num", text: fmtInt(e.points) }),
      h("td", { class: "col-updated" }, timeEl(e.updated)),
      h("td", { class: "col-created" }, timeEl(e.created)),
      actions(e));
  }

  let scheduled = false;
  function draw() {
    scheduled = false;
    const rows = [...envs.values()].filter((e) => !filter || String(e.name).toLowerCase().includes(filter));
    const { key, dir } = sort;
    const val = (e) => (key === "name" ? String(e.name) : key === "updated" || key === "created" ? toMs(e[key]) || 0 : Number(e[key]) || 0);
    const cmp = (a, b) => {
      const x = val(a), y = val(b);
      return dir * (typeof x === "string" ? x.localeCompare(y) : x - y);
    };
    rows.sort(cmp);
    for (const th of head.children) th.dataset.sort = th.dataset.key === key ? (dir > 0 ? "asc" : "desc") : "";
    // Tree: a prefix shared by 2+ shown envs becomes a group row at the place of its first (best-sorted) member.
    const groups = new Map();
    for (const e of rows) {
      const g = groupOf(e.name);
      if (g !== null) groups.set(g, (groups.get(g) || []).concat([e]));
    }
    const out = [];
    const done = new Set();
    for (const e of rows) {
      const g = groupOf(e.name);
      const members = g === null ? null : groups.get(g);
      if (!members || members.length < 2) {
        out.push(row(e, false));
        continue;
      }
      if (done.has(g)) continue;
      done.add(g);
      const open = !collapsed.has(g);
      const points = members.reduce((n, m) => n + (Number(m.points) || 0), 0);
      out.push(h("tr", { class: "group-row", dataset: { group: g, open: open ? "1" : "0" }, onclick: () => {
        if (open) collapsed.add(g);
        else collapsed.delete(g);
        draw();
      } }, h("td", { class: "col-pick", text: open ? "▾" : "▸" }),
      h("td", { class: "col-name group-name", text: `${g}_*  (${members.length})` }),
      h("td", { class: "col-panes num" }), h("td", { class: "col-points num", text: fmtInt(points) }),
      h("td"), h("td"), h("td")));
      if (open) for (const m of members) out.push(row(m, true));
    }
    body.replaceChildren(...out);
    empty.hidden = envs.size > 0;
  }
  const redraw = () => {
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(draw);
    }
  };

  connect(null, async () => {
    const res = await api.listEnvs();
    envs.clear();
    for (const e of res.envs || []) envs.set(e.name, e);
    notice("");
    draw();
  }, (m, reload) => {
    if (m.type === "env" && m.env && typeof m.env.name === "string") {
      const old = envs.get(m.env.name);
      if (!old || !(toMs(old.updated) > toMs(m.env.updated))) envs.set(m.env.name, m.env);
      redraw();
    } else if (m.type === "env_deleted") {
      envs.delete(m.env);
      selected.delete(m.env);
      compareBtn.disabled = selected.size < 2;
      redraw();
    } else if (m.type === "resync" && reload) reload();
  });
}
