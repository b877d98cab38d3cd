// checkpoints.js — the steps at which each env's run logged an artifact (its checkpoints), shared by the run
// panel (which reads them from api/v1/envs/<env>/artifacts) and the line panes (which mark them on their curves).
const steps = new Map(); // env -> sorted steps
const listeners = new Set();

/** Set an env's checkpoint steps; line panes of that env redraw their markers if they changed. */
export function setCheckpointSteps(env, list) {
  const next = [...new Set(list.filter(Number.isFinite))].sort((a, b) => a - b);
  const prev = steps.get(env) || [];
  if (prev.length === next.length && prev.every((s, i) => s === next[i])) return;
  steps.set(env, next);
  for (const fn of listeners) fn(env);
}

export const checkpointSteps = (env) => steps.get(env) || [];

/** Call fn(env) whenever an env's steps change; returns the unsubscribe function. */
export function onCheckpoints(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Plotly shapes: a dotted vertical line per step, across the plot's height. */
export function checkpointShapes(env) {
  return checkpointSteps(env).map((x) => ({ type: "line", name: "checkpoint", xref: "x", yref: "paper", x0: x, x1: x,
    y0: 0, y1: 1, line: { color: "#8a94a6", width: 1, dash: "dot" }, layer: "below" }));
}
