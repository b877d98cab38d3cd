"""Scalars with many tags a run (Playwright + Chromium): DOM nodes, first chart drawn, and the multi-metric chart of
every layerNNNNN/grad_norm drawn, for 5 runs x 3,000 and x 10,000 tags (issue 44 item 4; goals: <= 8,000 DOM nodes,
the multi-metric chart of 3,000 tags in <= 1 s).

Fills a temp database through the store (tags layerNNNNN/grad_norm and layerNNNNN/weight_norm), starts dash-server
on it and prints the figures:
    python bench/many_tags.py [--runs 5] [--tags 3000,10000] [--points 100] [--reps 3]
"""

from __future__ import annotations

import argparse
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
from ui_load import ARGS, CHROMIUM  # noqa: E402

FIRST_CHART = "() => !!document.querySelector('.sc-card[data-drawn]')"
NODES = "() => document.getElementsByTagName('*').length"
PATTERN = "layer*/grad_norm"
MATCH_DRAWN = ("n => Number(document.querySelector('[data-tag=\"custom: matching/layer*/grad_norm\"]')?.dataset.series)"
               " === n")


def fill(db: Path, runs: int, tags: int, points: int) -> None:
    url = f"sqlite:///{db}"
    ensure_schema(url, str(db))
    store = SqlStore(url)
    x = np.arange(points, dtype=np.float64)
    wall = np.full(points, time.time())
    rng = np.random.default_rng(0)
    for r in range(runs):
        with store.transaction() as tx:
            for i in range(tags):
                what = "grad_norm" if i % 2 == 0 else "weight_norm"
                title = f"layer{i // 2:05d}/{what}"
                pane = tx.put_pane(f"run{r}", f"t{i}", "line", title, {"title": title}, None)
                trace = tx.add_trace(pane, "", {})
                tx.append_points(trace, x, np.exp(-x / (50 + i % 97)) + rng.normal(0, 0.01, points), wall)


def measure(base: str, page, tags: int, runs: int, reps: int) -> dict[str, float]:
    first, nodes, match, scrolled = [], [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        page.goto(base + "/scalars")
        page.wait_for_function(FIRST_CHART, timeout=300_000, polling=10)
        first.append(time.perf_counter() - t0)
        page.wait_for_function("n => document.body.dataset.scalarsTags === String(n)", arg=tags, timeout=300_000)
        nodes.append(page.evaluate(NODES))
        page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
        scrolled.append(page.evaluate(NODES))
        page.fill("input.match-pattern", PATTERN)
        t0 = time.perf_counter()
        page.click(".match-add")
        page.wait_for_function(MATCH_DRAWN, arg=runs * (tags // 2), timeout=300_000, polling=10)
        match.append(time.perf_counter() - t0)
    med = statistics.median
    return {"first": med(first), "nodes": med(nodes), "scrolled": med(scrolled), "match": med(match)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tags", default="3000,10000")
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    for tags in [int(t) for t in args.tags.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "tags.db"
            t0 = time.perf_counter()
            fill(db, args.runs, tags, args.points)
            filled = time.perf_counter() - t0
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
                    page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
                    page.goto(base + "/scalars")  # warm-up: Plotly into the HTTP cache, server caches
                    page.wait_for_function(FIRST_CHART, timeout=300_000)
                    got = measure(base, page, tags, args.runs, args.reps)
                    browser.close()
            finally:
                proc.terminate()
                proc.wait(15)
        print(f"{args.runs} runs x {tags:,} tags x {args.points} points (filled in {filled:.0f} s): first chart "
              f"{got['first']:.2f} s, DOM {got['nodes']:,.0f} nodes ({got['scrolled']:,.0f} scrolled to the end), "
              f"multi-metric chart of {tags // 2:,} tags x {args.runs} runs {got['match']:.2f} s "
              f"(median of {args.reps})", flush=True)


if __name__ == "__main__":
    main()
