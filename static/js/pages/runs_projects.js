// pages/runs_projects.js — the projects above the runs table: runs grouped by the part of their name before the first
// "/" (W&B's projects, TensorBoard's run folders); a click filters the table to one project with a runs query.
import * as api from "../api.js";
import { h } from "../dom.js";

const NONE = "(no project)";
const reEscape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The project of a run: the text before the first "/" of its name; null when it has none. */
export const projectOf = (env) => {
  const i = String(env).indexOf("/");
  return i > 0 ? String(env).slice(0, i) : null;
};

/** The runs query that shows one project (or the runs in none). */
export const projectQuery = (project) => (project === null ? 'name !~ "/"' : `name ~ "^${reEscape(project).replace(/"/g, '\\"')}/"`);

/** Project name -> run count over every run (not only the query's), in name order, the runs in none last. */
export function projectCounts(envs) {
  const counts = new Map();
  for (const e of envs) {
    const p = projectOf(e);
    counts.set(p, (counts.get(p) || 0) + 1);
  }
  return [...counts].sort(([a], [b]) => (a === null ? 1 : b === null ? -1 : a.localeCompare(b)));
}

/** Draw the project chips into t.projects; hidden while every run is in no project (nothing to group). */
export async function drawProjects(t) {
  let every;
  try {
    every = (await api.listRuns("", { limit: "0" })).envs || [];
  } catch {
    return; // the table itself reports a failed read
  }
  const counts = projectCounts(every);
  t.projects.hidden = !counts.some(([p]) => p !== null);
  if (t.projects.hidden) return;
  const chip = (label, query, n) => h("a", { href: api.runsPageUrl(query), class: `btn-small project${t.query === query ? " on" : ""}`,
    dataset: { project: label }, "aria-current": t.query === query ? "page" : null, onclick: (ev) => {
      ev.preventDefault();
      t.input.value = query;
      t.input.dispatchEvent(new Event("input"));
    } }, label, h("span", { class: "muted project-count", text: ` ${n}` }));
  t.projects.replaceChildren(h("span", { class: "muted", text: "projects" }),
    chip("all runs", "", every.length),
    ...counts.map(([p, n]) => chip(p === null ? NONE : p, projectQuery(p), n)));
}
