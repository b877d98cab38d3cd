"""Frame-budgeted live rendering (Chromium, real server and SDK): the frame queue's budget and order, and an env page
under a burst of appends drawing each pane at most once per frame, merged, with every point and the final counters."""

from __future__ import annotations

from helpers.browser import XY, env_url, flushed

# Runs in the page: a frame queue whose work busy-waits `cost` ms per key, recording each key's frame
# (document.timeline.currentTime is the frame's time inside animation-frame callbacks).
QUEUE = """async ({ keys, cost, budget, again, skip }) => {
  const { frameQueue } = await import("/static/js/frame_queue.js");
  const runs = [];
  const q = frameQueue((k) => {
    runs.push([k, document.timeline.currentTime]);
    if (k === skip) return null;
    const t = performance.now();
    while (performance.now() - t < cost) {}
    return performance.now() - t;
  }, { budget });
  for (const k of keys) q.mark(k);
  for (const k of again) q.mark(k);
  while (q.size) await new Promise((r) => requestAnimationFrame(r));
  await new Promise((r) => requestAnimationFrame(r));
  return runs;
}"""


def per_frame(runs: list) -> list[int]:
    frames: dict[float, int] = {}
    for _, t in runs:
        frames[t] = frames.get(t, 0) + 1
    return list(frames.values())


def test_frame_queue_runs_each_key_once_oldest_first_within_the_budget(server, tab):
    tab.open(server.url)
    keys = [f"k{i}" for i in range(6)]
    # Heavy work (12 ms > the 8 ms budget): one key per frame, the overrun paid back before the next.
    runs = tab.js(QUEUE, {"keys": keys, "cost": 12, "budget": 8, "again": ["k0", "k3"], "skip": None})
    assert [k for k, _ in runs] == keys  # marked again while waiting: keeps its place, runs once
    assert per_frame(runs) == [1] * len(keys)
    # Light work (1 ms): several keys share a frame, but no frame takes more than the budget's worth.
    keys = [f"l{i}" for i in range(30)]
    runs = tab.js(QUEUE, {"keys": keys, "cost": 1, "budget": 8, "again": [], "skip": "l5"})
    assert [k for k, _ in runs] == keys  # a key not ready (null) is dropped, not retried
    counts = per_frame(runs)
    assert max(counts) <= 9 and len(counts) >= 4, counts
    assert tab.errors == []


def test_env_page_draws_a_burst_merged_once_per_pane_per_frame(server, sdk, tab):
    c = sdk("burst")
    wins = ["a", "b", "c"]
    for w in wins:
        c.line(Y=[0.0], X=[0], win=w, opts={"title": f"train/{w}"})
    flushed(c)
    tab.open(env_url(server, "burst"))
    tab.js("""() => {
      window.__calls = [];
      const orig = window.Plotly.extendTraces;
      window.Plotly.extendTraces = function (gd, update, idx) {
        window.__calls.push([gd.closest("[data-win]").dataset.win, document.timeline.currentTime, update.y[0].length]);
        return orig.apply(this, arguments);
      };
    }""")
    n = 300
    for i in range(1, n + 1):  # one event per point, as fast as the SDK takes them
        for w in wins:
            c.line(Y=[float(i)], X=[i], win=w, update="append")
    flushed(c)
    for w in wins:
        tab.wait(f"() => {XY.format(win=w)}.data[0].x.length === {n + 1}")
        assert tab.js(f"() => Array.from({XY.format(win=w)}.data[0].x)") == list(range(n + 1))
    calls = tab.js("() => window.__calls")
    pairs = [(w, t) for w, t, _ in calls]
    assert len(pairs) == len(set(pairs)), "a pane was redrawn twice in one frame"
    assert sum(k for _, _, k in calls) == n * len(wins)
    assert len(calls) < len(wins) * n, "the appends were not merged"
    assert max(k for _, _, k in calls) > 1
    # The header's counters are throttled, but their last update shows the final count.
    tab.wait(f"() => document.getElementById('env-stats').textContent.includes('{(n + 1) * len(wins):,} points')")
    assert tab.errors == []
