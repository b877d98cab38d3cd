// pages/sweeps.js — every sweep (/sweeps): state, method, metric, best value, trials by state, agents alive and
// when it was created, newest first; each row links to its sweep page. Data: GET api/v1/sweeps, polled.
import * as api from "../api.js";
import { h, timeEl } from "../dom.js";

const $ = (id) => document.getElementById(id);
const POLL_MS = 3000;
const STATES = ["running", "queued", "finished", "stopped", "failed", "crashed"];
const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : "–");

export function sweepsPage({ connect, notice }) {
  document.title = "sweeps · paneboard";
  $("crumbs").replaceChildren(
    h("a", { href: api.homeUrl(), class: "back", title: "every run", text: "← runs" }),
    h("span", { class: "sep", text: "/" }), h("span", { class: "crumb-current", text: "sweeps" }));
  $("tools").replaceChildren();
  const box = h("div", { class: "sweeps-list" });
  $("main").replaceChildren(box);

  async function load() {
    let data;
    try {
      data = await api.getJson("api/v1/sweeps");
    } catch (err) {
      notice(`cannot load the sweeps: ${err.message}`, "error");
      return;
    }
    notice("");
    box.replaceChildren(data.sweeps.length ? table(data.sweeps)
      : h("div", { class: "empty", text: "No sweep yet: create one with `paneboard sweep sweep.yaml`." }));
  }

  connect(null, load, () => {});
  setInterval(load, POLL_MS);
}

function table(sweeps) {
  const head = ["sweep", "state", "method", "metric", "best", "trials", "agents", "created"];
  return h("table", { class: "envs sweeps-table" },
    h("thead", {}, h("tr", {}, ...head.map((k) => h("th", { class: `col-${k}`, text: k })))),
    h("tbody", {}, ...sweeps.map(row)));
}

function row(s) {
  const metric = s.metric && s.metric.name ? `${s.metric.name} (${s.metric.goal === "maximize" ? "max" : "min"})` : "–";
  // Only the states a sweep has trials in, in a fixed order, each its own chip (state-coloured in app.css).
  const counts = STATES.filter((st) => s.counts[st] > 0)
    .map((st) => h("span", { class: `count-chip state-${st}`, title: st, text: `${s.counts[st]} ${st}` }));
  return h("tr", { class: `sweep-row state-${s.state}`, "data-sweep": s.id },
    h("td", { class: "col-sweep" }, h("a", { href: api.url(`sweeps/${encodeURIComponent(s.id)}`),
      text: s.name || s.id }), s.name ? h("span", { class: "sweep-id", text: ` ${s.id}` }) : ""),
    h("td", { class: "col-state" }, h("span", { class: `sweep-state state-${s.state}`, text: s.state })),
    h("td", { class: "col-method", text: s.method || "–" }),
    h("td", { class: "col-metric", text: metric }),
    h("td", { class: "col-best num", text: s.best ? fmt(s.best.value) : "–" }),
    h("td", { class: "col-trials" }, h("span", { class: "num", text: String(s.total) }), " ", ...counts),
    h("td", { class: "col-agents num", text: String(s.agents_alive) }),
    h("td", { class: "col-created" }, timeEl(s.created)));
}
