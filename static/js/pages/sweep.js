// pages/sweep.js — one sweep (/sweeps/<id>): state, pause/resume/stop/cancel, best so far, the agents at work, the
// metric over trials and the trials table, with links to its runs in the runs table and HParams (?q= scoped).
// Data: GET api/v1/sweeps/<id>?limit=&offset=&newest=1, polled (a sweep changes at its agents' pace): the counts,
// best trial and every trial's value come from aggregates, the table is one page of trials (a sweep may have
// thousands).
import * as api from "../api.js";
import { counted, h } from "../dom.js";
import { statusBadge } from "./run_panel.js";

const $ = (id) => document.getElementById(id);
const POLL_MS = 2000;
const PAGE = 100;  // trials per table page, newest first
const ACTIONS = { running: ["pause", "stop", "cancel"], paused: ["resume", "stop", "cancel"], stopping: ["cancel"] };
const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(4))
  : typeof v === "string" ? v : JSON.stringify(v));

export function sweepPage({ connect, notice }) {
  const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
  document.title = `sweep ${id} · paneboard`;
  const path = `api/v1/sweeps/${encodeURIComponent(id)}`;
  const head = h("div", { class: "sweep-head" });
  const chart = h("div", { class: "sweep-chart" });
  const table = h("div", { class: "sweep-trials" });
  let offset = 0;  // the table's page: trials skipped from the newest
  $("crumbs").replaceChildren(
    h("a", { href: api.homeUrl(), class: "back", title: "every run", text: "← runs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: `sweep ${id}` }));
  $("tools").replaceChildren();
  $("main").replaceChildren(head, chart, table);

  async function act(action) {
    try {
      await api.post(`${path}/state`, { action });
      await load();
    } catch (err) {
      notice(`cannot ${action} the sweep: ${err.message}`, "error");
    }
  }

  async function load() {
    let sweep;
    try {
      sweep = await api.getJson(`${path}?limit=${PAGE}&offset=${offset}&newest=1`);
    } catch (err) {
      notice(err.status === 404 ? `no sweep ${id}` : `cannot load the sweep: ${err.message}`, "error");
      return;
    }
    notice("");
    const metric = sweep.metric ? `${sweep.metric.name} (${sweep.metric.goal || "minimize"})` : "no metric";
    const q = sweep.runs_query;
    const counts = Object.entries(sweep.counts).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(" · ");
    head.replaceChildren(
      h("div", { class: "sweep-title" },
        h("h2", { text: sweep.name || `sweep ${sweep.id}` }),
        h("span", { class: `sweep-state state-${sweep.state}`, text: sweep.state }),
        ...(document.body.dataset.readonly ? [] : (ACTIONS[sweep.state] || []).map((a) =>
          h("button", { type: "button", class: `btn-small act-${a}`, onclick: () => act(a) }, a)))),
      h("div", { class: "env-stats sweep-facts", text: `${sweep.method} search on ${metric} · project ${sweep.project} · `
        + `${counted(sweep.total, "trial")}${counts ? ` (${counts})` : ""}` }),
      h("div", { class: "sweep-best" }, sweep.best
        ? [h("b", { text: "best so far: " }), h("a", { href: api.envPageUrl(sweep.best.run), text: `trial ${sweep.best.number}` }),
          ` ${sweep.metric.name} = ${fmt(sweep.best.value)} with `,
          h("code", { text: Object.entries(sweep.best.config).map(([k, v]) => `${k}=${fmt(v)}`).join(" ") })]
        : "no finished trial yet"),
      h("div", { class: "sweep-links" },
        h("a", { class: "btn-small", href: api.runsPageUrl(q), text: "runs table" }),
        h("a", { class: "btn-small", href: api.url(`hparams?q=${encodeURIComponent(q)}`), text: "HParams and importance" }),
        h("span", { class: "env-stats", text: sweep.agents.length
          ? `agents at work: ${sweep.agents.map((a) => `${a.agent} (trial ${a.trial})`).join(", ")}` : "no agent at work" })));
    drawChart(chart, sweep);
    drawTable(table, sweep, (to) => { offset = to; load(); });
  }

  // The live channel tells the page when it is back after an outage (load again); the trials themselves are polled.
  connect(null, load, () => {});
  setInterval(load, POLL_MS);
}

/** The metric of each trial by number, as an inline SVG: finished trials filled, stopped ones hollow. */
function drawChart(box, sweep) {
  const pts = sweep.points;
  if (!sweep.metric || !pts.length) { box.replaceChildren(); return; }
  const W = 640, H = 160, P = 28;
  const xs = [...pts.map((t) => t.number), sweep.total - 1], ys = pts.map((t) => t.value);
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1), y0 = Math.min(...ys), y1 = Math.max(...ys, y0 + 1e-12);
  const sx = (x) => P + ((x - x0) / (x1 - x0)) * (W - 2 * P), sy = (y) => H - P - ((y - y0) / (y1 - y0)) * (H - 2 * P);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("class", "sweep-svg");
  svg.setAttribute("aria-label", `${sweep.metric.name} over trials`);
  const add = (tag, attrs, text) => {
    const el = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    svg.append(el);
  };
  add("line", { x1: P, y1: H - P, x2: W - P, y2: H - P, class: "axis" });
  add("text", { x: P, y: 14, class: "label" }, `${sweep.metric.name}: ${fmt(y1)} … ${fmt(y0)}`);
  add("text", { x: W - P, y: H - 8, class: "label", "text-anchor": "end" }, "trial");
  for (const t of pts) {
    add("circle", { cx: sx(t.number), cy: sy(t.value), r: 4, class: `dot ${t.state}` });
  }
  box.replaceChildren(svg);
}

/** One page of trials, newest first, with buttons to the newer and older pages; `go(offset)` loads a page. */
function drawTable(box, sweep, go) {
  const keys = [...new Set(sweep.trials.flatMap((t) => Object.keys(t.config)))];
  const rows = sweep.trials.map((t) => h("tr", { class: `trial state-${t.state}` },
    h("td", { text: String(t.number) }),
    h("td", {}, statusBadge(t.state)),
    h("td", {}, t.run ? h("a", { href: api.envPageUrl(t.run), text: t.run }) : "–"),
    ...keys.map((k) => h("td", { text: k in t.config ? fmt(t.config[k]) : "" })),
    h("td", { text: typeof t.value === "number" ? fmt(t.value) : "" }),
    h("td", { text: String(t.steps) }),
    h("td", { class: "reason", text: t.reason || (t.retry_of !== null ? `retry of ${t.retry_of}` : "") })));
  const pager = sweep.total > PAGE ? h("div", { class: "sweep-pager env-stats" },
    h("button", { type: "button", class: "btn-small page-newer", disabled: sweep.offset === 0,
      onclick: () => go(Math.max(0, sweep.offset - PAGE)) }, "newer"),
    ` trials ${sweep.offset + 1}–${sweep.offset + sweep.trials.length} of ${sweep.total}, newest first `,
    h("button", { type: "button", class: "btn-small page-older", disabled: sweep.offset + PAGE >= sweep.total,
      onclick: () => go(sweep.offset + PAGE) }, "older")) : "";
  box.replaceChildren(sweep.trials.length
    ? h("div", {}, pager, h("table", { class: "envs sweep-table" },
      h("thead", {}, h("tr", {}, ...["#", "state", "run", ...keys, sweep.metric ? sweep.metric.name : "value", "reports", "note"]
        .map((k) => h("th", { text: k })))), h("tbody", {}, ...rows)))
    : h("div", { class: "empty", text: "No trial yet: start an agent with `paneboard agent " + sweep.id + "`." }));
}
