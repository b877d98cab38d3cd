// panes/visdom_events.js — report pane interactions (KeyPress, Click, PropertyUpdate) to Visdom clients' handlers.

/** POST one Visdom callback event for this pane; failures are ignored (a handler is a nicety, not state). */
export function sendEvent(ctx, fields) {
  if (document.body.classList.contains("embed")) return Promise.resolve(); // read-only: no events back to scripts
  const body = JSON.stringify({ ...fields, target: ctx.win, eid: ctx.env });
  return fetch(ctx.url("vis_event"), { method: "POST", body, headers: { "Content-Type": "application/json" } })
    .then(() => undefined)
    .catch(() => undefined);
}

/** Visdom's KeyPress for a focused pane element: the key name and its legacy key code. */
export function reportKeys(el, ctx) {
  el.tabIndex = 0; // focusable, so keys reach the pane the user clicked
  const onKey = (e) => {
    if (e.target !== el) return; // typing inside a form control is not a pane key press
    sendEvent(ctx, { event_type: "KeyPress", key: e.key, key_code: e.keyCode });
  };
  el.addEventListener("keyup", onKey);
  return () => el.removeEventListener("keyup", onKey);
}
