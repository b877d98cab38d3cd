"""Many tags a run, side by side with TensorBoard (Playwright + Chromium), for 5 runs x 3,000 and x 10,000 tags:
first chart drawn, DOM nodes, fps scrolling to the end, the multi-metric chart of every layerNNNNN/grad_norm, and the
same figures for one run's page (issue 44 item 4; goals: first chart <= TensorBoard's, <= 8,000 DOM nodes, >= 50 fps,
the multi-metric chart of 3,000 tags in <= 1 s).

Fills a temp database (tags layerNNNNN/grad_norm and layerNNNNN/weight_norm): the first run through the store, the
others as forks of it (the store's bulk copy of a run: filling each through put_pane took minutes), and the same
values as a TensorBoard logdir; starts dash-server and `tensorboard --logdir` on free ports and prints the figures:
    python bench/many_tags.py [--runs 5] [--tags 3000,10000] [--points 50] [--reps 3] [--no-tensorboard]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np

from paneboard.server.store import SqlStore
from paneboard.server.store.schema import ensure_schema

sys.path.insert(0, str(Path(__file__).parent))
import sweep_tb  # noqa: E402
from common import free_port, has_module, stop  # noqa: E402
from sweep_ui import wait_up  # noqa: E402
from ui_load import ARGS, CHROMIUM  # noqa: E402

FIRST_CHART = "() => !!document.querySelector('.sc-card[data-drawn]')"
FIRST_PANE = "() => { const p = document.querySelector('.js-plotly-plot'); return !!(p && p.data && p.data.length); }"
NODES = "() => document.getElementsByTagName('*').length"
# The multi-metric chart's glob: every layer's grad_norm, or at 10,000 tags the first 3,000 layers' (5 runs x 5,000
# tags would pass the server's 20,000-line cap).
PATTERNS = ("layer*/grad_norm", "layer0[0-2]*/grad_norm")
MATCH_DRAWN = "([p, n]) => Number(document.querySelector(`[data-tag=\"custom: matching/${p}\"]`)?.dataset.series) === n"
# Scroll the window to the end a step a frame, counting animation frames: a page that builds or draws too much on
# scroll drops frames. Returns [fps, pixels scrolled, DOM nodes at the end].
SCROLL_FPS = """async (step) => {
  const frame = () => new Promise(r => requestAnimationFrame(r));
  window.scrollTo(0, 0);
  await frame();
  let frames = 0;
  const t0 = performance.now();
  const end = () => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
  while (!end() && performance.now() - t0 < 120000) {
    window.scrollBy(0, step);
    await frame();
    frames += 1;
  }
  await frame();
  return [frames / Math.max(1e-3, (performance.now() - t0) / 1000), window.scrollY,
          document.getElementsByTagName('*').length];
}"""
STEP_PX = 120
# A few runs' thin lines (the forks draw on top of each other) colour less of TensorBoard's chart than a sweep's.
LINES_SHARE = 0.002


def values(tags: int, points: int, seed: int) -> dict[str, np.ndarray]:
    """tag -> y per step 0..points-1: decaying noisy curves, one decay rate a layer."""
    x = np.arange(points, dtype=np.float64)
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(tags):
        what = "grad_norm" if i % 2 == 0 else "weight_norm"
        out[f"layer{i // 2:05d}/{what}"] = np.exp(-x / (50 + i % 97)) + rng.normal(0, 0.01, points)
    return out


def fill(db: Path, runs: int, ys: dict[str, np.ndarray], wall0: float) -> None:
    url = f"sqlite:///{db}"
    ensure_schema(url, str(db))
    store = SqlStore(url)
    points = len(next(iter(ys.values())))
    x = np.arange(points, dtype=np.float64)
    wall = wall0 + x
    with store.transaction() as tx:
        for i, (title, y) in enumerate(ys.items()):
            pane = tx.put_pane("run0", f"t{i}", "line", title, {"title": title}, None)
            tx.append_points(tx.add_trace(pane, "", {}), x, y, wall)
    for r in range(1, runs):
        with store.transaction() as tx:
            tx.fork_env("run0", f"run{r}")
    store.close()


def scroll_fps(page) -> tuple[float, float, float]:
    fps, px, nodes = page.evaluate(SCROLL_FPS, STEP_PX)
    return fps, px, nodes


def pattern_for(tags: list[str]) -> tuple[str, int]:
    """The glob of the multi-metric chart for these tags (at most 3,000 of them), and how many it matches."""
    for pattern in PATTERNS:
        n = sum(fnmatchcase(t, pattern) for t in tags)
        if n <= 3000:
            return pattern, n
    raise ValueError("no pattern matches at most 3,000 tags")


def measure_scalars(base: str, page, tags: int, runs: int, reps: int, pattern: str, matched: int) -> dict[str, float]:
    got: dict[str, list[float]] = {k: [] for k in ("first", "nodes", "fps", "px", "scrolled", "match")}
    for _ in range(reps):
        t0 = time.perf_counter()
        page.goto(base + "/scalars")
        page.wait_for_function(FIRST_CHART, timeout=300_000, polling=10)
        got["first"].append(time.perf_counter() - t0)
        page.wait_for_function("n => document.body.dataset.scalarsTags === String(n)", arg=tags, timeout=300_000)
        got["nodes"].append(page.evaluate(NODES))
        fps, px, nodes = scroll_fps(page)
        got["fps"].append(fps)
        got["px"].append(px)
        got["scrolled"].append(nodes)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.fill("input.match-pattern", pattern)
        t0 = time.perf_counter()
        page.click(".match-add")
        page.wait_for_function(MATCH_DRAWN, arg=[pattern, runs * matched], timeout=300_000, polling=10)
        got["match"].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in got.items()}


def measure_env(base: str, page, reps: int) -> dict[str, float]:
    """One run's page (/env/run0): every tag a pane."""
    got: dict[str, list[float]] = {k: [] for k in ("first", "nodes", "fps", "px", "scrolled")}
    for _ in range(reps):
        page.goto("about:blank")
        t0 = time.perf_counter()
        page.goto(base + "/env/run0")
        page.wait_for_function(FIRST_PANE, timeout=300_000, polling=10)
        got["first"].append(time.perf_counter() - t0)
        page.wait_for_function("() => document.body.dataset.ready === '1'", timeout=300_000)
        got["nodes"].append(page.evaluate(NODES))
        fps, px, nodes = scroll_fps(page)
        got["fps"].append(fps)
        got["px"].append(px)
        got["scrolled"].append(nodes)
    return {k: statistics.median(v) for k, v in got.items()}


