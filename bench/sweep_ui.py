"""Sweep UI benchmark (Playwright + Chromium): /scalars drawing every run of a sweep, a smoothing change, bytes,
Compare of 100 runs, and TensorBoard's scalars page on the same data beside it.

Fills a temp database through the store (N runs x 3 tags x 2,000 steps, without the network) and writes the same
values as a TensorBoard logdir, starts dash-server on the database and prints, as the median of --repeat page loads:
  - the time from navigation until the charts in view hold every run (the issue's goal at 1,000 runs: <= 2 s),
  - the time a smoothing change takes to redraw those charts (goal <= 300 ms),
  - filtering to 10 runs (<= 300 ms), a hover tooltip (<= 50 ms), bands of 50 groups x 20 seeds (<= 1.5 s),
  - Compare of 100 runs drawn (<= 2 s),
  - bytes transferred per page load (all resources, and the chart reads alone; goal <= 5 MB), and the JS heap;
then starts TensorBoard on the logdir (after it has loaded every run) and times its scalars page in the same
Chromium (sweep_tb.py says how), printing both draws and their ratio.
    python bench/sweep_ui.py                  # 100 runs: a quick look
    python bench/sweep_ui.py --runs 1000      # the issue's figure
    python bench/sweep_ui.py --no-tensorboard # ours alone (writing the logdir takes about a minute at 1,000 runs)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

from paneboard.server.store import SqlStore
from paneboard.server.store.schema import ensure_schema

sys.path.insert(0, str(Path(__file__).parent))
import sweep_tb  # noqa: E402
from common import free_port, stop  # noqa: E402

CHROMIUM = os.environ.get("PANEBOARD_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--enable-precise-memory-info"]
TAGS = ("train/loss", "val/loss", "train/acc")
# Playwright must get functions (the page's CSP forbids eval of expression strings).
ALL_DRAWN = """n => { const cards = [...document.querySelectorAll('.sc-card')].filter(c => c.dataset.inview);
  return cards.length > 0 && cards.every(c => Number(c.dataset.series) === n); }"""
DRAWN_COUNTS = """() => [...document.querySelectorAll('.sc-card')].filter(c => c.dataset.inview)
  .map(c => Number(c.dataset.drawn) || 0)"""
REDRAWN = """([before, w]) => { const cards = [...document.querySelectorAll('.sc-card')].filter(c => c.dataset.inview);
  return cards.every((c, i) => (Number(c.dataset.drawn) || 0) > before[i] && Number(c.dataset.smoothing) === w); }"""
BYTES = """() => { const r = performance.getEntriesByType('resource');
  const nav = performance.getEntriesByType('navigation')[0];
  const sum = (xs, f) => xs.reduce((n, e) => n + (e[f] || 0), 0);
  const charts = r.filter(e => e.name.includes('/api/v1/chart'));
  return { transferred: sum(r, 'transferSize') + (nav ? nav.transferSize : 0),
           decoded: sum(r, 'decodedBodySize') + (nav ? nav.decodedBodySize : 0),
           charts: sum(charts, 'decodedBodySize'), reads: charts.length,
           heap: performance.memory ? performance.memory.usedJSHeapSize : 0 }; }"""


def fill(db: Path, runs: int, steps: int, logdir: Path | None = None) -> None:
    """The sweep into the database, and the same values into a TensorBoard logdir when one is given."""
    url = f"sqlite:///{db}"
    ensure_schema(url, str(db))
    store = SqlStore(url)
    rng = np.random.default_rng(0)
    x = np.arange(steps, dtype=np.float64)
    wall = time.time() + x
    t0 = time.perf_counter()
    for k in range(0, runs, 50):
        with store.transaction() as tx:
            for i in range(k, min(runs, k + 50)):
                env = f"sweep_lr{i % 10}_s{i:04d}"
                rate = steps / (3 + i % 17)
                ys = {}
                for tag in TAGS:
                    y = np.exp(-x / rate) + rng.normal(0, 0.02, steps)
                    ys[tag] = 1 - y if tag.endswith("acc") else y
                    pane = tx.put_pane(env, tag.replace("/", "_"), "line", tag, {"title": tag}, None)
                    tx.append_points(tx.add_trace(pane, "1", {}), x, ys[tag], wall)
                if logdir is not None:
                    sweep_tb.write_logdir(logdir, {env: ys}, float(wall[0]))
                # 50 configs x 20 seeds at 1,000 runs: what --groups draws as bands
                tx.set_env_meta(env, {"config": {"lr": 10.0 ** -(1 + (i % 50) / 12), "seed": i // 50}})
    store.close()
    print(f"filled: {runs} runs x {len(TAGS)} tags x {steps:,} steps in {time.perf_counter() - t0:.1f} s"
          f"{' (with the TensorBoard logdir)' if logdir else ''}")


def wait_up(base: str) -> None:
    for _ in range(600):
        try:
            urllib.request.urlopen(base + "/api/v1/envs", timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("dash-server did not start")


def measure(page, base: str, runs: int, repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"draw": [], "smooth": [], "transferred": [], "charts": [], "heap": [], "reads": [],
                                   "filter": [], "hover": []}
    for k in range(repeat):
        t0 = time.perf_counter()
        page.goto(base + "/scalars")
        page.wait_for_function(ALL_DRAWN, arg=runs, timeout=300_000, polling=10)
        out["draw"].append(time.perf_counter() - t0)
        b = page.evaluate(BYTES)
        for key in ("transferred", "charts", "heap", "reads"):
            out[key].append(b[key])
        before = page.evaluate(DRAWN_COUNTS)
        w = 0.9 if k % 2 == 0 else 0.3
        t0 = time.perf_counter()
        page.locator("input.smoothing").fill(str(w))
        page.wait_for_function(REDRAWN, arg=[before, w], timeout=120_000, polling=5)
        out["smooth"].append(time.perf_counter() - t0)
        # Filtering to 10 runs (the run selector's search), then a hover tooltip over the first chart.
        before = page.evaluate(DRAWN_COUNTS)
        t0 = time.perf_counter()
        page.locator("input.run-filter").fill(r"s000[0-9]$")
        page.wait_for_function(ALL_DRAWN, arg=min(runs, 10), timeout=120_000, polling=5)
        out["filter"].append(time.perf_counter() - t0)
        page.locator("input.run-filter").fill("")
        page.wait_for_function(ALL_DRAWN, arg=runs, timeout=120_000, polling=10)
        box = page.locator(".sc-card[data-inview] .nsewdrag").first.bounding_box()
        page.evaluate("() => { document.body.dataset.tipMs = ''; }")
        page.mouse.move(box["x"] + box["width"] / 2 - 5, box["y"] + box["height"] * 0.6)
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.6)
        page.wait_for_function("() => !!document.body.dataset.tipMs", timeout=30_000, polling=5)
        out["hover"].append(float(page.evaluate("() => document.body.dataset.tipMs")) / 1000)
        page.mouse.move(0, 0)
    return out


GROUPED = """n => { const cards = [...document.querySelectorAll('.sc-card[data-grouped="1"]')];
  return cards.length > 0 && cards.every(c => c.dataset.grouped === '1' && Number(c.dataset.series) === n); }"""


def measure_groups(page, base: str, groups: int, repeat: int) -> list[float]:
    """Seconds from ticking "Group runs" until the charts in view draw every group's band."""
    out = []
    for _ in range(repeat):
        page.goto(base + "/scalars")
        page.wait_for_function(ALL_DRAWN, arg=groups * 20, timeout=300_000, polling=10)
        t0 = time.perf_counter()
        page.locator(".group-seeds").check()
        page.wait_for_function(GROUPED, arg=groups, timeout=120_000, polling=5)
        out.append(time.perf_counter() - t0)
    return out


