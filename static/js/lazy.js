// lazy.js — which pane cards are near the viewport, and a small fetch pool: only the panes in view load and update.

// Cards this close below (or above) the viewport count as in view, so a slow scroll finds them already drawn.
const MARGIN_PX = 200;

/** Whether el is laid out and within MARGIN_PX of the viewport now (a synchronous layout read). */
export function nearViewport(el) {
  if (!el.isConnected || el.hidden) return false;
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return false; // display: none (a filtered card)
  const vh = window.innerHeight || document.documentElement.clientHeight;
  const vw = window.innerWidth || document.documentElement.clientWidth;
  return r.bottom >= -MARGIN_PX && r.top <= vh + MARGIN_PX && r.right >= 0 && r.left <= vw;
}

/** slot.visible, mirrored as the card's data-inview (tests and styles can see which panes follow live updates). */
function mark(slot, visible) {
  slot.visible = visible;
  if (visible) slot.card.dataset.inview = "1";
  else delete slot.card.dataset.inview;
}

/** Observes slots' cards within marginPx of the viewport; onEntry(slot, entry) for each intersection change. */
function slotObserver(onEntry, marginPx) {
  const slotOf = new WeakMap();
  const io = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const slot = slotOf.get(e.target);
      if (slot) onEntry(slot, e);
    }
  }, { rootMargin: `${marginPx}px 0px` });
  return {
    observe(slot) {
      slotOf.set(slot.card, slot);
      io.observe(slot.card);
    },
    unobserve(slot) {
      io.unobserve(slot.card);
      slotOf.delete(slot.card);
    },
  };
}

/**
 * Tracks slot.visible ({card, visible}) for every observed slot; onEnter(slot) runs when a card comes into view.
 * measure(slot) reads it synchronously, for the first load, which must not wait a frame for the observer.
 */
export function visibility(onEnter) {
  const observer = slotObserver((slot, e) => {
    const was = slot.visible;
    mark(slot, e.isIntersecting);
    if (slot.visible && !was) onEnter(slot);
  }, MARGIN_PX);
  return {
    ...observer,
    measure(slot) {
      mark(slot, nearViewport(slot.card));
      return slot.visible;
    },
  };
}

/**
 * Calls onFar(slot) when an observed slot's card goes further than marginPx from the viewport (or out of the
 * document): a page of thousands of panes clears the views scrolled far away, so the drawn ones stay few.
 */
export function farAway(onFar, marginPx) {
  return slotObserver((slot, e) => { if (!e.isIntersecting) onFar(slot); }, marginPx);
}

/**
 * afterScroll(quietMs) returns settled(fn), which runs fn once the page has not scrolled for quietMs: a page of thousands of panes draws the ones a fast
 * scroll passes when it stops there, not while frames are due (each Plotly draw is tens of milliseconds).
 */
export function afterScroll(quietMs) {
  let last = -Infinity;
  let timer = null;
  const queue = new Set();
  window.addEventListener("scroll", () => { last = performance.now(); }, { passive: true, capture: true });
  const run = () => {
    const wait = last + quietMs - performance.now();
    if (wait > 0) {
      timer = setTimeout(run, wait);
      return;
    }
    timer = null;
    const due = [...queue];
    queue.clear();
    for (const fn of due) fn();
  };
  return (fn) => {
    queue.add(fn);
    if (!timer) timer = setTimeout(run, Math.max(0, last + quietMs - performance.now()));
  };
}

/** run(fn) calls fn() with at most `size` calls in flight; the rest wait in order. Returns fn's promise. */
export function pool(size) {
  let active = 0;
  const queue = [];
  const next = () => {
    while (active < size && queue.length) {
      const job = queue.shift();
      active += 1;
      Promise.resolve().then(job.fn).then(job.resolve, job.reject).finally(() => {
        active -= 1;
        next();
      });
    }
  };
  return (fn) => new Promise((resolve, reject) => {
    queue.push({ fn, resolve, reject });
    next();
  });
}
