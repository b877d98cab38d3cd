// panes/properties.js — Visdom's property editor: one row per field; an edit is sent to the Visdom client's
// handlers as PropertyUpdate {propertyId, value} (the script decides what to store and re-sends the pane).
import { sendEvent } from "./visdom_events.js";

function field(p, i, ctx) {
  const send = (value) => sendEvent(ctx, { event_type: "PropertyUpdate", propertyId: i, value });
  let input;
  if (p.type === "button") {
    input = document.createElement("button");
    input.type = "button";
    input.textContent = p.value == null ? "" : String(p.value);
    input.addEventListener("click", () => send(p.value ?? null));
    return input;
  }
  if (p.type === "select") {
    input = document.createElement("select");
    (Array.isArray(p.values) ? p.values : []).forEach((v, k) => {
      const o = document.createElement("option");
      o.value = String(k);
      o.textContent = String(v);
      input.appendChild(o);
    });
    input.value = String(Number(p.value) || 0);
    input.addEventListener("change", () => send(Number(input.value)));
    return input;
  }
  input = document.createElement("input");
  if (p.type === "checkbox") {
    input.type = "checkbox";
    input.checked = !!p.value;
    input.addEventListener("change", () => send(input.checked));
    return input;
  }
  input.type = p.type === "number" ? "number" : "text";
  input.value = p.value == null ? "" : String(p.value);
  input.addEventListener("change", () => send(input.value)); // Visdom sends the text as typed
  return input;
}

export function render(el, pane, ctx) {
  const table = document.createElement("table");
  table.className = "properties-pane";
  el.appendChild(table);

  function set(p) {
    const props = p.data && Array.isArray(p.data.properties) ? p.data.properties : [];
    table.replaceChildren(
      ...props.map((prop, i) => {
        const tr = document.createElement("tr");
        const th = document.createElement("th");
        th.textContent = String(prop.name ?? ""); // text, never markup
        const td = document.createElement("td");
        td.appendChild(field(prop, i, ctx));
        tr.append(th, td);
        return tr;
      }),
    );
    ctx.setInfo(`${props.length} field${props.length === 1 ? "" : "s"}`, "");
  }

  set(pane);
  return {
    ready: Promise.resolve(),
    update: set,
    extend: () => ctx.refetch(),
    destroy: () => table.remove(),
  };
}
