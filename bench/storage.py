"""Storage benchmark: bytes per point of short and long runs, and disk space given back after deleting runs.

Against a dash-server subprocess on a fresh SQLite file, through the SDK, on a noisy training curve (a float32 loss
decaying with noise, as `.item()` of a torch loss gives, logged per step with its wall time):
  * bytes/point of R runs x P points (short runs: the open tail of each run is a large share of its points) and
    of one long series;
  * deletes half of the runs while another run keeps logging, and prints how much of the file comes back, how
    soon, and the live run's ingest rate meanwhile against its rate before the deletes.
    python bench/storage.py [--runs 100] [--points 5000] [--long 1000000] [--per-call 50]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, start_server, stop, temp_dir  # noqa: E402

import paneboard  # noqa: E402

GOAL_GIVEN_BACK = 0.40
GOAL_RATE_SHARE = 0.90


def noisy_curve(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    steps = np.arange(n)
    return (2.0 / (1.0 + steps / 500.0) + 0.05 * rng.normal(size=n)).astype(np.float32).astype(np.float64)


def log_run(port: int, env: str, points: int, per_call: int, seed: int) -> None:
    client = paneboard.Client(server="http://127.0.0.1", port=port, env=env, spool_dir=False)
    y = noisy_curve(points, seed)
    for lo in range(0, points, per_call):
        hi = min(points, lo + per_call)
        client.line(X=np.arange(lo, hi, dtype=np.float64), Y=y[lo:hi], win="loss", update="append" if lo else None)
    assert client.flush(timeout=600), f"{env}: not every point was acknowledged"
    client.close_connection(timeout=10)


def file_bytes(db: Path) -> int:
    """The database's size as its pages say (committed pages, whether still in the WAL or checkpointed)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]


def all_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def bytes_per_point(tmp: Path, name: str, runs: int, points: int, per_call: int) -> dict[str, Any]:
    db = tmp / f"{name}.db"
    port = free_port()
    proc = start_server(db, port)
    try:
        for r in range(runs):
            log_run(port, f"{name}{r}", points, per_call, seed=r)
    finally:
        stop(proc)  # a clean stop checkpoints the WAL into the file
    size = all_bytes(db)
    with sqlite3.connect(db) as conn:  # where the bytes are: the points' chunks, and the rest (runs' metadata...)
        chunk = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'chunk'").fetchone()[0]
        run = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'run'").fetchone()[0]
    total = runs * points
    return {"runs": runs, "points_per_run": points, "db_bytes": size, "bytes_per_point": size / total,
            "chunk_bytes_per_point": chunk / total, "run_metadata_bytes_per_run": run / runs}


