// pages/console.js — a run's console (/console/<env>): every line one rank printed, searchable, following live,
// errors and tracebacks highlighted, a download. Data: GET api/v1/envs/<env>/console (JSON lines, paged); a live
// "console" message says which lines to refetch (an open line — a progress bar — is rewritten in place).
import * as api from "../api.js";
import { counted, h, throttled } from "../dom.js";
import { statusBadge } from "./run_panel.js";

const $ = (id) => document.getElementById(id);
const PAGE = 5000;
const MAX_LINES = 200_000; // what the page keeps; the download has everything
const TB_START = /^Traceback \(most recent call last\):/;
const TB_CHAIN = /^(During handling of the above exception|The above exception was the direct cause)/;
const TB_END = /^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit|Warning|Failure)\b/;
const ERROR = /\b(error|exception|fatal|failed|traceback|out of memory|segmentation fault|killed)\b|\b(nan|inf) (loss|detected)/i;

export function consolePage({ env, connect, notice }) {
  const view = { env, rank: 0, ranks: [], lines: new Map(), last: 0, tb: false, follow: true, query: "", loading: null };
  document.title = `${env} · console · paneboard`;
  const badge = h("span", { class: "run-badge" });
  $("crumbs").replaceChildren(
    h("a", { href: api.homeUrl(), class: "back", title: "every run", text: "← runs" }),
    h("span", { class: "sep", text: "/" }),
    h("a", { href: api.envPageUrl(env), class: "crumb-link env-name", text: env }),
    h("span", { class: "sep console-crumb", text: "/" }),
    h("span", { class: "crumb-current console-crumb", text: "console" }), badge);
  view.count = h("span", { class: "console-count env-stats" });
  const search = h("input", { type: "search", class: "filter console-search", placeholder: "search the console",
    "aria-label": "search the console", oninput: () => { view.query = search.value.toLowerCase(); applySearch(view); } });
  view.rankSel = h("select", { class: "console-rank", "aria-label": "rank", hidden: true,
    onchange: () => {
      view.rank = Number(view.rankSel.value);
      view.download.href = api.consoleDownloadUrl(env, view.rank);
      reload();
    } });
  const errBtn = h("button", { type: "button", class: "btn-small act-next-error", title: "jump to the next error",
    onclick: () => jumpToError(view) }, "next error");
  const follow = h("input", { type: "checkbox", class: "act-follow", checked: true,
    onchange: () => { view.follow = follow.checked; if (view.follow) toBottom(view); } });
  view.followBox = follow;
  view.download = h("a", { class: "btn-small act-download", href: api.consoleDownloadUrl(env, 0), download: "" }, "download");
  // The tools sit in a bar of their own (not the top bar): on a phone they wrap instead of running off the side.
  $("tools").replaceChildren();
  view.box = h("div", { class: "console-view", role: "log", "aria-live": "off", tabindex: "0" });
  view.empty = h("div", { class: "empty", text: "Nothing printed yet: what the job writes to stdout and stderr appears here." });
  $("main").replaceChildren(h("div", { class: "console-bar" }, search, view.rankSel, errBtn,
    h("label", { class: "console-follow" }, follow, " follow"), view.download, view.count), view.box, view.empty);
  // Scrolling up stops following; back at the bottom it follows again (as a terminal's scrollback does).
  window.addEventListener("scroll", () => {
    const atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 4;
    if (atBottom !== view.follow) { view.follow = atBottom; follow.checked = atBottom; }
  }, { passive: true });

  async function loadRun() {
    try {
      const run = await api.getJson(`${api.envPath(env)}/run`);
      badge.replaceChildren(statusBadge(run.status, (run.provenance || {}).source));
    } catch (err) {
      if (err.status !== 404) throw err;
    }
  }

  async function fetchFrom(after) {
    let cursor = after;
    for (;;) {
      const got = await api.getConsole(env, { rank: view.rank, after: cursor, limit: PAGE });
      // The header lists the first ranks only: with more, the whole list comes from its own route.
      if (got.ranksTotal <= got.ranks.length) setRanks(view, got.ranks);
      else if (got.ranksTotal !== view.ranks.length) setRanks(view, await api.getConsoleRanks(env));
      put(view, got.lines);
      if (got.next === null) break;
      cursor = got.next;
    }
    showCount(view);
    if (view.follow) toBottom(view);
  }

  async function load() {
    view.lines.clear();
    view.box.replaceChildren();
    view.last = 0;
    view.tb = false;
    await Promise.all([loadRun(), fetchFrom(0)]);
    if (location.hash === "#error" && !view.jumped) { view.jumped = true; jumpToError(view, true); }
  }
  const reload = () => load().catch((err) => notice(`cannot load the console: ${err.message}`, "error"));

  // Refetch from the first line still open (a bar being redrawn) or the first one announced.
  let pendingFrom = Infinity;
  const refetch = throttled(() => {
    const from = Math.min(pendingFrom, firstOpen(view), view.last + 1);
    pendingFrom = Infinity;
    fetchFrom(Math.max(0, from - 1)).catch((err) => notice(`cannot load the console: ${err.message}`, "error"));
  }, 250);

  connect(env, load, (m, again) => {
    if (m.env !== env && m.type !== "resync") return;
    if (m.type === "console" && m.rank === view.rank) {
      pendingFrom = Math.min(pendingFrom, Number(m.n) || 1);
      refetch();
    } else if (m.type === "console" && !view.ranks.includes(m.rank)) {
      setRanks(view, [...view.ranks, m.rank].sort((a, b) => a - b));
    } else if (m.type === "run") {
      badge.replaceChildren(statusBadge(m.run && m.run.status, m.run && (m.run.provenance || {}).source));
    } else if (m.type === "resync" && again) again();
  });
}

