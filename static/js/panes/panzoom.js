// panes/panzoom.js — pan and zoom of a picture: the wheel zooms about the pointer, a drag pans, a double-click resets.

const MIN = 1;
const MAX = 32;

/** Pan and zoom `stage` (transformed) inside `frame` (which clips it); returns {reset, state}. */
export function panZoom(frame, stage) {
  const state = { k: 1, x: 0, y: 0 };
  const apply = () => {
    stage.style.transform = state.k === 1 && !state.x && !state.y ? "" : `translate(${state.x}px, ${state.y}px) scale(${state.k})`;
    stage.dataset.zoom = state.k.toFixed(3);
  };
  stage.style.transformOrigin = "0 0";
  frame.addEventListener("wheel", (ev) => {
    ev.preventDefault(); // the page would scroll instead
    const r = frame.getBoundingClientRect();
    const px = ev.clientX - r.left;
    const py = ev.clientY - r.top;
    const k = Math.min(MAX, Math.max(MIN, state.k * Math.exp(-ev.deltaY / 300)));
    // Keep the picture's point under the pointer where it is.
    state.x = px - (px - state.x) * (k / state.k);
    state.y = py - (py - state.y) * (k / state.k);
    state.k = k;
    if (k === MIN) state.x = state.y = 0;
    apply();
  }, { passive: false });
  let drag = null;
  frame.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || state.k === 1) return;
    drag = { id: ev.pointerId, x: ev.clientX - state.x, y: ev.clientY - state.y };
    frame.setPointerCapture(ev.pointerId);
    frame.classList.add("panning");
  });
  frame.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    state.x = ev.clientX - drag.x;
    state.y = ev.clientY - drag.y;
    apply();
  });
  const end = () => { drag = null; frame.classList.remove("panning"); };
  frame.addEventListener("pointerup", end);
  frame.addEventListener("pointercancel", end);
  const reset = () => { state.k = 1; state.x = state.y = 0; apply(); };
  frame.addEventListener("dblclick", reset);
  return { reset, state };
}
