// pages/run_artifacts.js — the artifacts of an env's run, in its run panel: what it logged (version, type, step,
// size, aliases, the runs that used it, a download per file) and what it used (with the run that logged it),
// their lineage as a graph (lineage_graph.js), and a compare of a version with another (artifact_compare.js).
// Their steps become checkpoint markers on the env's line panes (checkpoints.js).
// Data: GET api/v1/envs/<env>/artifacts; files from GET api/v1/artifact-blobs/<sha256>?name=<file name>.
import * as api from "../api.js";
import { setCheckpointSteps } from "../checkpoints.js";
import { fmtBytes, h } from "../dom.js";
import { compareBox } from "./artifact_compare.js";
import { lineageGraph } from "./lineage_graph.js";

const runLink = (env) => h("a", { href: api.envPageUrl(env), text: env });

function downloads(version) {
  const link = (f) => h("a", { class: "artifact-download", download: f.path.split("/").pop(),
    href: api.url(`api/v1/artifact-blobs/${f.sha256}?name=${encodeURIComponent(f.path.split("/").pop())}`),
    title: `${f.path} · ${fmtBytes(f.size)}`, text: version.files.length === 1 ? "download" : f.path });
  if (version.files.length === 1) return link(version.files[0]);
  return h("details", null, h("summary", { text: `${version.files.length} files` }),
    h("ul", null, version.files.map((f) => h("li", null, link(f), ` ${fmtBytes(f.size)}`))));
}

function table(versions, lineage, compare) {
  const head = ["artifact", "type", "step", "size", "aliases", lineage === "used_by" ? "used by" : "logged by", "", ""];
  return h("table", { class: "run-artifacts" },
    h("thead", null, h("tr", null, head.map((t) => h("th", { text: t })))),
    h("tbody", null, versions.map((v) => h("tr", { "data-ref": v.ref },
      h("td", null, h("code", { text: v.ref })),
      h("td", { text: v.type }),
      h("td", { class: "num", text: v.step === null ? "–" : String(v.step) }),
      h("td", { class: "num", text: fmtBytes(v.size) }),
      h("td", null, v.aliases.map((a) => h("span", { class: "tag", text: a }))),
      h("td", null, lineage === "used_by"
        ? (v.used_by.length ? v.used_by.flatMap((e, i) => (i ? [", ", runLink(e)] : [runLink(e)])) : "–")
        : (v.env ? runLink(v.env) : "–")),
      h("td", null, downloads(v)),
      h("td", null, v.version > 1 ? h("button", { class: "btn-small artifact-compare-btn", type: "button", text: "compare",
        title: `compare with v${v.version - 1}`, onclick: () => compare(v.name, v.version - 1, v.version) }) : null)))));
}

/** The panel column: load() fetches and draws; the element stays the same across loads. */
export function artifactsColumn(env) {
  const el = h("div", { class: "run-col run-artifacts-col" });
  let data = { logged: [], used: [] };
  let comparing = null; // the open compare box: kept across live reloads of the lists

  function compare(name, a, b) {
    comparing = compareBox(name, a, b, () => { comparing = null; draw(); });
    draw();
    comparing.scrollIntoView({ block: "nearest" });
  }

  async function load() {
    data = await api.getJson(`${api.envPath(env)}/artifacts`);
    setCheckpointSteps(env, data.logged.map((v) => v.step)); // markers on this run's curves
    draw();
  }

  function draw() {
    const parts = [h("h3", { text: "artifacts" })];
    if (!data.logged.length && !data.used.length) {
      parts.push(h("div", { class: "muted", text: "none logged (client.log_artifact) or used (client.use_artifact)" }));
    }
    if (data.logged.length) parts.push(table(data.logged, "used_by", compare));
    if (data.used.length) parts.push(h("h3", { text: "used" }), table(data.used, "env", compare));
    if (comparing) parts.push(comparing);
    const graph = lineageGraph(env, data);
    if (graph) parts.push(h("h3", { text: "lineage" }), h("div", { class: "lineage-scroll" }, graph));
    el.replaceChildren(...parts);
  }

  draw();
  return { el, load };
}
