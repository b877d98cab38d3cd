// pages/envlist_table.js — the env list's table body: sorted rows, prefix groups that fold, per-env actions.
import * as api from "../api.js";
import { askName, fmtInt, h, timeEl, toMs } from "../dom.js";

/** The group of an env: Visdom users name envs "<project>_<run>", so the text before the first "_" (if any). */
export const groupOf = (name) => {
  const i = String(name).indexOf("_");
  return i > 0 ? String(name).slice(0, i) : null;
};

/** Run a fork/rename/delete request; its error (if any) goes to the status line. */
async function act(list, fn) {
  try {
    await fn();
    list.notice("");
  } catch (err) {
    list.notice(err.message || String(err), "error");
  }
}

const actions = (list, e) => h("td", { class: "col-actions" },
  h("button", { type: "button", class: "btn-small act-fork", title: "fork: a copy with the same panes and data",
    onclick: () => {
      const to = askName(`Fork "${e.name}" as:`, `${e.name}_fork`);
      if (to) act(list, () => api.post(`${api.envPath(e.name)}/fork`, { to }));
    } }, "fork"),
  h("button", { type: "button", class: "btn-small act-rename", onclick: () => {
    const to = askName(`Rename "${e.name}" to:`, e.name);
    if (to && to !== e.name) act(list, () => api.post(`${api.envPath(e.name)}/rename`, { to }));
  } }, "rename"),
  h("button", { type: "button", class: "btn-small danger act-delete", onclick: () => {
    if (window.confirm(`Delete env "${e.name}" and all its data? This cannot be undone.`)) {
      act(list, () => api.del(api.envPath(e.name)));
    }
  } }, "delete"));

function row(list, e, grouped) {
  const { selected } = list;
  const pick = h("input", { type: "checkbox", class: "pick", "aria-label": `select ${e.name} to compare`,
    onchange: () => {
      if (pick.checked) selected.add(e.name);
      else selected.delete(e.name);
      list.compareBtn.disabled = selected.size < 2;
    } });
  pick.checked = selected.has(e.name); // the property, not the attribute: kept rows are compared by their markup
  return h("tr", { dataset: { env: e.name }, class: grouped ? "in-group" : null },
    h("td", { class: "col-pick" }, pick),
    h("td", { class: "col-name" }, h("a", { href: api.envPageUrl(e.name), text: e.name }),
      e.forked_from ? h("span", { class: "forked", text: ` fork of ${e.forked_from}` }) : null),
    h("td", { class: "col-panes num", text: fmtInt(e.panes) }),
    h("td", { class: "col-points num", text: fmtInt(e.points) }),
    h("td", { class: "col-updated" }, timeEl(e.updated)),
    h("td", { class: "col-created" }, timeEl(e.created)),
    actions(list, e));
}

/** The envs passing the filter, in the chosen sort order; the header shows which column sorts. */
function sortedRows(list) {
  const rows = [...list.envs.values()].filter((e) => !list.filter || String(e.name).toLowerCase().includes(list.filter));
  const { key, dir } = list.sort;
  const val = (e) => (key === "name" ? String(e.name) : key === "updated" || key === "created" ? toMs(e[key]) || 0 : Number(e[key]) || 0);
  const cmp = (a, b) => {
    const x = val(a), y = val(b);
    return dir * (typeof x === "string" ? x.localeCompare(y) : x - y);
  };
  rows.sort(cmp);
  for (const th of list.head.children) th.dataset.sort = th.dataset.key === key ? (dir > 0 ? "asc" : "desc") : "";
  return rows;
}

/** A folding group's header row: its prefix, member count and summed points. */
function groupRow(list, g, members, open) {
  const points = members.reduce((n, m) => n + (Number(m.points) || 0), 0);
  // The click reads the state then, not `open`: a kept row outlives the draw that made it.
  return h("tr", { class: "group-row", dataset: { group: g, open: open ? "1" : "0" }, onclick: () => {
    if (list.collapsed.has(g)) list.collapsed.delete(g);
    else list.collapsed.add(g);
    drawTable(list);
  } }, h("td", { class: "col-pick", text: open ? "▾" : "▸" }),
  h("td", { class: "col-name group-name", text: `${g}_*  (${members.length})` }),
  h("td", { class: "col-panes num" }), h("td", { class: "col-points num", text: fmtInt(points) }),
  h("td"), h("td"), h("td"));
}

/** Redraw the table body from list.envs. */
export function drawTable(list) {
  list.scheduled = false;
  const rows = sortedRows(list);
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
      out.push(row(list, e, false));
      continue;
    }
    if (done.has(g)) continue;
    done.add(g);
    const open = !list.collapsed.has(g);
    out.push(groupRow(list, g, members, open));
    if (open) for (const m of members) out.push(row(list, m, true));
  }
  reconcile(list.body, out);
  list.empty.hidden = list.envs.size > 0;
}

const keyOf = (tr) => (tr.dataset.group !== undefined ? `group:${tr.dataset.group}` : `env:${tr.dataset.env}`);

/**
 * Make `body` show `fresh` (rows just built) while keeping the rows and cells already there where they match, so a
 * live update (a run streaming points) never replaces the link, checkbox or button the keyboard focus is on.
 */
function reconcile(body, fresh) {
  const focused = body.contains(document.activeElement) ? document.activeElement : null;
  const old = new Map([...body.children].map((tr) => [keyOf(tr), tr]));
  const want = fresh.map((tr) => {
    const kept = old.get(keyOf(tr));
    if (!kept || kept.className !== tr.className || kept.cells.length !== tr.cells.length) return tr;
    for (const [k, v] of Object.entries(tr.dataset)) kept.dataset[k] = v;
    [...tr.cells].forEach((cell, i) => {
      if (kept.cells[i].outerHTML !== cell.outerHTML) kept.cells[i].replaceWith(cell);
    });
    const pick = tr.querySelector("input.pick");
    if (pick) kept.querySelector("input.pick").checked = pick.checked;
    return kept;
  });
  const keep = new Set(want);
  for (const tr of [...body.children]) if (!keep.has(tr)) tr.remove();
  want.forEach((tr, i) => {
    if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null); // moves only rows out of place
  });
  // A focused row that had to move (sorted by points or time) loses focus in the move: give it back.
  if (focused && focused.isConnected && document.activeElement !== focused) focused.focus({ preventScroll: true });
}
