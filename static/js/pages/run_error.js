// pages/run_error.js — a failed or crashed run's banner on its page: the exception's last line and the step it
// stopped at, the traceback one click away, and a status badge that leads to it.
import * as api from "../api.js";
import { h } from "../dom.js";

const BAD = new Set(["failed", "crashed"]);

/** The line of a traceback that names the exception ("ValueError: bad lr"): its last non-blank line. */
export function lastLine(text) {
  const lines = String(text || "").split("\n").map((s) => s.trim()).filter(Boolean);
  return lines.length ? lines[lines.length - 1] : "";
}

const fmtStep = (s) => (Number.isInteger(s) ? s.toLocaleString("en-US") : String(Number(s.toPrecision(6))));

/**
 * The banner of run `env` (el, hidden while the run is fine); draw(run) fills it from GET .../run, reveal() shows
 * it with its traceback open (what a click on the status badge does).
 */
export function errorBanner(env) {
  const el = h("section", { class: "run-error-banner", id: "run-error", role: "alert", hidden: true, "aria-label": "run error" });
  let open = false; // the traceback's state survives redraws (live messages redraw the banner)

  function draw(run) {
    const bad = !!run && BAD.has(run.status);
    el.hidden = !bad;
    if (!bad) return el.replaceChildren();
    const step = Number.isFinite(run.last_step) ? ` at step ${fmtStep(run.last_step)}` : "";
    const what = run.error ? lastLine(run.error)
      : run.status === "crashed" ? "its job stopped without a clean end (killed, out of memory, or its machine went away)"
        : "no traceback was reported";
    const parts = [h("strong", { class: "run-error-status", text: `${run.status}${step}` }), ": ",
      h("code", { class: "run-error-line", text: what })];
    const kids = [h("div", { class: "run-error-head" }, h("span", { class: "run-error-what" }, ...parts),
      h("span", { class: "run-error-links" }, ...links(run)))];
    if (run.error) {
      const details = h("details", { class: "run-error-trace", open, ontoggle: () => { open = details.open; } },
        h("summary", { text: "traceback" }), h("pre", { text: run.error }));
      kids.push(details);
    }
    el.replaceChildren(...kids);
  }

  function links(run) {
    // The console's #error scrolls to a traceback: offered only when the run reported one.
    const out = [h("a", { class: "act-console-error", href: api.consolePageUrl(env) + (run.error ? "#error" : "") },
      run.error ? "traceback in the console" : "console output")];
    return out;
  }

  function reveal() {
    if (el.hidden) return;
    const details = el.querySelector("details.run-error-trace");
    if (details) details.open = open = true;
    el.scrollIntoView({ block: "nearest" });
  }

  return { el, draw, reveal };
}

/** The status pill as a link to the banner for a failed or crashed run (a plain pill otherwise). */
export function statusLink(pill, status, reveal) {
  if (!BAD.has(status)) return pill;
  return h("a", { class: "run-status-link", href: "#run-error", title: `run ${status}: show why`,
    onclick: (ev) => { ev.preventDefault(); reveal(); } }, pill);
}
