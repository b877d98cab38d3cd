// api.js — every HTTP call of the UI (read API v1), relative to the boot base URL; errors surface as ApiError.

let BASE = "/";

/** Set the base URL (always ends with "/"); every URL below is built from it. */
export function setBase(base) {
  BASE = base && base.endsWith("/") ? base : (base || "") + "/";
}

/** Absolute path of a base-relative path ("api/v1/..." -> "/pb/api/v1/..."). */
export function url(path) {
  return BASE + String(path).replace(/^\/+/, "");
}

const enc = encodeURIComponent;

/** Page URLs, for links. */
export const envPageUrl = (env) => url(`env/${enc(env)}`);
/** A run page that opens at one pane (pages/env_target.js reads ?pane=), whichever section pages it out. */
export const panePageUrl = (env, win) => `${envPageUrl(env)}?pane=${enc(win)}`;
export const consolePageUrl = (env) => url(`console/${enc(env)}`);
/** The console's JSON lines of one rank ({n, t, stream, text, rank, open?}), a page after line `after`. */
export async function getConsole(env, { rank = 0, after = 0, limit = 5000 } = {}) {
  const path = `api/v1/envs/${enc(env)}/console?rank=${rank | 0}&after=${after}&limit=${limit}`;
  let res;
  try {
    res = await fetch(url(path), { cache: "no-store" });
  } catch (err) {
    throw new ApiError(0, `network error: ${err && err.message ? err.message : err}`, path);
  }
  const text = await res.text();
  if (!res.ok) {
    let msg = `${res.status} ${res.statusText}`.trim();
    try { msg = JSON.parse(text).error || msg; } catch { /* not JSON */ }
    throw new ApiError(res.status, msg, path);
  }
  const lines = text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const ranks = (res.headers.get("X-Console-Ranks") || "").split(",").filter(Boolean).map(Number);
  const next = res.headers.get("X-Console-Next");
  // The header names the first 256 ranks only; Total is set when there are more (then: getConsoleRanks).
  const total = res.headers.get("X-Console-Ranks-Total");
  return { lines, ranks, ranksTotal: total === null ? ranks.length : Number(total), next: next === null ? null : Number(next) };
}
/** Every rank of the run that printed, in order (GET .../console/ranks: no header limit). */
export async function getConsoleRanks(env) {
  return (await getJson(`api/v1/envs/${enc(env)}/console/ranks`)).ranks;
}
export const consoleDownloadUrl = (env, rank) => url(`api/v1/envs/${enc(env)}/console?rank=${rank | 0}&format=text`);
export const homeUrl = () => url("");

export class ApiError extends Error {
  constructor(status, message, path, data = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.path = path;
    this.data = data; // the error body ({error, position} for a bad run query)
  }
}

async function request(method, path, { body, signal } = {}) {
  // The embed page is read-only from any origin: nothing it does (a drag, a key) may write (the server refuses too).
  if (method !== "GET" && document.body.classList.contains("embed")) throw new ApiError(403, "the embed page is read-only", path);
  const init = { method, signal, cache: "no-store", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  let res;
  try {
    res = await fetch(url(path), init);
  } catch (err) {
    if (err && err.name === "AbortError") throw err;
    throw new ApiError(0, `network error: ${err && err.message ? err.message : err}`, path);
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const msg = data && typeof data.error === "string" ? data.error : `${res.status} ${res.statusText}`.trim();
    throw new ApiError(res.status, msg, path, data || null);
  }
  if (data === undefined || data === null) throw new ApiError(res.status, "response is not JSON", path);
  return data;
}

const get = (path, opts) => request("GET", path, opts);

/** GET api/v1/envs -> {envs: [summary...]} */
export const listEnvs = (opts) => get("api/v1/envs", opts);

/** GET api/v1/envs/<env> -> {env, panes: [pane summary...]} */
export const getEnv = (env, opts) => get(`api/v1/envs/${enc(env)}`, opts);

/** GET api/v1/envs/<env>/panes?points= -> {env, panes: [rendered pane...]} */
export const getPanes = (env, points, opts) => get(`api/v1/envs/${enc(env)}/panes?points=${points | 0}`, opts);

/** GET api/v1/envs/<env>/panes/<win>?points=&x0=&x1= -> rendered pane */
export function getPane(env, win, points, { x0, x1, signal } = {}) {
  let q = `points=${points | 0}`;
  if (x0 !== undefined && x0 !== null) q += `&x0=${enc(x0)}`;
  if (x1 !== undefined && x1 !== null) q += `&x1=${enc(x1)}`;
  return get(`api/v1/envs/${enc(env)}/panes/${enc(win)}?${q}`, { signal });
}

/** URL of a pane's export (csv|json), for download links. */
export const exportUrl = (env, win, format) => url(`api/v1/envs/${enc(env)}/panes/${enc(win)}/export?format=${enc(format)}`);

/** Writes of the workspace (fork, rename, layout, views, meta): JSON body in, JSON out, ApiError on 4xx/5xx. */
export const post = (path, body) => request("POST", path, { body: body === undefined ? {} : body });
export const put = (path, body) => request("PUT", path, { body });
export const del = (path) => request("DELETE", path);
export const getJson = (path, opts) => get(path, opts);
export const envPath = (env) => `api/v1/envs/${enc(env)}`;
/** The names in this page's ?envs=a,b, split before decoding (each name is encoded, so a "," or an edge space
 * inside one stays); null when the URL has no ?envs. */
export function envsFromUrl(search = window.location.search) {
  const part = search.replace(/^\?/, "").split("&").find((p) => p.split("=")[0] === "envs");
  if (part === undefined) return null;
  const dec = (s) => {
    try { return decodeURIComponent(s.replace(/\+/g, " ")); } catch { return s; }
  };
  const raw = part.slice(part.indexOf("=") + 1 || part.length);
  const names = raw.includes(",") ? raw.split(",").map((s) => dec(s.replace(/^[ +]+|[ +]+$/g, "")))
    : dec(raw).split(",").map((s) => s.trim());
  return [...new Set(names.filter(Boolean))];
}
/** ?envs= of these names, each encoded on its own; one name ends in "," so that the server and envsFromUrl split
 * at the literal commas (a "," inside a name stays in it) rather than decode the whole list first. */
export const envsQuery = (envs) => envs.map(enc).join(",") + (envs.length === 1 ? "," : "");
export const comparePageUrl = (envs) => url(`compare?envs=${envsQuery(envs)}`);
/** The Scalars view of these runs (all runs when `envs` is empty). */
export const scalarsPageUrl = (envs) => url(envs.length ? `scalars?envs=${envsQuery(envs)}` : "scalars");
/** The HParams view of these envs (every env with hparams when `envs` is empty). */
export const runsPageUrl = (q) => url(q ? `runs?q=${enc(q)}` : "runs");
/** GET api/v1/runs?q=&sort=&order=&offset=&limit= -> {runs, total, envs, columns} (400 {error, position} for a bad query) */
export function listRuns(q, params = {}) {
  const qs = new URLSearchParams({ ...(q ? { q } : {}), ...params }).toString();
  return get(qs ? `api/v1/runs?${qs}` : "api/v1/runs");
}
export const hparamsPageUrl = (envs) => url(envs.length ? `hparams?envs=${envsQuery(envs)}` : "hparams");
