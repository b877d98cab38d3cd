// panes/visdom_events.js — report pane interactions (KeyPress, Click, PropertyUpdate) to Visdom clients' handlers.

// One POST at a time: concurrent requests can reach the server in any order, and a script's handler must see a
// checkbox ticked before the select changed after it, as Visdom's socket delivers them.
let queue = Promise.resolve();

/** POST one Visdom callback event for this pane, after those sent before it; failures are ignored (a handler is
 * a nicety, not state). */
export function sendEvent(ctx, fields) {
  if (document.body.classList.contains("embed")) return Promise.resolve(); // read-only: no events back to scripts
  const body = JSON.stringify({ ...fields, target: ctx.win, eid: ctx.env });
  queue = queue.then(() => fetch(ctx.url("vis_event"), { method: "POST", body,
                                                         headers: { "Content-Type": "application/json" } }))
    .then(() => undefined)
    .catch(() => undefined);
  return queue;
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
