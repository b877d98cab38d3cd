// pages/runs_share.js — share links from the runs table (an admin's): a read-only link for the ticked runs, the
// query's runs or one run, the links made so far, and revoking one. Data: api/v1/tokens (server/web/share_api.py).
import * as api from "../api.js";
import { h, timeEl } from "../dom.js";

/** What a new link would share: the ticked runs, else the query's runs, else every run (and later ones). */
function target(t) {
  if (t.selected.size) return { envs: [...t.selected], label: `the ${t.selected.size} ticked run${t.selected.size === 1 ? "" : "s"}` };
  if (t.query) return { envs: [...t.envs], label: `the ${t.envs.length} run${t.envs.length === 1 ? "" : "s"} of this query` };
  return { envs: null, label: "every run, now and later" };
}

/** The create button's words for what it would share now (the ticks and the query change it). */
export const shareLabel = (t) => `new read-only link to ${target(t).label}`;

/** The panel's <details>; its content is drawn when opened (and after each change). */
export function sharePanel(t) {
  const body = h("div", { class: "list share-list" });
  const panel = h("details", { class: "runs-share", ontoggle: () => { if (panel.open) drawShares(t, body); } },
    h("summary", { class: "btn-small", text: "share" }), body);
  t.sharePanel = panel;
  t.shareBody = body;
  return panel;
}

async function create(t, body) {
  const { envs, label } = target(t);
  const name = window.prompt(`Name this read-only link to ${label}`, t.query ? t.query.slice(0, 60) : "");
  if (name === null) return;
  try {
    const res = await api.post("api/v1/tokens", { envs, name });
    t.lastShare = res.url;
    t.notice("");
  } catch (err) {
    t.notice(`cannot create the link: ${err.message}`, "error");
  }
  await drawShares(t, body);
}

async function revoke(t, body, tok) {
  if (!window.confirm(`Revoke the link "${tok.name || tok.id}"? Whoever has it loses access at once.`)) return;
  try {
    await api.del(`api/v1/tokens/${tok.id}`);
  } catch (err) {
    t.notice(`cannot revoke: ${err.message}`, "error");
  }
  await drawShares(t, body);
}

/** The new link (shown once: the server keeps only its hash) and every link with its runs and a revoke button. */
export async function drawShares(t, body) {
  let tokens;
  try {
    tokens = (await api.getJson("api/v1/tokens")).tokens || [];
  } catch (err) {
    body.replaceChildren(h("div", { class: "muted", text: `share links need the admin token (${err.message})` }));
    return;
  }
  const made = t.lastShare ? h("div", { class: "share-made" },
    h("div", { class: "muted", text: "new read-only link (copy it now: it is shown once)" }),
    h("input", { class: "share-url", readonly: true, value: t.lastShare, "aria-label": "new share link",
      onfocus: (ev) => ev.target.select() })) : "";
  const rows = tokens.map((tok) => h("div", { class: "share-row", dataset: { token: String(tok.id) } },
    h("span", { class: "share-name", text: tok.name || `link ${tok.id}` }),
    h("span", { class: "muted share-envs", title: tok.envs ? tok.envs.join("\n") : "every run",
      text: tok.envs ? ` ${tok.envs.length} run${tok.envs.length === 1 ? "" : "s"} · ` : " every run · " }),
    timeEl(tok.created),
    h("button", { type: "button", class: "btn-small danger act-revoke", onclick: () => revoke(t, body, tok) }, "revoke")));
  body.replaceChildren(
    h("button", { type: "button", class: "btn-small act-share", onclick: () => create(t, body) },
      shareLabel(t)),
    made, ...(rows.length ? rows : [h("div", { class: "muted", text: "no share links yet" })]));
}
