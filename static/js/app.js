// app.js — paneboard UI entry: reads the boot blob, shows status and live state, hands the page to pages/<page>.js.
import * as api from "./api.js";
import { setupChrome } from "./chrome.js";
import { follow } from "./live.js";
import { relTime } from "./dom.js";
import { envPage } from "./pages/env.js";
import { envListPage } from "./pages/envlist.js";
import { comparePage } from "./pages/compare.js";
import { scalarsPage } from "./pages/scalars.js";
import { hparamsPage } from "./pages/hparams.js";
import { runsPage } from "./pages/runs.js";
import { consolePage } from "./pages/console.js";
import { sweepPage } from "./pages/sweep.js";
import { sweepsPage } from "./pages/sweeps.js";
import { loadRunColors } from "./run_colors.js";

const boot = readBoot();
api.setBase(boot.base);
setupChrome();
const POINTS = Number(boot.points) > 0 ? Number(boot.points) : 2000;

function readBoot() {
  const el = document.getElementById("boot");
  let b = {};
  try {
    b = JSON.parse(el ? el.textContent : "{}") || {};
  } catch (err) {
    console.warn("paneboard: bad boot blob", err);
  }
  return { page: "envs", env: null, base: "/", points: 2000, ...b };
}

// Relative times ("5 s ago") made by dom.js timeEl stay fresh.
setInterval(() => {
  for (const el of document.querySelectorAll("time[data-ts]")) el.textContent = relTime(Number(el.dataset.ts));
}, 1000);

const $ = (id) => document.getElementById(id);

function notice(text, kind = "info") {
  const el = $("notice");
  el.textContent = text || "";
  el.dataset.kind = kind;
  el.hidden = !text;
}

function setLiveState(state) {
  const el = $("live");
  el.dataset.state = state;
  el.querySelector(".live-label").textContent = { open: "live", connecting: "connecting…", closed: "offline" }[state] || state;
  el.title = state === "open" ? "live updates on" : "live connection lost, reconnecting";
  if (state === "open") document.body.dataset.live = "1";
  else delete document.body.dataset.live;
}

/** Follow the live channel for `subscribe` (env or null): load() on every (re)connect, handle(msg, reload) per message. */
const connect = (subscribe, load, handle) => follow({
  base: boot.base, subscribe, load, handle, onState: setLiveState,
  onError: (err) => notice(`cannot load: ${err.message}`, "error"),
  onReady: () => { document.body.dataset.ready = "1"; },
});

// ---------------------------------------------------------------- boot
// Pages that draw runs read the colours users chose first, so no run is drawn in its name's colour and then changes.
if (["compare", "scalars", "hparams", "runs"].includes(boot.page)) await loadRunColors();
document.body.dataset.page = boot.page; // the top bar marks the section it is in (app.css)
if (boot.readonly) document.body.dataset.readonly = "1"; // a share link: the server refuses writes; hide their buttons
if (boot.page === "env" && boot.env !== null && boot.env !== undefined) {
  envPage({ env: String(boot.env), connect, points: POINTS, notice, only: boot.embed && boot.win ? String(boot.win) : null });
}
else if (boot.page === "console" && boot.env !== null && boot.env !== undefined) {
  consolePage({ env: String(boot.env), connect, notice });
}
else if (boot.page === "compare") comparePage({ connect, points: POINTS, notice });
else if (boot.page === "scalars") scalarsPage({ connect, points: POINTS, notice });
else if (boot.page === "hparams") hparamsPage({ connect, notice });
else if (boot.page === "runs") runsPage({ connect, notice });
else if (boot.page === "sweep") sweepPage({ connect, notice });
else if (boot.page === "sweeps") sweepsPage({ connect, notice });
else envListPage({ connect, notice });