def measure_tensorboard(browser, logdir: Path, runs: int, first_tag: str, last_step: int, reps: int) -> dict:
    """TensorBoard's Time Series page on the same values: first chart drawn (its canvas shows lines), DOM nodes."""
    port = free_port()
    t0 = time.perf_counter()
    proc = sweep_tb.start(logdir, port)
    base = f"http://127.0.0.1:{port}"
    try:
        sweep_tb.wait_loaded(base, [f"run{r}" for r in range(runs)], first_tag, last_step)
        loaded = time.perf_counter() - t0
        page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
        sweep_tb.page_draw(page, base, first_tag, timeout=600, share=LINES_SHARE)  # warm-up, as ours gets
        first, nodes = [], []
        for _ in range(reps):
            first.append(sweep_tb.page_draw(page, base, first_tag, timeout=600, share=LINES_SHARE)["drawn"])
            nodes.append(page.evaluate(NODES))
        page.context.close()
        return {"loaded": loaded, "first": statistics.median(first), "nodes": statistics.median(nodes)}
    finally:
        stop(proc, group=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tags", default="3000,10000")
    ap.add_argument("--points", type=int, default=50)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-tensorboard", action="store_true")
    ap.add_argument("--no-env", action="store_true", help="skip the run page's figures")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with_tb = not args.no_tensorboard and has_module("tensorboard")
    for tags in [int(t) for t in args.tags.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "tags.db"
            ys = values(tags, args.points, 0)
            wall0 = time.time() - args.points
            t0 = time.perf_counter()
            fill(db, args.runs, ys, wall0)
            filled = time.perf_counter() - t0
            if with_tb:
                sweep_tb.write_logdir(Path(tmp) / "tb", {f"run{r}": ys for r in range(args.runs)}, wall0)
            port = free_port()
            proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--port", str(port), "--db", str(db),
                                     "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            base = f"http://127.0.0.1:{port}"
            try:
                wait_up(base)
                with sync_playwright() as p:
                    browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                    page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
                    page.goto(base + "/scalars")  # warm-up: Plotly into the HTTP cache, server caches
                    page.wait_for_function(FIRST_CHART, timeout=300_000)
                    pattern, matched = pattern_for(list(ys))
                    got = measure_scalars(base, page, tags, args.runs, args.reps, pattern, matched)
                    env = None if args.no_env else measure_env(base, page, args.reps)
                    tb = (measure_tensorboard(browser, Path(tmp) / "tb", args.runs, next(iter(ys)), args.points - 1,
                                              args.reps) if with_tb else None)
                    browser.close()
            finally:
                stop(proc)
        print(f"{args.runs} runs x {tags:,} tags x {args.points} points (filled in {filled:.0f} s)", flush=True)
        print(f"  Scalars: first chart {got['first']:.2f} s, DOM {got['nodes']:,.0f} nodes ({got['scrolled']:,.0f} "
              f"scrolled to the end), scroll {got['fps']:.0f} fps over {got['px']:,.0f} px, multi-metric chart "
              f"{pattern} of {matched:,} tags x {args.runs} runs {got['match']:.2f} s", flush=True)
        if env:
            print(f"  run page ({tags:,} panes): first pane {env['first']:.2f} s, DOM {env['nodes']:,.0f} nodes "
                  f"({env['scrolled']:,.0f} scrolled to the end), scroll {env['fps']:.0f} fps over "
                  f"{env['px']:,.0f} px", flush=True)
        if tb:
            print(f"  TensorBoard: first chart {tb['first']:.2f} s, DOM {tb['nodes']:,.0f} nodes (logdir loaded in "
                  f"{tb['loaded']:.0f} s)", flush=True)
        print(f"  (medians of {args.reps})", flush=True)


if __name__ == "__main__":
    main()
