// panes/text.js — text panes: the server-sanitized HTML (data.html) inserted into the card body; keys typed in a
// focused pane go to Visdom clients' handlers as KeyPress events.
import { reportKeys } from "./visdom_events.js";

export function render(el, pane, ctx) {
  const box = document.createElement("div");
  box.className = "text-pane";
  el.appendChild(box);
  const unkeys = reportKeys(box, ctx);

  function set(p) {
    // Log-like panes (update mode append): stay pinned to the bottom if the reader was there.
    const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 4;
    const html = p.data && typeof p.data.html === "string" ? p.data.html : "";
    // data.html is sanitized by the server (nh3); the CSP forbids inline scripts and handlers on top of that.
    box.innerHTML = html;
    if (atBottom && box.scrollTop > 0) box.scrollTop = box.scrollHeight;
    ctx.setInfo("", "");
  }

  set(pane);
  return {
    ready: Promise.resolve(),
    update: set,
    extend: () => ctx.refetch(), // text changes come as `pane` messages; anything else: refetch
    destroy: () => {
      unkeys();
      box.remove();
    },
  };
}
