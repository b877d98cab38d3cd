// pages/artifact_compare.js — two versions of an artifact side by side, in the run panel: files added, removed or
// changed (size and sha256 on each side) and metadata keys that differ. Either side can be switched to any version.
// Data: GET api/v1/artifacts/<name>/versions (the choices) and api/v1/artifacts/<name>/compare?a=vN&b=vM.
import * as api from "../api.js";
import { fmtBytes, h } from "../dom.js";

const enc = encodeURIComponent;
const sha12 = (f) => (f ? f.sha256.slice(0, 12) : "–");
const shown = (v) => (v === null || v === undefined ? "–" : typeof v === "string" ? v : JSON.stringify(v));

function summary(diff) {
  const c = diff.counts;
  const parts = [["changed", c.changed], ["added", c.added], ["removed", c.removed], ["same", c.same]]
    .filter(([, n]) => n).map(([s, n]) => `${n} ${s}`);
  return `${diff.a.ref} → ${diff.b.ref}: ${parts.join(", ") || "no files"} · ` +
    `${fmtBytes(diff.a.size)} → ${fmtBytes(diff.b.size)}`;
}

function filesTable(diff) {
  return h("table", { class: "artifact-diff artifact-diff-files" },
    h("thead", null, h("tr", null, ["", "file", `size v${diff.a.version}`, `size v${diff.b.version}`,
      `sha256 v${diff.a.version}`, `sha256 v${diff.b.version}`].map((t) => h("th", { text: t })))),
    h("tbody", null, diff.files.map((f) => h("tr", { class: `diff-${f.status}`, "data-path": f.path },
      h("td", { class: "diff-status", text: f.status }),
      h("td", null, h("code", { text: f.path })),
      h("td", { class: "num", text: f.a ? fmtBytes(f.a.size) : "–" }),
      h("td", { class: "num", text: f.b ? fmtBytes(f.b.size) : "–" }),
      h("td", null, h("code", { text: sha12(f.a), title: f.a ? f.a.sha256 : "" })),
      h("td", null, h("code", { text: f.status === "same" ? "" : sha12(f.b), title: f.b ? f.b.sha256 : "" }))))));
}

function metadataTable(diff) {
  const changed = diff.metadata.filter((m) => m.status !== "same");
  if (!diff.metadata.length) return h("div", { class: "muted", text: "no metadata on either version" });
  if (!changed.length) return h("div", { class: "muted", text: `metadata: the same ${diff.metadata.length} key(s)` });
  return h("table", { class: "artifact-diff artifact-diff-meta" },
    h("thead", null, h("tr", null, ["", "metadata", `v${diff.a.version}`, `v${diff.b.version}`]
      .map((t) => h("th", { text: t })))),
    h("tbody", null, changed.map((m) => h("tr", { class: `diff-${m.status}`, "data-key": m.key },
      h("td", { class: "diff-status", text: m.status }),
      h("td", null, h("code", { text: m.key })),
      h("td", { text: shown(m.a) }),
      h("td", { text: shown(m.b) })))));
}

/** A box comparing versions `a` and `b` (numbers) of artifact `name`; onClose removes it. */
export function compareBox(name, a, b, onClose) {
  const el = h("div", { class: "artifact-compare", "data-name": name });
  let versions = [a, b];

  const picker = (side, value) => h("select", { class: `compare-${side}`, title: `version ${side.toUpperCase()}`,
    onchange: (e) => { if (side === "a") a = Number(e.target.value); else b = Number(e.target.value); load(); } },
  versions.map((n) => h("option", { value: n, text: `v${n}`, selected: n === value })));

  async function load() {
    const body = h("div", { class: "muted", text: "comparing…" });
    draw(body);
    try {
      const [list, diff] = await Promise.all([
        api.getJson(`api/v1/artifacts/${enc(name)}/versions`),
        api.getJson(`api/v1/artifacts/${enc(name)}/compare?a=v${a}&b=v${b}`)]);
      versions = list.versions.map((v) => v.version);
      draw(h("div", null, h("div", { class: "compare-summary", text: summary(diff) }), filesTable(diff),
        metadataTable(diff)));
    } catch (err) {
      draw(h("div", { class: "error", text: `could not compare: ${err.message || err}` }));
    }
  }

  function draw(body) {
    el.replaceChildren(h("div", { class: "compare-head" },
      h("strong", { text: name }), " ", picker("a", a), " → ", picker("b", b),
      h("button", { class: "compare-close", type: "button", title: "close", text: "×", onclick: onClose })), body);
  }

  load();
  return el;
}
