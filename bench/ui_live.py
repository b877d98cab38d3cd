"""Live-stream smoothness of an open env page in Chromium: fps, long tasks and typing latency while panes stream.

Streams N panes x R appends/s (one point per pane per tick, through the SDK) into an env whose page is open, and
prints the page's frame rate, its long tasks (PerformanceObserver "longtask") and the latency of keys typed into the
pane filter meanwhile (from the key event's timeStamp to the frame painted after it):
    python bench/ui_live.py [--scenarios 10x50,20x100] [--seconds 10]
Goal (issue 21): >= 50 fps, no long task over 50 ms, typing <= 50 ms at 10 x 50 Hz; >= 30 fps at 20 x 100 Hz.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, start_server  # noqa: E402

CHROMIUM = os.environ.get("PANEBOARD_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
READY = "() => document.body.dataset.ready === '1' && document.body.dataset.live === '1'"
DRAWN = """n => [...document.querySelectorAll('.card[data-inview] .js-plotly-plot')].filter(
  (d) => d.data && d.data.length).length >= n"""
# Installed before the stream starts; the page's CSP forbids eval, so this is a function Playwright sends.
PROBE = """() => {
  const m = { frames: 0, gaps: [], long: [], keys: [], t0: performance.now(), last: performance.now(), on: true };
  window.__probe = m;
  const tick = (t) => { if (!m.on) return; m.frames += 1; m.gaps.push(t - m.last); m.last = t; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  new PerformanceObserver((l) => { for (const e of l.getEntries()) m.long.push(e.duration); })
    .observe({ type: "longtask", buffered: false });
  // Typing latency: the key event's creation time to the end of the frame that shows its effect.
  document.addEventListener("keydown", (ev) => {
    const t = ev.timeStamp;
    requestAnimationFrame(() => setTimeout(() => m.keys.push(performance.now() - t), 0));
  }, true);
}"""
COLLECT = """() => { const m = window.__probe; m.on = false;
  return { secs: (performance.now() - m.t0) / 1000, frames: m.frames, gaps: m.gaps, long: m.long, keys: m.keys,
           heap: performance.memory ? performance.memory.usedJSHeapSize : 0,
           points: [...document.querySelectorAll('.card[data-inview] .js-plotly-plot')].map(
             (d) => d.data && d.data[0] ? d.data[0].x.length : 0) }; }"""


def stream(port: int, env: str, panes: int, rate: float, seconds: float, stop: threading.Event) -> int:
    """One point per pane per tick at `rate` ticks/s through the SDK; returns the points sent."""
    import paneboard

    c = paneboard.Client(server="http://127.0.0.1", port=port, env=env)
    sent = 0
    t0 = time.perf_counter()
    i = 0
    while not stop.is_set() and time.perf_counter() - t0 < seconds:
        delay = t0 + i / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        for p in range(panes):
            c.line(Y=[float((i * 7 + p) % 100)], X=[100 + i], win=f"p{p}", update="append")
        sent += panes
        i += 1
    c.close_connection(timeout=30)
    return sent


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def scenario(browser, port: int, panes: int, rate: float, seconds: float) -> dict:
    import paneboard

    env = f"live{panes}x{int(rate)}"
    c = paneboard.Client(server="http://127.0.0.1", port=port, env=env)
    for p in range(panes):
        c.line(Y=[float(k % 50) for k in range(100)], X=list(range(100)), win=f"p{p}", opts={"title": f"metric {p}"})
    assert c.flush(timeout=30)
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = ctx.new_page()
    page.goto(f"http://127.0.0.1:{port}/env/{env}")
    page.wait_for_function(READY, timeout=60_000)
    inview = page.evaluate("() => document.querySelectorAll('.card[data-inview]').length")
    page.wait_for_function(DRAWN, arg=inview, timeout=60_000)
    page.evaluate(PROBE)
    stop = threading.Event()
    out: dict = {}
    th = threading.Thread(target=lambda: out.setdefault("sent", stream(port, env, panes, rate, seconds, stop)))
    th.start()
    time.sleep(1.0)  # the stream settles before typing
    box = page.locator("input.filter")
    while th.is_alive():
        box.click()
        for ch in "metric":  # matches every pane: typing must not hide what streams
            page.keyboard.press(ch)
            time.sleep(0.12)
        for _ in "metric":
            page.keyboard.press("Backspace")
            time.sleep(0.12)
        if len(page.evaluate("() => window.__probe.keys")) >= 48:
            break
    th.join()
    time.sleep(0.5)
    m = page.evaluate(COLLECT)
    ctx.close()
    c.close_connection(timeout=30)  # its run ends now, not at exit after the server has gone (a spooled run_end)
    return {"panes": panes, "rate": rate, "inview": inview, "sent": out.get("sent", 0), **m}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", default="10x50,20x100")
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    run(args.scenarios, args.seconds)


def run(scenarios: str, seconds: float) -> None:
    """Each "PANESxHZ" scenario of the comma-separated list, streamed for `seconds`; one line of figures each."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_server(Path(tmp) / "live.db", port)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                for spec in scenarios.split(","):
                    n, r = spec.lower().split("x")
                    res = scenario(browser, port, int(n), float(r), seconds)
                    fps = res["frames"] / res["secs"]
                    print(f"{res['panes']} panes x {res['rate']:.0f} Hz ({res['inview']} in view, "
                          f"{res['sent']:,} points sent in {seconds:.0f} s): {fps:.1f} fps, frame gap p95 "
                          f"{pct(res['gaps'], 0.95):.0f} ms max {max(res['gaps'] or [0]):.0f} ms; long tasks "
                          f"{len(res['long'])} totalling {sum(res['long']):.0f} ms, longest "
                          f"{max(res['long'] or [0]):.0f} ms; typing latency median "
                          f"{statistics.median(res['keys'] or [0]):.0f} ms p95 {pct(res['keys'], 0.95):.0f} ms "
                          f"({len(res['keys'])} keys); heap {res['heap'] / 1e6:.0f} MB; points in view "
                          f"{min(res['points'] or [0])}..{max(res['points'] or [0])}", flush=True)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(15)


if __name__ == "__main__":
    main()
