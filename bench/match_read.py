"""The server side of the multi-metric chart (GET /api/v1/chart/match) for thousands of tags x a few runs, in-process:
the whole request through Flask's test client, then its phases (listing panes, the batched store read, the answer's
JSON), warm (the fastest of reps, CPU time) and cold (a fresh store: empty decoded-chunk cache); with --profile, cProfile's top.

Fills a temp SQLite database as bench/many_tags.py does (layerNNNNN/grad_norm and /weight_norm, 50 points each):
    python bench/match_read.py [--runs 1,5] [--tags 6000] [--points 50] [--reps 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from paneboard.server.app import create_app
from paneboard.server.jsonio import dumps
from paneboard.server.settings import Settings

sys.path.insert(0, str(Path(__file__).parent))
from many_tags import fill, pattern_for, values  # noqa: E402


def timed(fn: Callable[[], Any], reps: int) -> tuple[float, Any]:
    """The fastest of reps, in CPU seconds of this process (the work is single-threaded: its wall time when the
    machine is idle, and steady when other jobs share the cores)."""
    got, out = [], None
    for _ in range(reps):
        t0 = time.process_time()
        out = fn()
        got.append(time.process_time() - t0)
    return min(got), out


def phases(store: Any, envs: list[str], pattern: str, per: int, reps: int) -> dict[str, float]:
    """The request's parts, as charts_api.chart_match does them (the fastest of reps)."""
    matches = (lambda tag: fnmatchcase(tag, pattern))  # noqa: E731
    t_list, listed = timed(lambda: store.chart_lines(envs, ("line",), matches, pattern), reps)
    plan = [line for env in envs for line in listed.get(env, [])]
    reads = [(line.trace, None, "minmax") for line in plan]
    t_read, series = timed(lambda: store.read_series_many(reads, per), reps)
    payload = {"x": [s.x for s in series], "y": [s.y for s in series]}
    t_json, _ = timed(lambda: dumps(payload), reps)
    return {"list panes": t_list, "read_series_many": t_read, "json (arrays only)": t_json, "lines": len(plan)}


def request(client: Any, url: str) -> bytes:
    res = client.get(url)
    assert res.status_code == 200, res.data[:300]
    return bytes(res.data)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default="1,5")
    ap.add_argument("--tags", type=int, default=6000)
    ap.add_argument("--points", type=int, default=50)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    gc.freeze()  # as dash-server does (cli/main.py): no full collections rescanning the start-up heap
    gc.set_threshold(100_000, 20, 20)
    ys = values(args.tags, args.points, 0)
    pattern, matched = pattern_for(list(ys))
    for runs in [int(r) for r in args.runs.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "tags.db"
            fill(db, runs, ys, time.time() - args.points)
            url = f"/api/v1/chart/match?pattern={pattern}&width=600"
            app = create_app(Settings(db=str(db), log_level="warning", watch_runs=False))
            svc = app.extensions["paneboard"]
            try:
                client = app.test_client()
                cold, body = timed(lambda: request(client, url), 1)  # noqa: B023 (called at once)
                warm, body = timed(lambda: request(client, url), args.reps)  # noqa: B023
                parts = phases(svc.store, [f"run{r}" for r in range(runs)], pattern, 16, args.reps)
                print(f"{runs} run(s) x {matched:,} tags ({parts['lines']:,} lines x {args.points} points): "
                      f"/chart/match warm {warm * 1000:.0f} ms, first {cold * 1000:.0f} ms, "
                      f"answer {len(body) / 1e6:.2f} MB", flush=True)
                print("  phases: " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in parts.items() if k != "lines"),
                      flush=True)
                if args.profile:
                    prof = cProfile.Profile()
                    prof.enable()
                    request(client, url)
                    prof.disable()
                    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
            finally:
                svc.stop()


if __name__ == "__main__":
    main()
