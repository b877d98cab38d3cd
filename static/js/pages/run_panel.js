// pages/run_panel.js — a run on its page: a status badge in the header and a "run" panel with times,
// a failed run's traceback, provenance (host, versions, GPUs, git with its diff, packages), config, editable tags
// and notes. Data:
// GET api/v1/envs/<env>/run; edits PUT .../tags and .../notes; live "run" and "meta" messages refresh it.
// Its artifacts column is run_artifacts.js (refreshed by live "artifact" messages).
import * as api from "../api.js";
import { counted, h, throttled, timeEl, toMs } from "../dom.js";
import { artifactsColumn } from "./run_artifacts.js";
import { errorBanner, statusLink } from "./run_error.js";

/** "1 h 02 min" from seconds. */
export function fmtDuration(s) {
  if (!Number.isFinite(s) || s < 0) return "–";
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** The status pill used by the run page's header and the runs table; `source` names the tracker of an imported run. */
export function statusBadge(status, source = null) {
  // No status is not a state of its own: say nothing ("—") and let the tooltip tell why.
  const from = source ? ` · imported from ${source}` : "";
  return h("span", { class: `run-status status-${status || "none"}`, text: status || "\u2014",
    title: status ? `run ${status}${from}` : "no job has reported to this run (an import, or logged without a Client)" });
}

const fmtValue = (v) => (typeof v === "string" ? v : JSON.stringify(v));
const isBranch = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0;

/** The config as one tree: a nested object's keys indented under its key, leaves as values (not JSON strings). */
export function configTree(config) {
  const rows = [];
  const walk = (obj, depth, path) => {
    for (const [k, v] of Object.entries(obj)) {
      const key = path ? `${path}.${k}` : k;
      const th = h("th", { text: k, style: `padding-left:${depth * 14}px` });
      if (isBranch(v)) {
        rows.push(h("tr", { class: "config-branch", dataset: { key } }, th, h("td")));
        walk(v, depth + 1, key);
      } else {
        rows.push(h("tr", { class: "config-leaf", dataset: { key } }, th, h("td", { text: fmtValue(v) })));
      }
    }
  };
  walk(config, 0, "");
  return h("table", { class: "config-tree" }, h("tbody", null, rows));
}

export function runPanel({ env, notice }) {
  const badge = h("span", { class: "run-badge" });
  const toggle = h("button", { type: "button", class: "btn-small act-run", onclick: () => { el.hidden = !el.hidden; } }, "run");
  const el = h("section", { class: "run-panel", hidden: true, "aria-label": "run" });
  let run = null;
  // Drafts survive a redraw (live messages redraw the panel): null when the notes editor is closed.
  const draft = { notes: null, tag: "" };
  const artifacts = artifactsColumn(env);
  const banner = errorBanner(env); // a failed or crashed run's error, above the panes, whether the panel is open or not

  async function load() {
    try {
      run = await api.getJson(`${api.envPath(env)}/run`);
    } catch (err) {
      if (err.status === 404) return;
      throw err;
    }
    draw();
    await artifacts.load();
  }
  const refresh = throttled(() => load().catch((err) => notice(`cannot load the run: ${err.message}`, "error")), 300);

  async function save(path, body) {
    try {
      await api.put(`${api.envPath(env)}/${path}`, body);
      await load();
    } catch (err) {
      notice(`${path}: ${err.message}`, "error");
    }
  }

  function draw() {
    const p = run.provenance || {};
    const git = p.git || null;
    banner.draw(run);
    badge.replaceChildren(statusLink(statusBadge(run.status, (run.provenance || {}).source), run.status, banner.reveal));
    const started = toMs(run.started);
    const ended = run.ended ? toMs(run.ended) : null;
    const facts = [
      ["status", statusLink(statusBadge(run.status), run.status, banner.reveal)],
      ["started", run.started ? timeEl(run.started) : "–"],
      ["ended", run.ended ? timeEl(run.ended) : "–"],
      ["duration", run.started ? fmtDuration(((ended ?? Date.now()) - started) / 1000) : "–"],
      ["host", p.host ? `${p.user ? `${p.user}@` : ""}${p.host} · pid ${p.pid}` : "–"],
      ["command", p.argv ? h("code", { text: p.argv.join(" ") }) : "–"],
      ["python", p.python || "–"],
      ["torch", p.torch ? `${p.torch}${p.cuda ? ` · CUDA ${p.cuda}` : ""}` : "–"],
      ["GPUs", p.gpus && p.gpus.length ? p.gpus.join(", ") : "–"],
      ...(run.fork ? [["forked from", h("span", null, h("a", { href: api.envPageUrl(run.fork.from), text: run.fork.from }),
        run.fork.step === null ? "" : ` at step ${run.fork.step}`)]] : []),
      // "jump to the error" only where there is one: a crashed (killed) run has no traceback to jump to.
      ["console", h("a", { class: "run-console-link", href: api.consolePageUrl(env) + (run.error ? "#error" : "") },
        run.error ? "console (jump to the error)" : "console")],
      ["git", git ? h("span", null, h("code", { text: git.commit.slice(0, 12), title: git.commit }),
        ` on ${git.branch || "?"}`, git.dirty ? h("span", { class: "git-dirty", text: " · dirty" }) : "") : "–"],
    ];
    const factTable = h("table", { class: "run-facts" }, facts.map(([k, v]) => h("tr", null, h("th", { text: k }), h("td", null, v))));
    const configTable = Object.keys(run.config || {}).length ? configTree(run.config)
      : h("div", { class: "muted", text: "no config (Client(config=...), set_config or add_hparams)" });
    const extras = []; // a failed run's traceback is in the banner above the panes (run_error.js), not here
    if (git && git.diff) {
      extras.push(h("details", { class: "run-diff" }, h("summary", { text: `git diff (${counted(git.diff.split("\n").length, "line")}${git.diff_truncated ? ", truncated" : ""})` }),
        h("pre", { text: git.diff })));
    }
    if (p.packages && p.packages.length) {
      extras.push(h("details", { class: "run-packages" }, h("summary", { text: `${counted(p.packages.length, "package")}` }),
        h("pre", { text: p.packages.join("\n") })));
    }
    el.replaceChildren(
      h("div", { class: "run-cols" },
        h("div", { class: "run-col" }, h("h3", { text: "run" }), factTable, ...extras),
        h("div", { class: "run-col run-config" }, h("h3", { text: "config" }), configTable),
        h("div", { class: "run-col" }, h("h3", { text: "tags" }), tagEditor(), h("h3", { text: "notes" }), notesEditor())),
      artifacts.el);
  }

  function tagEditor() {
    const input = h("input", { type: "text", class: "tag-input", placeholder: "add tag", "aria-label": "add tag",
      oninput: () => { draft.tag = input.value; },
      onkeydown: (ev) => {
        if (ev.key !== "Enter" || !input.value.trim()) return;
        const add = input.value.trim().split(/[\s,]+/).filter(Boolean);
        draft.tag = "";
        save("tags", { add });
      } });
    input.value = draft.tag;
    return h("div", { class: "run-tags" }, (run.tags || []).map((t) => h("span", { class: "tag" }, t,
      h("button", { type: "button", class: "tag-x", title: `remove ${t}`, "aria-label": `remove tag ${t}`,
        onclick: () => save("tags", { remove: [t] }) }, "×"))), input);
  }

  function notesEditor() {
    const shown = h("div", { class: "run-notes" });
    shown.innerHTML = run.notes_html || ""; // rendered and sanitized by the server (nh3), like text panes
    if (!run.notes) shown.append(h("span", { class: "muted", text: "no notes" }));
    const area = h("textarea", { class: "notes-input", rows: 6, "aria-label": "notes (Markdown)",
      oninput: () => { draft.notes = area.value; } });
    const editing = draft.notes !== null;
    area.value = editing ? draft.notes : run.notes || "";
    const close = () => { draft.notes = null; editor.hidden = true; shown.hidden = false; edit.hidden = false; };
    const editor = h("div", { class: "notes-edit", hidden: !editing }, area,
      h("div", null, h("button", { type: "button", class: "btn-small act-save-notes", onclick: () => {
        const notes = area.value;
        close();
        save("notes", { notes });
      } }, "save"), " ", h("button", { type: "button", class: "btn-small", onclick: close }, "cancel")));
    const edit = h("button", { type: "button", class: "btn-small act-edit-notes", hidden: editing, onclick: () => {
      draft.notes = area.value;
      editor.hidden = false;
      shown.hidden = true;
      edit.hidden = true;
      area.focus();
    } }, "edit");
    shown.hidden = editing;
    return h("div", null, shown, editor, edit);
  }

  /** True when the live message was the run's (or its config's). */
  function onMessage(m) {
    if (m.type === "run" || m.type === "meta" || m.type === "resync" || m.type === "artifact") refresh();
    return m.type === "run" || m.type === "artifact";
  }

  /** Open the panel at the config (the header's "config" button: the config is shown here only). */
  function showConfig() {
    el.hidden = false;
    const col = el.querySelector(".run-config");
    if (col) col.scrollIntoView({ block: "nearest" });
  }

  return { badge, toggle, el, banner: banner.el, load, onMessage, showConfig };
}
