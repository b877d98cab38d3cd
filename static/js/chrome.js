// chrome.js — page chrome shared by every page: the theme button, the header menu on narrow screens, Escape.
import { themeButton } from "./theme.js";

/** Close whatever floats over the page: pane menus, the header menu, open dialogs, fullscreen panes. */
export function closeFloating() {
  let closed = false;
  for (const el of document.querySelectorAll(".menu-list")) {
    el.remove();
    closed = true;
  }
  const bar = document.querySelector(".topbar");
  if (bar && bar.dataset.menu === "open") {
    setMenu(bar, false);
    closed = true;
  }
  for (const d of document.querySelectorAll("dialog[open]")) {
    d.close();
    closed = true;
  }
  for (const el of document.querySelectorAll("[data-escape-closes]:not([hidden])")) {
    el.hidden = true;
    closed = true;
  }
  return closed;
}

function setMenu(bar, open) {
  bar.dataset.menu = open ? "open" : "";
  const btn = bar.querySelector(".tools-toggle");
  if (btn) btn.setAttribute("aria-expanded", String(open));
}

const NARROW = 760; // px: below this the tools are always in the menu

/** Fold the header's buttons into the menu (data-crowded) on a narrow screen, or whenever they would squeeze the
 * page's name (an env page's many actions beside a long name), and unfold them once the header is wide enough. */
function watchCrowding(bar) {
  let needed = 0; // the header width the unfolded tools needed when they last folded
  const check = () => {
    const narrow = window.innerWidth <= NARROW;
    if (bar.dataset.crowded === "1") {
      if (!narrow && bar.clientWidth >= needed) {
        bar.dataset.crowded = "";
        requestAnimationFrame(check); // measure the unfolded header once it is laid out
      }
      return;
    }
    // The name, the run's status and its console link do not shrink (CSS): squeezed, they run past the end of
    // their crumbs, under the pane filter ("console" showed as "conso" at 1400 px when only the first two counted).
    const kept = [...bar.querySelectorAll(".crumbs .crumb-current, .crumbs .run-badge, .crumbs .crumb-console")];
    const crumbs = kept.length ? kept[0].closest(".crumbs") : null;
    const squeezed = crumbs ? Math.max(...kept.map((el) => el.getBoundingClientRect().right))
      - crumbs.getBoundingClientRect().right : 0;
    const over = bar.scrollWidth - bar.clientWidth;
    if (narrow || squeezed > 1 || over > 1) {
      needed = bar.clientWidth + Math.max(squeezed, 0) + Math.max(over, 0);
      bar.dataset.crowded = "1";
    }
  };
  new ResizeObserver(check).observe(bar);
  // Pages fill the header after setup (the env name, the tools): measure again when its content changes.
  new MutationObserver(() => requestAnimationFrame(check)).observe(bar, { childList: true, subtree: true });
  check();
}

/** Add the theme button and the narrow-screen menu button to the top bar; Escape closes floating things. */
export function setupChrome() {
  const bar = document.querySelector(".topbar");
  const tools = document.getElementById("tools");
  if (bar && tools) {
    // Below ~760 px the header's tools fold into this menu (CSS), so the page never scrolls sideways.
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = "tools-toggle";
    toggle.textContent = "\u2630";
    toggle.title = "page actions";
    toggle.setAttribute("aria-label", "page actions");
    toggle.setAttribute("aria-controls", "tools");
    toggle.setAttribute("aria-expanded", "false");
    toggle.addEventListener("click", (e) => {
      e.stopPropagation();
      setMenu(bar, bar.dataset.menu !== "open");
    });
    bar.insertBefore(toggle, tools);
    document.addEventListener("click", (e) => {
      if (bar.dataset.menu === "open" && !tools.contains(e.target)) setMenu(bar, false);
    });
    bar.insertBefore(themeButton(), document.getElementById("live"));
    watchCrowding(bar);
  }
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !e.defaultPrevented && closeFloating()) e.preventDefault();
  });
}
