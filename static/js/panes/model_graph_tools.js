// panes/model_graph_tools.js — the model graph's reading aids: fitting with legible labels, a node details panel,
// and a search box that opens the modules around its matches.

// Below this zoom the 11 px labels read under ~8 px: show the graph's top at READABLE_K instead (pan for the rest).
const MIN_FIT_K = 0.75;
const READABLE_K = 0.9;

/**
 * The view {k, x, y} for a graph of `bounds` in a W x H box: the whole graph when that keeps labels legible, else
 * its top centred at a legible zoom.
 */
export function fitView(bounds, W, H) {
  const whole = Math.min(1.5, Math.max(0.05, Math.min(W / (bounds.w + 40), H / (bounds.h + 40))));
  const k = whole >= MIN_FIT_K ? whole : READABLE_K;
  const y = k === whole ? Math.max(20, (H - k * bounds.h) / 2) - k * bounds.y : 20 - k * bounds.y;
  return { k, x: W / 2 - k * (bounds.x + bounds.w / 2), y };
}

function row(dl, term, value) {
  if (value === undefined || value === null || value === "") return;
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  dd.textContent = typeof value === "string" ? value : JSON.stringify(value);
  dl.append(dt, dd);
}

/** A panel over the graph showing one op: kind, name, module, output shape, attributes and inputs. */
export function detailsPanel(box, labelOf) {
  const el = document.createElement("div");
  el.className = "mg-details";
  el.hidden = true;
  el.dataset.escapeCloses = ""; // chrome.js: Escape closes it
  const close = document.createElement("button");
  close.type = "button";
  close.className = "mg-details-close";
  close.textContent = "\u00d7";
  close.title = "close";
  close.setAttribute("aria-label", "close the node details");
  close.addEventListener("click", () => { el.hidden = true; });
  const dl = document.createElement("dl");
  el.append(close, dl);
  box.append(el);
  return {
    el,
    show(node) {
      dl.replaceChildren();
      row(dl, "op", node.op);
      row(dl, "name", node.label);
      row(dl, "module", node.scope);
      row(dl, "shape", node.shape);
      row(dl, "attributes", node.attr);
      row(dl, "inputs", (node.inputs || []).map(labelOf).join(", "));
      el.dataset.node = node.id;
      el.hidden = false;
    },
    hide() {
      el.hidden = true;
    },
  };
}

/** Module scopes to open so that a node in `scope` is drawn on its own (every ancestor below the root). */
export function scopesToOpen(scope, root) {
  const parts = scope ? scope.split("/") : [];
  const out = [];
  for (let k = 1; k <= parts.length; k += 1) {
    const p = parts.slice(0, k).join("/");
    if (p !== root) out.push(p);
  }
  return out;
}

/** Nodes whose label, op or module matches `text` (case-insensitive substring); [] for an empty text. */
export function findNodes(nodes, text) {
  const needle = String(text || "").trim().toLowerCase();
  if (!needle) return [];
  return nodes.filter((n) => [n.label, n.op, n.scope].some((v) => typeof v === "string" && v.toLowerCase().includes(needle)));
}

/** A toolbar button. */
export function button(text, title, onclick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "btn mg-btn";
  b.textContent = text;
  b.title = title;
  b.addEventListener("click", onclick);
  return b;
}
