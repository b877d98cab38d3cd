// chart_reads.js — chart reads of many runs (api/v1/charts, api/v1/chart): the chart list, one chart's series decoded
// from the server's columnar answer, and live updates that append only the points past each series' last x.
import * as api from "./api.js";

const enc = encodeURIComponent;
// null: every run the server knows (keeps the URL short when a sweep of thousands is shown whole)
const envsParam = (envs) => (envs === null ? "" : `envs=${api.envsQuery(envs)}`);

/** GET api/v1/charts: {envs, panes: {env: count}, charts: [{title, win, kind, opts, envs}]}. */
export const listCharts = (envs, by = "title") => api.getJson(`api/v1/charts?${envsParam(envs)}&by=${by}`);

/** Series of a columnar answer: [{env, win, name, total, x, y, wall}] in the server's order (runs as asked). */
export function decode(res) {
  const s = res.series;
  const out = [];
  let k = 0;
  for (let i = 0; i < s.n.length; i++) {
    const n = s.n[i];
    out.push({ env: res.envs[s.env[i]], win: s.win[i], name: s.name[i], total: s.total[i], title: s.title ? s.title[i] : null,
      x: res.x.slice(k, k + n), y: res.y.slice(k, k + n), wall: res.wall ? res.wall.slice(k, k + n) : null });
    k += n;
  }
  return out;
}

/**
 * One chart's series of `envs`: {perSeries, series}. `after` (env -> last x held) asks only for newer points;
 * `width` is the chart's CSS width, which bounds the points per series (two per pixel).
 */
export async function readChart(envs, { title, win = null, width = 600, walls = false, after = null, signal } = {}) {
  let q = `${envsParam(envs)}&title=${enc(title)}&width=${Math.max(1, Math.round(width))}`;
  if (win) q += `&win=${enc(win)}`;
  if (walls) q += "&walls=1";
  if (after && envs) q += `&after=${envs.map((e) => (after.has(e) ? String(after.get(e)) : "")).join(",")}`;
  const res = await api.getJson(`api/v1/chart?${q}`, { signal });
  return { perSeries: res.per_series, series: decode(res) };
}

/** GET api/v1/chart/match: every line tag matching a glob ("layer*" + "/grad_norm"), of `envs`, as one chart's series. */
export async function readMatching(envs, { pattern, width = 600, signal } = {}) {
  const res = await api.getJson(`api/v1/chart/match?${envsParam(envs)}&pattern=${enc(pattern)}&width=${Math.max(1, Math.round(width))}`,
    { signal });
  return { perSeries: res.per_series, series: decode(res) };
}

export const seriesKey = (s) => `${s.env}\n${s.win}\n${s.name}`;

/** env -> the smallest last x of its series held (an update asks for what comes after). */
export function lastX(held, envs) {
  const want = new Set(envs);
  const out = new Map();
  for (const s of held.values()) {
    if (!want.has(s.env) || !s.x.length) continue;
    const x = s.x[s.x.length - 1];
    out.set(s.env, out.has(s.env) ? Math.min(out.get(s.env), x) : x);
  }
  return out;
}

/** Append an update's points to the series held (Map key -> series); new series are added. Returns whether any changed. */
export function mergeSeries(held, update) {
  let changed = false;
  for (const s of update) {
    const key = seriesKey(s);
    const old = held.get(key);
    if (!old) {
      held.set(key, s);
      changed = true;
      continue;
    }
    const last = old.x.length ? old.x[old.x.length - 1] : -Infinity;
    let i = 0;
    while (i < s.x.length && s.x[i] <= last) i += 1; // a run's other series may have asked from an earlier x
    if (i >= s.x.length) continue;
    old.x = old.x.concat(s.x.slice(i));
    old.y = old.y.concat(s.y.slice(i));
    if (old.wall && s.wall) old.wall = old.wall.concat(s.wall.slice(i));
    old.total = s.total;
    changed = true;
  }
  return changed;
}