COMPARED = """n => { const cards = [...document.querySelectorAll('section.card[data-title]')].filter(c => c.dataset.inview);
  return cards.length > 0 && cards.every(c => Number(c.dataset.series) === n); }"""


def measure_compare(page, base: str, runs: int, repeat: int) -> list[float]:
    """Seconds from navigating to Compare of the first `runs` runs until its charts in view draw every one."""
    names = [f"sweep_lr{i % 10}_s{i:04d}" for i in range(runs)]
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        page.goto(f"{base}/compare?envs={','.join(names)}")
        page.wait_for_function(COMPARED, arg=runs, timeout=300_000, polling=10)
        out.append(time.perf_counter() - t0)
    return out


def measure_tensorboard(browser, logdir: Path, runs: int, steps: int, repeat: int) -> dict:
    """TensorBoard on the same data: its load time, then its scalars page draw (a first visit, then warm)."""
    port = free_port()
    t0 = time.perf_counter()
    proc = sweep_tb.start(logdir, port)
    base = f"http://127.0.0.1:{port}"
    try:
        names = [f"sweep_lr{i % 10}_s{i:04d}" for i in range(runs)]
        sweep_tb.wait_loaded(base, sorted(names), "train/loss", steps - 1)
        loaded = time.perf_counter() - t0
        ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
        page = ctx.new_page()
        first = sweep_tb.page_draw(page, base, "train/loss", timeout=600)
        draws = [sweep_tb.page_draw(page, base, "train/loss", timeout=600) for _ in range(repeat)]
        ctx.close()
        return {"loaded": loaded, "first": first, "draw": draws}
    finally:
        stop(proc, group=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-tensorboard", action="store_true", help="skip TensorBoard (and writing its logdir)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "sweep.db"
        logdir = None if args.no_tensorboard else Path(tmp) / "tb"
        fill(db, args.runs, args.steps, logdir)
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--port", str(port), "--db", str(db),
                                 "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_up(base)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                cold = browser.new_context(viewport={"width": 1600, "height": 1000})
                page = cold.new_page()
                page.goto(base + "/scalars")  # a first visit: Plotly and the modules over the wire
                page.wait_for_function(ALL_DRAWN, arg=args.runs, timeout=300_000, polling=10)
                first = page.evaluate(BYTES)
                res = measure(page, base, args.runs, args.repeat)  # then as a returning user (HTTP cache warm)
                bands = measure_groups(page, base, min(50, args.runs // 20), args.repeat) if args.runs >= 40 else []
                compared = measure_compare(page, base, min(100, args.runs), args.repeat)
                cold.close()
                tb = measure_tensorboard(browser, logdir, args.runs, args.steps, args.repeat) if logdir else None
                browser.close()
        finally:
            proc.terminate()
            proc.wait(15)
    med = statistics.median
    mb = 1 / 1e6
    print(f"/scalars, {args.runs} runs x {len(TAGS)} tags x {args.steps:,} steps, Chromium 1600x1000, median of "
          f"{args.repeat}:")
    print(f"  all runs drawn in the charts in view: {med(res['draw']):.2f} s from navigation")
    print(f"  smoothing change redrawn: {med(res['smooth']) * 1000:.0f} ms")
    if bands:
        print(f"  bands of {min(50, args.runs // 20)} groups x 20 seeds drawn: {med(bands):.2f} s from ticking the box")
    print(f"  filtering to 10 runs drawn: {med(res['filter']) * 1000:.0f} ms; hover tooltip: "
          f"{med(res['hover']) * 1000:.1f} ms (mouse move to tooltip shown)")
    print(f"  transferred per load: {first['transferred'] * mb:.2f} MB on a first visit, "
          f"{med(res['transferred']) * mb:.2f} MB with a warm cache; chart reads {med(res['charts']) * mb:.2f} MB "
          f"in {med(res['reads']):.0f} requests")
    print(f"  JS heap after drawing: {med(res['heap']) * mb:.0f} MB")
    print(f"  Compare of {min(100, args.runs)} runs drawn: {med(compared):.2f} s from navigation")
    draws = ", ".join(f"{v:.2f}" for v in res["draw"])
    print(f"  paneboard /scalars draws: {draws} s")
    if tb:
        drawn = [d["drawn"] for d in tb["draw"]]
        print(f"TensorBoard {tb_version()} on the same data (its Time Series page, the default; loaded the logdir in "
              f"{tb['loaded']:.1f} s), Chromium 1600x1000, median of {args.repeat}:")
        print(f"  train/loss of every run drawn: {med(drawn):.2f} s from navigation (its data in hand at "
              f"{med([d['data'] for d in tb['draw']]):.2f} s; first visit {tb['first']['drawn']:.2f} s; draws "
              f"{', '.join(f'{v:.2f}' for v in drawn)} s)")
        print(f"  ratio TensorBoard / paneboard (>1: paneboard faster): {med(drawn) / med(res['draw']):.1f}x")


def tb_version() -> str:
    from tensorboard import version

    return version.VERSION


if __name__ == "__main__":
    main()
