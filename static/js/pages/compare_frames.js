// pages/compare_frames.js — the frames of Compare's image scrub: each slider step's answer, read ahead in the scrub's
// direction (one request brings AROUND positions either side), and its pictures decoded before they are swapped in.
import * as api from "../api.js";

const AROUND = 16; // slider positions either side of a read (the server allows 32: bigger answers, later first frame)
const LOOK = 3 * AROUND; // positions ahead in the scrub's direction kept requested, so the scrub never waits on a read
const MAX_READS = 2; // reads in flight at once: more would only queue behind each other on the server
const DECODE_AHEAD = 3; // positions ahead whose pictures are decoded before the scrub gets there
const HELD = 16 * 16; // decoded pictures held, the oldest dropped first (16 runs x 16 positions)

/** A reader over `query(step)` (the section's URL for a step); `url` resolves a picture's src. */
export function frameReader(query, url) {
  const frames = new Map(); // step key -> Promise of the answer (a read in flight or done)
  const ready = new Set(); // step keys whose answer has come
  const pictures = new Map(); // picture URL -> {img, done}: the decoded picture stays alive while held
  let reads = 0;

  const keyOf = (step) => (step === null ? "latest" : String(step));

  function hold(key, promise) {
    frames.set(key, promise);
    promise.then(() => ready.add(key), () => { if (frames.get(key) === promise) frames.delete(key); });
  }

  /** Read the answer at steps[at] (null: each run's newest) and the positions around it, each cached under its step. */
  function read(steps, at) {
    const step = at === null ? null : steps[at];
    const answer = api.getJson(`${query(step)}${at === null ? "" : `&around=${AROUND}`}`);
    reads += 1;
    answer.finally(() => { reads -= 1; }).catch(() => {});
    hold(keyOf(step), answer);
    if (at === null) return;
    for (let i = Math.max(at - AROUND, 0); i <= Math.min(at + AROUND, steps.length - 1); i++) {
      const key = String(steps[i]);
      if (frames.has(key)) continue;
      // A step the server's union lacks (new data since the slider was set) is read on its own when the scrub gets there.
      hold(key, answer.then((res) => {
        const f = (res.frames || []).find((x) => String(x.step) === key);
        if (!f) throw new Error(`no frame at step ${key}`);
        return f;
      }));
    }
    answer.then((res) => {
      // The pictures into the HTTP cache (blobs are content-addressed, cached for good): decoding them needs no read.
      for (const f of res.frames || []) for (const r of f.runs) if (r.records[0]) new Image().src = url(r.records[0].src);
    }, () => {});
  }

  /** The picture at `src` decoded: resolves when swapping it into an <img> paints without waiting on a decode. */
  function decoded(src) {
    let p = pictures.get(src);
    if (p) {
      pictures.delete(src); // to the newest end
    } else {
      const img = new Image();
      img.decoding = "async";
      img.src = src;
      p = { img, done: img.decode().catch(() => {}) };
    }
    pictures.set(src, p);
    while (pictures.size > HELD) pictures.delete(pictures.keys().next().value);
    return p.done;
  }

  /** Every run's shown picture of an answer decoded. */
  const decodeAll = (res) => Promise.all(res.runs.map((r) => (r.records[0] ? decoded(url(r.records[0].src)) : null)));

  return {
    /** The answer at `step` (a slider step, or null: each run's newest), read with its neighbours unless cached. */
    get(steps, step) {
      const key = keyOf(step);
      if (!frames.has(key)) read(steps, step === null ? null : steps.indexOf(step));
      return frames.get(key);
    },
    isReady: (step) => ready.has(keyOf(step)),
    seed(step, answer) { hold(keyOf(step), Promise.resolve(answer)); },
    decodeAll,
    /** Keep LOOK positions ahead of steps[at] requested (dir: +1, -1, or 0 for both ways) and the next few decoded. */
    ahead(steps, at, dir) {
      for (const d of dir ? [dir] : [1, -1]) {
        for (let j = at; j >= 0 && j < steps.length && Math.abs(j - at) <= LOOK; j += d) {
          if (frames.has(String(steps[j]))) continue;
          if (reads < MAX_READS) read(steps, Math.max(0, Math.min(steps.length - 1, j + d * AROUND)));
          break;
        }
        for (let k = 1; k <= DECODE_AHEAD; k++) {
          const key = String(steps[at + d * k]);
          if (ready.has(key)) frames.get(key).then(decodeAll, () => {});
        }
      }
    },
  };
}
