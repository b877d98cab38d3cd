// panes/text.js — text panes: the server-sanitized HTML (data.html) inserted into the card body; keys typed in a
// focused pane go to Visdom clients' handlers as KeyPress events.
import { reportKeys } from "./visdom_events.js";

/** The one <svg> of a pane that shows nothing else (Visdom's svg/matplot panes), or null. */
function loneSvg(box) {
  const svgs = box.querySelectorAll("svg");
  if (svgs.length !== 1 || box.querySelector("img, video, audio, table, canvas")) return null;
  const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.textContent.trim() && !n.parentElement.closest("svg, style")) return null;
  }
  return svgs[0];
}

/**
 * Draw a lone SVG whole, scaled to the card (a matplotlib figure is 614×461 px; the card's scroll box cut it off).
 * Inline styles, not app.css rules: only this pane kind needs them.
 */
function fitSvg(box, svg) {
  const num = (v) => Number.parseFloat(v || "");
  if (!svg.getAttribute("viewBox") && num(svg.getAttribute("width")) > 0 && num(svg.getAttribute("height")) > 0) {
    svg.setAttribute("viewBox", `0 0 ${num(svg.getAttribute("width"))} ${num(svg.getAttribute("height"))}`);
  }
  const vb = (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
  Object.assign(box.style, { maxHeight: "none", height: "100%", overflow: "hidden", boxSizing: "border-box" });
  const scope = svg.closest(".svg-scope");
  if (scope) scope.style.height = "100%";
  Object.assign(svg.style, { display: "block", width: "100%", height: "100%", maxHeight: "100%" });
  if (vb.length === 4 && vb[2] > 0 && vb[3] > 0) svg.style.aspectRatio = `${vb[2]} / ${vb[3]}`;
  box.classList.add("svg-fit");
}

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
    box.classList.remove("svg-fit");
    box.removeAttribute("style");
    const svg = loneSvg(box);
    if (svg) fitSvg(box, svg);
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
