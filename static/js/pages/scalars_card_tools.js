// pages/scalars_card_tools.js — a Scalars chart's own buttons: download it as PNG, expand it to the full width.
import { pictureOf } from "../canvas_lines.js";
import { h } from "../dom.js";

/** [download, expand] buttons for the card holding `plot` (a Plotly div), for the chart of tag `tag`. */
export function cardTools(plot, tag) {
  const file = String(tag).replace(/[^\w.-]+/g, "_") || "chart";
  const download = h("button", { type: "button", class: "card-tool sc-download", title: "download PNG",
    "aria-label": `download ${tag} as PNG`, onclick: async () => {
      if (!window.Plotly) return;
      const a = h("a", { href: await pictureOf(window.Plotly, plot), download: `${file}.png`, hidden: true });
      document.body.append(a); // some browsers follow a download link only from the document
      a.click();
      a.remove();
    } }, "\u2913");
  const expand = h("button", { type: "button", class: "card-tool sc-expand", title: "expand", "aria-pressed": "false",
    "aria-label": `expand ${tag}`, onclick: () => {
      const card = plot.closest(".sc-card");
      const on = !card.classList.contains("sc-expanded");
      card.classList.toggle("sc-expanded", on);
      expand.setAttribute("aria-pressed", String(on));
      expand.title = on ? "shrink" : "expand";
      if (on) card.scrollIntoView({ block: "nearest" });
      if (window.Plotly) requestAnimationFrame(() => window.Plotly.Plots.resize(plot).catch(() => {}));
    } }, "\u2922");
  return [download, expand];
}
