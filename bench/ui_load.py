"""UI load benchmark (Playwright + Chromium): first paint of a 50-pane x 200,000-point env and of a 1,000-env list.

The env page loads only the panes in view; "first paint" is the page's ready mark (every pane in view drawn), and
"scrolled through" the time to draw all panes while scrolling down a screen at a time once the one shown is drawn.

Fills a temp database through the store (the writer's own code path, without the network), starts dash-server on
it and prints the figures (goal: <= 1 s each on this machine):
    python bench/ui_load.py [--panes 50] [--points 200000] [--envs 1000] [--runs 3]
With --live (e.g. --live 10x50,20x100) it instead streams into an open env page and prints fps, long tasks and typing
latency (bench/ui_live.py).
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
from common import free_port  # noqa: E402

CHROMIUM = os.environ.get("PANEBOARD_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
# Playwright must get functions (the page's CSP forbids eval of expression strings).
VISIBLE_DRAWN = "() => document.body.dataset.ready === '1'"
SCROLL_THROUGH = """n => { const drawn = (c) => { const p = c.querySelector('.js-plotly-plot');
    return !!(p && p.data && p.data.length && p.data[0].x.length > 0); };
  const cards = [...document.querySelectorAll('.card[data-win]')];
  if (cards.filter(drawn).length >= n) return true;
  if (cards.filter(c => c.dataset.inview).every(drawn)) window.scrollBy(0, window.innerHeight);
  return false; }"""
FIRST_PANE = "() => { const p = document.querySelector('.js-plotly-plot'); return !!(p && p.data && p.data.length); }"
ROWS_DRAWN = "n => document.querySelectorAll('tbody tr[data-env]').length >= n"


def fill(db: Path, panes: int, points: int, envs: int) -> None:
    url = f"sqlite:///{db}"
    ensure_schema(url, str(db))
    store = SqlStore(url)
    x = np.arange(points, dtype=np.float64)
    wall = np.full(points, time.time())
    t0 = time.perf_counter()
    for i in range(panes):
        with store.transaction() as tx:
            pane = tx.put_pane("big", f"p{i}", "line", f"metric {i}", {"title": f"metric {i}"}, None)
            trace = tx.add_trace(pane, "train", {})
            tx.append_points(trace, x, np.sin(x / (500.0 + i)) + 0.01 * i, wall)
    with store.transaction() as tx:
        for i in range(envs):
            pane = tx.put_pane(f"proj{i % 20}_run{i}", "loss", "line", "loss", {}, None)
            tr = tx.add_trace(pane, "loss", {})
            tx.append_points(tr, np.arange(10.0), np.arange(10.0), np.zeros(10))
    store.close()
    print(f"filled: {panes} panes x {points:,} points and {envs:,} envs in {time.perf_counter() - t0:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--panes", type=int, default=50)
    ap.add_argument("--points", type=int, default=200_000)
    ap.add_argument("--envs", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--live", default="", help="PANESxHZ,... : stream into an open env page instead (ui_live.py)")
    ap.add_argument("--seconds", type=float, default=10.0, help="with --live: seconds each scenario streams")
    args = ap.parse_args()
    if args.live:
        from ui_live import run

        run(args.live, args.seconds)
        return
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ui.db"
        fill(db, args.panes, args.points, args.envs)
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--port", str(port), "--db", str(db),
                                 "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(base + "/api/v1/envs", timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
                page = ctx.new_page()
                page.goto(base + "/env/big")  # warm-up: Plotly (4.8 MB) into the HTTP cache, server caches
                page.wait_for_function(VISIBLE_DRAWN, timeout=120_000)
                first, screen, full, lists, shown = [], [], [], [], []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    page.goto(base + "/env/big")
                    page.wait_for_function(FIRST_PANE, timeout=120_000, polling=10)
                    first.append(time.perf_counter() - t0)
                    page.wait_for_function(VISIBLE_DRAWN, timeout=120_000, polling=10)
                    screen.append(time.perf_counter() - t0)
                    shown.append(page.evaluate("() => document.querySelectorAll('.js-plotly-plot').length"))
                    page.wait_for_function(SCROLL_THROUGH, arg=args.panes, timeout=120_000, polling=50)
                    full.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    page.goto(base + "/")
                    page.wait_for_function(ROWS_DRAWN, arg=args.envs, timeout=120_000, polling=10)
                    lists.append(time.perf_counter() - t0)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(15)
    med = statistics.median
    print(f"env with {args.panes} panes x {args.points:,} points: first pane painted {med(first):.2f} s, "
          f"first screen ({med(shown):.0f} panes in view) painted {med(screen):.2f} s, "
          f"all {args.panes} panes painted scrolling through {med(full):.2f} s (median of {args.runs})")
    print(f"env list with {args.envs:,} envs: all rows painted {med(lists):.2f} s (median of {args.runs})")


if __name__ == "__main__":
    main()