function firstOpen(view) {
  for (const [n, row] of view.lines) if (row.open) return n;
  return Infinity;
}

function setRanks(view, ranks) {
  if (ranks.join() === view.ranks.join()) return;
  view.ranks = ranks;
  const all = ranks.includes(view.rank) ? ranks : [view.rank, ...ranks].sort((a, b) => a - b);
  view.rankSel.replaceChildren(...all.map((r) => h("option", { value: String(r), selected: r === view.rank }, `rank ${r}`)));
  view.rankSel.hidden = all.length < 2;
  view.download.href = api.consoleDownloadUrl(view.env, view.rank);
}

/** Add or rewrite lines (in order); a traceback runs from its first line to its exception's line. */
function put(view, lines) {
  const frag = document.createDocumentFragment();
  for (const line of lines) {
    const known = view.lines.get(line.n);
    if (known) {
      known.open = !!line.open;
      known.text = line.text;
      known.el.querySelector(".tx").textContent = line.text;
      known.el.classList.toggle("open", known.open);
      markSearch(view, known);
      continue;
    }
    let tb = false;
    if (TB_START.test(line.text)) { view.tb = true; tb = true; }
    else if (view.tb) {
      tb = true;
      if (!/^\s/.test(line.text) && line.text !== "" && !TB_CHAIN.test(line.text) && TB_END.test(line.text)) view.tb = false;
    }
    const err = tb || ERROR.test(line.text);
    const el = h("div", { class: `cl ${line.stream}${err ? " err" : ""}${tb ? " tb" : ""}${line.open ? " open" : ""}`,
      dataset: { n: String(line.n) } },
      h("span", { class: "ln", text: String(line.n), title: new Date(line.t * 1000).toLocaleString() }),
      h("span", { class: "tx", text: line.text }));
    const row = { n: line.n, text: line.text, open: !!line.open, el, err };
    view.lines.set(line.n, row);
    markSearch(view, row);
    frag.append(el);
    view.last = Math.max(view.last, line.n);
  }
  view.box.append(frag);
  while (view.lines.size > MAX_LINES) {
    const [n, row] = view.lines.entries().next().value;
    row.el.remove();
    view.lines.delete(n);
  }
  view.empty.hidden = view.lines.size > 0;
}

function markSearch(view, row) {
  row.el.hidden = !!view.query && !row.text.toLowerCase().includes(view.query);
}

function applySearch(view) {
  for (const row of view.lines.values()) markSearch(view, row);
  showCount(view);
}

function showCount(view) {
  const total = view.lines.size;
  const errors = [...view.lines.values()].filter((r) => r.err).length;
  const shown = view.query ? [...view.lines.values()].filter((r) => !r.el.hidden).length : total;
  view.count.textContent = `${view.query ? `${counted(shown, "match", "matches")} of ` : ""}${counted(total, "line")}`
    + (errors ? ` · ${counted(errors, "error line")}` : "");
}

function toBottom(view) {
  requestAnimationFrame(() => window.scrollTo(0, document.documentElement.scrollHeight));
}

/** Scroll to the next block of highlighted lines (a traceback is one block; the first block with `first`). */
function jumpToError(view, first = false) {
  const starts = [...view.box.querySelectorAll(".cl.err:not([hidden])")]
    .filter((el) => !el.previousElementSibling || !el.previousElementSibling.classList.contains("err"));
  if (!starts.length) return;
  const current = view.box.querySelector(".cl.current");
  const target = starts[first || !current ? 0 : (starts.indexOf(current) + 1) % starts.length];
  for (const el of view.box.querySelectorAll(".cl.current")) el.classList.remove("current");
  target.classList.add("current");
  view.follow = false;
  view.followBox.checked = false;
  target.scrollIntoView({ block: "center" });
}
