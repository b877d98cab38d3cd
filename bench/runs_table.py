"""Runs table benchmark: 10,000 runs filtered by the server and drawn by the /runs page in Chromium.

Fills a temp database through the writer (the ingest path: run ops and line appends, so every run has a status,
config, tags, light provenance and three series with ingest-time summaries), starts dash-server on it and prints,
per query, the server's answer time (GET /api/v1/runs?q=..., to the last byte), the page's fetch and render times
(the page records them in body.dataset.runsFetchMs / runsRenderMs: render = from the JSON in hand to the table
drawn) and their sum, the goal being < 200 ms. Also the process CPU seconds the server spent per query (its own
/proc figures, which the machine's other load does not inflate the way it does wall time).
    python bench/runs_table.py [--runs 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, start_server, stop, temp_dir, timed_get  # noqa: E402

CHROMIUM = os.environ.get("PANEBOARD_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
QUERIES = ["", "lr < 0.01 and tags:baseline and status:finished", "val/loss.min < 0.02",
           'val/acc.max >= 0.9 or name ~ "^resnet"']
BATCH = 250  # runs per writer job


def fill(db: Path, n: int) -> float:
    from paneboard.server.dispatch.parse import parse_event
    from paneboard.server.services import Services
    from paneboard.server.settings import Settings

    svc = Services.open(Settings(db=str(db)))
    svc.writer.start()
    rng = random.Random(0)
    t0 = time.perf_counter()
    steps = [float(s) for s in range(50)]
    for first in range(0, n, BATCH):
        events = []
        for i in range(first, min(n, first + BATCH)):
            env = f"{rng.choice(['resnet', 'vit', 'mlp'])}_{i:05d}"
            lr = 10 ** rng.uniform(-4, -1)
            base = rng.uniform(0.1, 1.0)
            events += [
                {"op": "run_start", "env": env, "client": f"c{i}", "t": 1.7e9 + i,
                 "provenance": {"host": f"gpu{i % 8}", "user": "bench", "pid": 1000 + i, "python": "3.11.9",
                                "git": {"commit": f"{i:040x}", "branch": "main", "dirty": i % 2 == 0}}},
                {"op": "run_config", "env": env, "config": {"lr": lr, "batch_size": rng.choice([32, 64, 128]),
                                                            "seed": i % 5, "optim": rng.choice(["adam", "sgd"]),
                                                            "wd": rng.choice([0.0, 1e-4])}},
                {"op": "run_tags", "env": env, "set": ["baseline"] if i % 4 == 0 else ["sweep"]},
            ]
            for win, ys in (("train/loss", [base / (1 + s) for s in steps]), ("val/loss", [base / (1 + s / 2) for s in steps]),
                            ("val/acc", [1 - base / (2 + s) for s in steps])):
                events.append({"op": "update", "env": env, "win": win, "kind": "line", "mode": "append", "name": None,
                               "traces": [{"x": steps, "y": ys}]})
            if i % 10:
                events.append({"op": "run_end", "env": env, "client": f"c{i}"})
        result = svc.writer.submit_wait([parse_event(e) for e in events], timeout=600)
        assert not result.errors and not result.failed, (result.errors[:3], result.failed)
    elapsed = time.perf_counter() - t0
    svc.writer.stop()
    svc.stop()
    return elapsed


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    tmp = temp_dir("runs")
    db = tmp / "runs.db"
    print(f"filling {args.runs} runs ...", flush=True)
    print(f"filled in {fill(db, args.runs):.1f} s", flush=True)
    port = free_port()
    proc = start_server(db, port)
    base = f"http://127.0.0.1:{port}"
    try:
        from playwright.sync_api import sync_playwright

        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            for q in QUERIES:
                params = {"q": q} if q else {}
                full = f"{base}/api/v1/runs?{urllib.parse.urlencode(params)}"
                # What the page asks: the first window of the order, every matching env and the columns.
                url = f"{base}/api/v1/runs?" + urllib.parse.urlencode(
                    {**params, "sort": "updated", "order": "desc", "offset": 0, "limit": 200})
                timed_get(url)  # warm: the first read of a fresh server pages the database in
                api_ms, full_ms, cpu_ms, fetch_ms, render_ms, shown = [], [], [], [], [], 0
                for _ in range(args.repeat):
                    c0 = cpu_seconds(proc.pid)
                    secs, _body = timed_get(url)
                    cpu_ms.append((cpu_seconds(proc.pid) - c0) * 1000)
                    api_ms.append(secs * 1000)
                    full_ms.append(timed_get(full)[0] * 1000)
                    page.goto(f"{base}/runs" + (f"?q={urllib.parse.quote(q)}" if q else ""))
                    page.wait_for_function("() => document.body.dataset.runsRenderMs !== undefined", timeout=60_000)
                    fetch_ms.append(float(page.evaluate("() => document.body.dataset.runsFetchMs")))
                    render_ms.append(float(page.evaluate("() => document.body.dataset.runsRenderMs")))
                    shown = int(page.evaluate("() => document.body.dataset.runsShown"))
                med = {k: statistics.median(v) for k, v in (("api", api_ms), ("full", full_ms), ("cpu", cpu_ms),
                                                             ("fetch", fetch_ms), ("render", render_ms))}
                rows.append((q or "(all)", shown, med))
            browser.close()
    finally:
        stop(proc)
    print(f"\n{args.runs} runs, median of {args.repeat}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'query':52s} {'runs':>6s} {'API ms':>7s} {'srv CPU':>7s} {'all ms':>7s} {'fetch':>7s} {'render':>7s} "
          f"{'total':>7s}")
    for q, shown, m in rows:
        total = m["fetch"] + m["render"]
        print(f"{q[:52]:52s} {shown:6d} {m['api']:7.1f} {m['cpu']:7.1f} {m['full']:7.1f} {m['fetch']:7.1f} "
              f"{m['render']:7.1f} {total:7.1f}{'' if total < 200 else '  (over 200 ms)'}")
    print("\nAPI ms: the page's request (sorted, first 200 rows, every matching env, the columns) to the last byte;"
          "\nsrv CPU: the server process's CPU ms for it (/proc, 10 ms ticks); all ms: every matching run in one answer;"
          "\nfetch and render: measured by the page (render: JSON in hand to the table drawn); total = fetch + render")


if __name__ == "__main__":
    main()
