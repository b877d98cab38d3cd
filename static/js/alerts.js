// alerts.js — env page banner for the SDK's health alerts: shown while the env's "alerts" pane has rows, dismissible.
import * as api from "./api.js";
import { h } from "./dom.js";
import { getItem, setItem } from "./storage.js";

const WIN = "alerts"; // the pane paneboard.alerts writes (client_sdk/hooks/alerts.py ALERTS_WIN)

/** Text rows of the alerts pane's HTML: one per <br>, the header line ("alerts (time · step · ...)") left out. */
function rows(html) {
  const doc = new DOMParser().parseFromString(String(html || ""), "text/html"); // inert: nothing runs or loads
  for (const br of doc.body.querySelectorAll("br")) br.replaceWith("\n");
  return doc.body.textContent.split("\n").map((s) => s.trim()).filter((s) => s && !/^alerts \(/.test(s));
}

/**
 * Banner for `env`. sync(panes) after each load of the pane summaries; onMessage(m) for every live message;
 * showPane(win) brings the alerts card into the page (paged out or not) and scrolls to it. Dismissal lasts until
 * a new alert arrives (per tab).
 */
export function alertsBanner(env, showPane) {
  const key = `paneboard.alerts.dismissed.${env}`;
  const text = h("span", { class: "alerts-text" });
  const show = h("button", { type: "button", class: "alerts-show", text: "show", onclick: () => showPane(WIN) });
  const dismiss = h("button", { type: "button", class: "alerts-dismiss", title: "dismiss until the next alert",
    "aria-label": "dismiss", text: "×", onclick: () => {
      setItem("session", key, String(count));
      render();
    } });
  const el = h("div", { class: "alerts-banner", role: "alert", hidden: true, dataset: { count: "0" } },
    h("strong", { text: "⚠ " }), text, show, dismiss);
  let count = 0;
  let latest = "";
  let version = null;
  let inflight = null;

  function render() {
    const dismissed = Number(getItem("session", key) || 0);
    el.dataset.count = String(count);
    el.hidden = count === 0 || count <= dismissed;
    text.textContent = count ? `${count} alert${count === 1 ? "" : "s"} in this run. Latest: ${latest}` : "";
  }

  async function refresh() {
    if (inflight) return inflight;
    inflight = (async () => {
      try {
        const pane = await api.getPane(env, WIN, 1);
        const r = rows(pane && pane.data ? pane.data.html : "");
        count = r.length;
        latest = r.length ? r[r.length - 1] : "";
        version = pane ? pane.version : null;
      } catch (err) {
        if (err.status !== 404) console.warn("paneboard: alerts pane", err);
        count = 0;
      } finally {
        inflight = null;
      }
      render();
    })();
    return inflight;
  }

  return {
    el,
    /** After a (re)load of the env's pane summaries. */
    sync(panes) {
      const p = (panes || []).find((x) => x.win === WIN);
      if (!p) {
        count = 0;
        render();
      } else if (p.version !== version) refresh();
    },
    /** A live message: refetch on a change to the alerts pane, clear on its close. */
    onMessage(m) {
      if (m.type === "close" && (m.win === WIN || m.win === null || m.win === undefined)) {
        count = 0;
        version = null;
        render();
      } else if ((m.type === "pane" || m.type === "extend") && m.win === WIN && m.version !== version) refresh();
    },
  };
}
