"""Storage benchmark: bytes per point of short and long runs, and disk space given back after deleting runs.

Against a dash-server subprocess on a fresh SQLite file, through the SDK, on a noisy training curve (a float32 loss
decaying with noise, as `.item()` of a torch loss gives, logged per step with its wall time):
  * bytes/point of each workload, R runs x P points (short runs: the open tail of each run is a large share of
    its points; long series), beside TensorBoard's, MLflow's and W&B offline's on the same curve
    (bench/storage_peers.py; --no-peers skips them);
  * deletes half of the runs while another run keeps logging, and prints how much of the file comes back, how
    soon, and the live run's ingest rate meanwhile against its rate before the deletes.
    python bench/storage.py [--workloads 100x5000,1000x10000,1x1000000,1x10000000] [--per-call 50] [--no-peers]
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
import storage_peers  # noqa: E402
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


def live_bytes(db: Path) -> int:
    """The packed points of the run that keeps logging: its growth is not space the deletes failed to give back."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT coalesce(sum(length(c.xs) + length(c.ys) + length(c.walls)), 0) FROM chunk c "
                            "JOIN trace t ON t.id = c.trace_id JOIN pane p ON p.id = t.pane_id "
                            "JOIN env e ON e.id = p.env_id WHERE e.name = 'live'").fetchone()[0]


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
        run = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name IN ('run', 'provenance_part')").fetchone()[0]
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
        before, live_before = file_bytes(db), live_bytes(db)
        t_delete = time.monotonic()
        for r in range(0, runs, 2):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/envs/run{r}", method="DELETE")
            urllib.request.urlopen(req, timeout=60).read()
        deleted = time.monotonic()
        t_goal, lowest = None, before
        while time.monotonic() - t_delete < limit_s:  # the whole minute: what is given back by its end counts
            size = file_bytes(db)
            lowest = min(lowest, size)
            if t_goal is None and size <= (1 - GOAL_GIVEN_BACK) * before:
                t_goal = time.monotonic()
            time.sleep(0.05)
        at_limit, live_growth = file_bytes(db), live_bytes(db) - live_before
        t_end = t_goal or time.monotonic()
        live.stop.set()
        live.thread.join(60)
        live.client.close_connection(timeout=10)
        base_rate = live.rate(t_delete - baseline_s, t_delete)
        during = live.rate(t_delete, max(t_end, t_delete + baseline_s))
        minute = live.rate(t_delete, t_delete + limit_s)
    finally:
        stop(proc)
    after = file_bytes(db)  # a clean stop leaves the file as the server made it
    return {"runs": runs, "deleted": (runs + 1) // 2, "file_bytes_before": before, "file_bytes_after_stop": after,
            "given_back": 1 - after / before, "given_back_at_limit": 1 - (at_limit - live_growth) / before, "limit_s": limit_s,
            "lowest_given_back": 1 - lowest / before, "live_growth_bytes": live_growth,
            "delete_requests_s": deleted - t_delete,
            "seconds_to_40pct": None if t_goal is None else t_goal - t_delete,
            "ingest_points_per_s_before": base_rate, "ingest_points_per_s_during": during,
            "ingest_rate_share": during / base_rate, "ingest_points_per_s_whole_limit": minute}


def parse_workloads(text: str) -> list[tuple[int, int]]:
    return [(int(r), int(p)) for r, p in (w.split("x") for w in text.split(",") if w)]


def print_table(rows: list[tuple[dict[str, Any], dict[str, dict[str, Any]]]]) -> None:
    peers = list(rows[0][1]) if rows and rows[0][1] else []
    head = ["workload", "paneboard file", "its chunks", "metadata/run"] + [f"{p} (sample)" for p in peers] + \
        [f"{p} (#44 survey)" for p in storage_peers.NOT_INSTALLED]
    print("bytes per point, noisy float32 curve with wall times:")
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for got, peer in rows:
        cells = [f"{got['runs']:,} x {got['points_per_run']:,}", f"{got['bytes_per_point']:.2f}",
                 f"{got['chunk_bytes_per_point']:.2f}", f"{got['run_metadata_bytes_per_run']:.0f} B"]
        cells += [storage_peers.cell(peer[p]) for p in peers]
        cells += [f"{v:.0f}" for v in storage_peers.NOT_INSTALLED.values()]
        print("| " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="100x5000,1000x10000,1x1000000,1x10000000",
                    help="RUNSxPOINTS, comma-separated")
    ap.add_argument("--per-call", type=int, default=50, help="points per SDK call of a short run (a run logging "
                    "every step); longer runs send 1%% of their points a call, which stores the same bytes")
    ap.add_argument("--no-peers", action="store_true", help="skip the peers' figures")
    ap.add_argument("--no-space", action="store_true", help="skip the delete-under-ingest figures")
    ap.add_argument("--space-runs", type=int, default=100)
    ap.add_argument("--space-points", type=int, default=5000)
    ap.add_argument("--baseline-s", type=float, default=5.0)
    ap.add_argument("--live-rate", type=float, default=5000, help="points/s the run that keeps logging sends")
    args = ap.parse_args()
    tmp = temp_dir("storage")
    rows = []
    for runs, points in parse_workloads(args.workloads):
        t0 = time.monotonic()
        got = bytes_per_point(tmp, f"w{runs}x{points}", runs, points, max(args.per_call, points // 100))
        print(f"{runs} run(s) x {points} points: {got['bytes_per_point']:.2f} B/point "
              f"({got['db_bytes'] / 2**20:.1f} MiB; the points' chunks {got['chunk_bytes_per_point']:.2f} B/point, "
              f"each run's metadata {got['run_metadata_bytes_per_run'] / 1024:.1f} KiB; "
              f"written in {time.monotonic() - t0:.0f} s)", flush=True)
        peers = {} if args.no_peers else storage_peers.measure(tmp, runs, points, noisy_curve)
        rows.append((got, peers))
        for f in tmp.glob(f"w{runs}x{points}.db*"):  # a 10M file need not wait for the end of the bench
            f.unlink()
    if rows:
        print_table(rows)
    if not args.no_space:
        space = space_back(tmp, args.space_runs, args.space_points, args.per_call, args.baseline_s, limit_s=60.0,
                           live_rate=args.live_rate)
        goal = space["seconds_to_40pct"]
        print(f"deleting {space['deleted']} of {space['runs']} runs: file {space['file_bytes_before'] / 2**20:.1f} "
              f"MiB -> {space['file_bytes_after_stop'] / 2**20:.1f} MiB after stop; {space['given_back_at_limit']:.0%} "
              f"given back after {space['limit_s']:.0f} s while the server runs, not counting the "
              f"{space['live_growth_bytes'] / 2**20:.1f} MiB the live run added (lowest file: "
              f"{space['lowest_given_back']:.0%} back; {GOAL_GIVEN_BACK:.0%} "
              + (f"after {goal:.2f} s" if goal is not None else "not within 60 s") + "); "
              f"live ingest {space['ingest_points_per_s_during']:.0f} points/s vs "
              f"{space['ingest_points_per_s_before']:.0f} before ({space['ingest_rate_share']:.0%}; "
              f"goal >= {GOAL_RATE_SHARE:.0%}; over the whole minute {space['ingest_points_per_s_whole_limit']:.0f} "
              f"points/s)", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