class LiveRun:
    """A run that keeps logging `per_call` points a call; counts what the server acknowledged, and when."""

    def __init__(self, port: int, per_call: int, points_per_s: float) -> None:
        self.client = paneboard.Client(server="http://127.0.0.1", port=port, env="live", spool_dir=False)
        self.per_call = per_call
        self.period = 20 * per_call / points_per_s  # seconds per group of 20 calls
        self.acked: list[tuple[float, int]] = []  # (monotonic time, points acknowledged by then)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        sent, y = 0, noisy_curve(self.per_call * 20, 99)
        due = time.monotonic()
        while not self.stop.wait(max(0.0, due - time.monotonic())):  # paced as a training loop logs
            due += self.period
            for k in range(20):
                self.client.line(X=np.arange(sent, sent + self.per_call, dtype=np.float64),
                                 Y=y[k * self.per_call:(k + 1) * self.per_call], win="loss",
                                 update="append" if sent else None)
                sent += self.per_call
            self.client.flush(timeout=60)
            self.acked.append((time.monotonic(), sent))

    def rate(self, t0: float, t1: float) -> float:
        inside = [(t, n) for t, n in self.acked if t0 <= t <= t1]
        if len(inside) < 2:
            return float("nan")
        return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def space_back(tmp: Path, runs: int, points: int, per_call: int, baseline_s: float, limit_s: float,
               live_rate: float) -> dict[str, Any]:
    db = tmp / "space.db"
    port = free_port()
    proc = start_server(db, port)
    try:
        for r in range(runs):
            log_run(port, f"run{r}", points, per_call, seed=r)
        live = LiveRun(port, per_call, live_rate)
        live.thread.start()
        time.sleep(baseline_s)  # the bench measures a rate over this window: a span of time, not a wait for a state
        before = file_bytes(db)
        t_delete = time.monotonic()
        for r in range(0, runs, 2):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/envs/run{r}", method="DELETE")
            urllib.request.urlopen(req, timeout=60).read()
        deleted = time.monotonic()
        t_goal = None
        while time.monotonic() - t_delete < limit_s:
            if file_bytes(db) <= (1 - GOAL_GIVEN_BACK) * before:
                t_goal = time.monotonic()
                break
            time.sleep(0.05)
        t_end = t_goal or time.monotonic()
        while time.monotonic() < t_delete + baseline_s:  # a window as long as the baseline's, for the rate
            time.sleep(0.05)
        live.stop.set()
        live.thread.join(60)
        live.client.close_connection(timeout=10)
        base_rate = live.rate(t_delete - baseline_s, t_delete)
        during = live.rate(t_delete, max(t_end, t_delete + baseline_s))
    finally:
        stop(proc)
    after = file_bytes(db)  # a clean stop leaves the file as the server made it
    return {"runs": runs, "deleted": (runs + 1) // 2, "file_bytes_before": before, "file_bytes_after_stop": after,
            "given_back": 1 - after / before, "delete_requests_s": deleted - t_delete,
            "seconds_to_40pct": None if t_goal is None else t_goal - t_delete,
            "ingest_points_per_s_before": base_rate, "ingest_points_per_s_during": during,
            "ingest_rate_share": during / base_rate}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--points", type=int, default=5000)
    ap.add_argument("--long", type=int, default=1_000_000, help="points of the one long series (0: skip)")
    ap.add_argument("--per-call", type=int, default=50, help="points per SDK call (a run logging every step)")
    ap.add_argument("--baseline-s", type=float, default=5.0)
    ap.add_argument("--live-rate", type=float, default=5000, help="points/s the run that keeps logging sends")
    args = ap.parse_args()
    tmp = temp_dir("storage")
    short = bytes_per_point(tmp, "short", args.runs, args.points, args.per_call)
    for got in [short] + ([bytes_per_point(tmp, "long", 1, args.long, 1000)] if args.long else []):
        print(f"{got['runs']} run(s) x {got['points_per_run']} points: {got['bytes_per_point']:.2f} B/point "
              f"({got['db_bytes'] / 2**20:.1f} MiB; the points' chunks {got['chunk_bytes_per_point']:.2f} B/point, "
              f"each run's metadata {got['run_metadata_bytes_per_run'] / 1024:.1f} KiB)", flush=True)
    space = space_back(tmp, args.runs, args.points, args.per_call, args.baseline_s, limit_s=60.0,
                       live_rate=args.live_rate)
    goal = space["seconds_to_40pct"]
    print(f"deleting {space['deleted']} of {space['runs']} runs: file {space['file_bytes_before'] / 2**20:.1f} MiB "
          f"-> {space['file_bytes_after_stop'] / 2**20:.1f} MiB ({space['given_back']:.0%} given back; "
          f"{GOAL_GIVEN_BACK:.0%} " + (f"after {goal:.2f} s" if goal is not None else "not within 60 s") + "); "
          f"live ingest {space['ingest_points_per_s_during']:.0f} points/s vs {space['ingest_points_per_s_before']:.0f} "
          f"before ({space['ingest_rate_share']:.0%}; goal >= {GOAL_RATE_SHARE:.0%})", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
