// frame_queue.js — runs queued per-key work (a pane's merged live points) in animation frames under a time budget.

// Script time per frame spent on queued work: half a 60 Hz frame, so the browser keeps time to lay out, paint and
// answer input; one Plotly redraw of a line pane costs ~10 ms here, so a frame may overrun by one item (then pay it
// back in the next frames).
const BUDGET_MS = 8;
const FRAME_MS = 1000 / 60;
const HIDDEN_TICK_MS = 250; // hidden tabs get no animation frames

// Chromium tells whether input waits behind this task (navigator.scheduling.isInputPending); elsewhere: never.
const inputPending = () => {
  const sched = navigator.scheduling;
  return !!(sched && sched.isInputPending && sched.isInputPending());
};

/**
 * A frame-budgeted queue. mark(key) queues key (once; a key marked again keeps its place); every animation frame
 * calls run(key) for the keys waiting longest, while the budget lasts. run(key) returns the milliseconds it took
 * (key done), or null when key is not ready (dropped; its owner marks it again when it is).
 */
export function frameQueue(run, { budget = BUDGET_MS } = {}) {
  const waiting = new Set(); // insertion order: the longest-waiting key first, so every pane gets its turn
  let scheduled = false;
  let credit = budget;
  let last = performance.now();

  function flush() {
    scheduled = false;
    const now = performance.now();
    // Credit refills with elapsed frames and carries a debt: an overrunning item delays the next ones.
    credit = Math.min(budget, credit + budget * Math.max(1, (now - last) / FRAME_MS));
    last = now;
    for (const key of [...waiting]) {
      if (credit <= 0 || inputPending()) break; // typing and clicks go first; the panes catch up next frame
      waiting.delete(key);
      const spent = run(key);
      if (spent !== null && spent !== undefined) credit -= Math.max(0, spent);
    }
    if (waiting.size) schedule();
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    if (document.hidden) setTimeout(flush, HIDDEN_TICK_MS);
    else requestAnimationFrame(flush);
  }

  return {
    mark(key) {
      waiting.add(key);
      schedule();
    },
    forget(key) {
      waiting.delete(key);
    },
    has: (key) => waiting.has(key),
    get size() {
      return waiting.size;
    },
  };
}
