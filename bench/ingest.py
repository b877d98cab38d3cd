"""Ingest benchmark: per-call cost, sustained appends, bulk points/s to SQLite, live latency to a browser socket.

Starts its own dash-server on a free port with a temp database and prints the figures:
    python bench/ingest.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import paneboard

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, paced, start_server  # noqa: E402,F401  (free_port: re-exported for older imports)


def call_cost(port: int, n: int) -> dict:
    """Median and p99 of one client.line(update='append') call in the calling thread."""
    client = paneboard.Client(server="http://127.0.0.1", port=port, env="bench_call")
    client.line(X=[0], Y=[0.0], win="w", opts={"title": "call cost"})
    client.flush(timeout=30)
    clock = time.perf_counter_ns
    costs = np.empty(n, dtype=np.int64)
    line = client.line
    for i in range(n):
        t0 = clock()
        line(X=[i], Y=[0.5], win="w", update="append")
        costs[i] = clock() - t0
    client.flush(timeout=120)
    client.close_connection(timeout=10)
    return {"median_us": float(np.median(costs)) / 1e3, "p99_us": float(np.percentile(costs, 99)) / 1e3,
            "mean_us": float(costs.mean()) / 1e3}


def sustained(port: int, n: int) -> dict:
    """n single-point appends as fast as the caller can: call rate per 10% slice and committed rate overall."""
    client = paneboard.Client(server="http://127.0.0.1", port=port, env="bench_sustained")
    client.line(X=[0], Y=[0.0], win="w")
    client.flush(timeout=30)
    tenth = n // 10
    marks = []
    t_start = time.perf_counter()
    for i in range(n):
        if i % tenth == 0:
            marks.append(time.perf_counter())
        client.line(X=[i], Y=[float(i)], win="w", update="append")
    marks.append(time.perf_counter())
    ok = client.flush(timeout=300)
    t_done = time.perf_counter()
    client.close_connection(timeout=10)
    rates = [tenth / (b - a) for a, b in zip(marks, marks[1:], strict=False)]
    return {"calls": n, "first_10pct_calls_per_s": rates[0], "last_10pct_calls_per_s": rates[-1],
            "committed_calls_per_s": n / (t_done - t_start), "all_acked": ok}


def bulk(port: int, total: int, per_call: int, env: str = "bench_bulk", win: str = "w") -> dict:
    """Points/s from SDK calls carrying per_call points each until they are committed in SQLite."""
    client = paneboard.Client(server="http://127.0.0.1", port=port, env=env)
    x = np.arange(per_call, dtype=np.float64)
    y = np.random.default_rng(0).normal(size=per_call)
    client.line(X=x[:1] - 1, Y=y[:1], win=win)
    client.flush(timeout=30)
    t0 = time.perf_counter()
    for start in range(0, total, per_call):
        client.line(X=x + start, Y=y, win=win, update="append")
    ok = client.flush(timeout=600)
    dt = time.perf_counter() - t0
    client.close_connection(timeout=10)
    return {"points": total, "points_per_call": per_call, "points_per_s": total / dt, "all_acked": ok}


def live_latency(port: int, rate: float, seconds: float) -> dict:
    """SDK call -> message on a subscribed /ws socket, at a paced event rate."""
    from websockets.sync.client import connect

    env = f"bench_live_{int(rate)}"
    client = paneboard.Client(server="http://127.0.0.1", port=port, env=env)
    client.line(X=[-1], Y=[0.0], win="w")
    client.flush(timeout=30)
    n = int(rate * seconds)
    arrived = np.full(n, np.nan)
    ws = connect(f"ws://127.0.0.1:{port}/ws", open_timeout=10, compression=None).__enter__()
    ws.send(json.dumps({"subscribe": env}))
    ws.recv(timeout=10)

    def reader() -> None:
        got = 0
        while got < n:
            try:
                frame = ws.recv(timeout=10)
            except Exception:
                return
            now = time.perf_counter()
            for msg in json.loads(frame):
                if msg["type"] == "extend":
                    for x in msg["traces"][0]["x"]:
                        if 0 <= x < n:
                            arrived[int(x)] = now
                            got += 1

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    times, t_sent = paced(n, rate, lambda i: client.line(X=[i], Y=[1.0], win="w", update="append"))
    sent = np.array(times)
    th.join(timeout=30)
    ws.close()
    client.close_connection(timeout=10)
    lat = (arrived - sent)[~np.isnan(arrived)] * 1e3
    return {"rate_per_s": rate, "achieved_per_s": n / t_sent if t_sent > 0 else None, "events": n,
            "received": int(len(lat)),
            "p50_ms": float(np.percentile(lat, 50)) if len(lat) else None,
            "p99_ms": float(np.percentile(lat, 99)) if len(lat) else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    args = ap.parse_args()
    q = args.quick
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_server(Path(tmp) / "bench.db", port)
        try:
            results = {
                # Below the SDK's default max_queue (100,000): the figure is the call, not overflow handling.
                "call_cost": call_cost(port, 20_000 if q else 90_000),
                "sustained": sustained(port, 10_000 if q else 100_000),
                "bulk": bulk(port, 200_000 if q else 5_000_000, 10_000 if q else 100_000),
                "live": [live_latency(port, r, 1.0 if q else 5.0) for r in ((100, 1000) if q else (100, 1000))],
            }
        finally:
            proc.terminate()
            proc.wait(30)
        db_bytes = sum(p.stat().st_size for p in Path(tmp).glob("bench.db*"))
    c, s, b = results["call_cost"], results["sustained"], results["bulk"]
    print(f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}")
    print(f"client.line(update='append') call cost: median {c['median_us']:.2f} us, p99 {c['p99_us']:.2f} us")
    print(f"sustained single-point appends ({s['calls']:,} calls): first 10% {s['first_10pct_calls_per_s']:,.0f}/s, "
          f"last 10% {s['last_10pct_calls_per_s']:,.0f}/s, committed {s['committed_calls_per_s']:,.0f}/s"
          f" (all acked: {s['all_acked']})")
    print(f"bulk ingest: {b['points_per_s']:,.0f} points/s committed ({b['points']:,} points, "
          f"{b['points_per_call']:,} per call, all acked: {b['all_acked']})")
    for lv in results["live"]:
        print(f"live latency at {lv['rate_per_s']:,.0f} events/s: p50 {lv['p50_ms']:.1f} ms, p99 {lv['p99_ms']:.1f} ms "
              f"({lv['received']}/{lv['events']} received)")
    print(f"database size after the run: {db_bytes / 1e6:.1f} MB")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
