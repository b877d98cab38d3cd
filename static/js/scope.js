// scope.js — the runs a multi-run page shows, named in its URL as /runs names them: ?q=<run query> (the same language
// and errors), ?sel=<saved selection id> (a ticked set, saved on the server under a short id) or ?envs=a,b.
// Data: GET api/v1/scope (WIRE: server/web/scope_api.py).
import * as api from "./api.js";
import { h } from "./dom.js";

/** {q, sel, envs} from the page's URL: at most one of them is set; null when the URL names no runs. */
export function scopeFromUrl() {
  const p = new URLSearchParams(window.location.search);
  const q = (p.get("q") || "").trim();
  const sel = (p.get("sel") || "").trim();
  const envs = api.envsFromUrl(); // names with "," or edge spaces stay whole (each is encoded on its own)
  if (q) return { q };
  if (sel) return { sel };
  if (envs !== null) return { envs };
  return null;
}

/** The query string that names this scope for an API call or a page link ("" for every run). */
export function scopeParams(scope) {
  if (!scope) return "";
  if (scope.q) return new URLSearchParams({ q: scope.q }).toString();
  if (scope.sel) return new URLSearchParams({ sel: scope.sel }).toString();
  return scope.envs && scope.envs.length ? `envs=${api.envsQuery(scope.envs)}` : "";
}

/** The runs of a scope, as the server resolves it (a query's 400 carries {error, position}). */
export async function scopeEnvs(scope) {
  if (scope && scope.envs) return scope.envs;
  const qs = scopeParams(scope);
  const res = await api.getJson(qs ? `api/v1/scope?${qs}` : "api/v1/scope");
  return res.envs || [];
}

/** A page URL ("scalars", "compare", "hparams", "runs") for this scope. */
export function scopedPageUrl(page, scope) {
  const qs = scopeParams(scope);
  return api.url(qs ? `${page}?${qs}` : page);
}

/** Save ticked runs as a selection; its scope ({sel}) names them in a short URL. */
export async function saveSelection(envs) {
  const res = await api.post("api/v1/selections", { envs });
  return { sel: res.id };
}

/** A short label of a scope for titles and breadcrumbs. */
export function scopeLabel(scope, count) {
  const n = `${count} run${count === 1 ? "" : "s"}`;
  if (!scope) return "every run";
  if (scope.q) return `${n} matching ${scope.q}`;
  if (scope.sel) return `${n} (selection ${scope.sel})`;
  return n;
}

/** An error of the query, shown as /runs shows it: the message and a caret at its position. */
export function queryErrorEl(err, q) {
  const pos = err && err.data && Number.isInteger(err.data.position) ? err.data.position : null;
  return h("div", { class: "runs-error scope-error", role: "alert" }, err.message, pos === null ? "" : h("code", { class: "runs-error-at" },
    ` ${q.slice(Math.max(0, pos - 20), pos)}▲${q.slice(pos, pos + 20)}`));
}

/**
 * The query bar of Scalars, Compare and HParams: the runs query (Enter applies it: the page reloads on the new
 * scope), what it names, and a link back to /runs with the same query.
 */
export function scopeBar(scope, count, err = null) {
  const input = h("input", { type: "search", class: "runs-query scope-query", spellcheck: "false", "aria-label": "run query",
    placeholder: 'runs query: name ~ "^sweep/" and lr < 0.01', value: scope && scope.q ? scope.q : "" });
  input.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter") return;
    const url = new URL(window.location.href);
    for (const k of ["q", "sel", "envs"]) url.searchParams.delete(k);
    if (input.value.trim()) url.searchParams.set("q", input.value.trim());
    window.location.href = url.toString();
  });
  if (err) input.setAttribute("aria-invalid", "true");
  return h("div", { class: "scope-bar" }, input,
    h("span", { class: "scope-count muted", text: err ? "" : scopeLabel(scope, count) }),
    h("a", { class: "btn-small scope-runs", href: scopedPageUrl("runs", scope && !scope.envs ? scope : null), text: "runs table" }),
    err ? queryErrorEl(err, scope && scope.q ? scope.q : "") : "");
}
