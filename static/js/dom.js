// dom.js — small DOM and format helpers shared by the workspace modules (text only, never HTML).

/** h("div", {class, text, dataset, onclick, attr...}, ...children) */
export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) el.append(kid);
  return el;
}

/** Text for Plotly's pseudo-HTML (legends, axis and chart titles): shown as typed, never as a link or markup. */
export const plotlyText = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export const fmtInt = (n) => (Number.isFinite(Number(n)) ? Number(n).toLocaleString("en-US") : "–");

/** "1 pane", "2 panes", "1,024 points": a count and its noun in the right number (plural: singular + "s"). */
export const counted = (n, singular, plural = `${singular}s`) => `${fmtInt(n)} ${Number(n) === 1 ? singular : plural}`;

export function toMs(t) {
  if (typeof t === "number") return t < 1e11 ? t * 1000 : t; // seconds (or already ms)
  if (typeof t === "string" && t) return /^[\d.]+$/.test(t) ? toMs(Number(t)) : Date.parse(t);
  return NaN;
}

export function relTime(ms) {
  if (!Number.isFinite(ms)) return "–";
  const d = (Date.now() - ms) / 1000;
  if (d < 1) return "just now";
  if (d < 60) return `${Math.floor(d)} s ago`;
  if (d < 3600) return `${Math.floor(d / 60)} min ago`;
  if (d < 86400) return `${Math.floor(d / 3600)} h ago`;
  if (d < 30 * 86400) return `${Math.floor(d / 86400)} d ago`;
  return new Date(ms).toLocaleDateString();
}

/** A <time> showing "5 s ago"; app.js's ticker refreshes every time[data-ts] each second. */
export function timeEl(t) {
  const ms = toMs(t);
  return h("time", { dataset: { ts: String(ms) }, title: Number.isFinite(ms) ? new Date(ms).toLocaleString() : "", text: relTime(ms) });
}

/** Ask for a name (window.prompt); null when cancelled or empty. */
export function askName(question, initial = "") {
  const v = window.prompt(question, initial);
  return v === null || !v.trim() ? null : v.trim();
}

/** fn at most once per `ms`: calls in between are folded into the one already scheduled. */
export function throttled(fn, ms) {
  let timer = null;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, ms);
  };
}

/** "1.5 GB" from bytes. */
export function fmtBytes(n) {
  if (!Number.isFinite(n)) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i += 1; }
  return `${n.toFixed(i && n < 10 ? 1 : 0)} ${units[i]}`;
}
