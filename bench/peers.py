"""Peer measurements for run_all: Visdom 0.2.4's server and client, TensorBoard's writer, loader and server."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import has_module, paced, start_tensorboard, stop, timed_get, tree_rss_mb

TB_TAG, TB_RUN = "loss", "run1"


def _rates(times: np.ndarray) -> dict[str, float]:
    """Median/mean per-call cost and call rates over the first and last 10% of a timed loop."""
    tenth = max(1, len(times) // 10)
    return {"calls": int(len(times)), "median_us": float(np.median(times)) * 1e6,
            "mean_us": float(times.mean()) * 1e6, "first_10pct_calls_per_s": tenth / float(times[:tenth].sum()),
            "last_10pct_calls_per_s": tenth / float(times[-tenth:].sum())}


# ------------------------------------------------------------------------------------------------- Visdom

def _visdom(port: int, env: str):
    import visdom

    # No incoming socket: it is only for callbacks, and without it the constructor does not wait on it.
    return visdom.Visdom(server="http://127.0.0.1", port=port, env=env, use_incoming_socket=False,
                         raise_exceptions=True)


def visdom_appends(port: int, n: int) -> dict[str, Any]:
    """n single-point vis.line(update='append') calls (each is /win_exists + /update, synchronous)."""
    vis = _visdom(port, "bench_calls")
    vis.line(X=np.array([0]), Y=np.array([0.0]), win="w")
    for i in range(5):  # warm-up (the HTTP session and keep-alive connection), as ours after its first call
        vis.line(X=np.array([i - 5]), Y=np.array([0.0]), win="w", update="append")
    y = np.random.default_rng(0).random(n)
    times = np.empty(n)
    clock = time.perf_counter
    for i in range(n):
        t0 = clock()
        vis.line(X=np.array([i]), Y=np.array([y[i]]), win="w", update="append")
        times[i] = clock() - t0
    out = _rates(times)
    # The server has applied the append when the call returns (in RAM: Visdom stores nothing until `save`).
    out["committed_calls_per_s"] = n / float(times.sum())
    return out


def visdom_bulk(port: int, calls: int, per_call: int) -> dict[str, Any]:
    """Points/s of appends carrying per_call points each, until the server has answered the last one."""
    vis = _visdom(port, "bench_bulk")
    x = np.arange(per_call, dtype=np.float64)
    y = np.random.default_rng(0).normal(size=per_call)
    vis.line(X=x[:1] - 1, Y=y[:1], win="w")
    t0 = time.perf_counter()
    for c in range(calls):
        vis.line(X=x + c * per_call, Y=y, win="w", update="append")
    dt = time.perf_counter() - t0
    return {"points": calls * per_call, "points_per_call": per_call, "points_per_s": calls * per_call / dt}


def visdom_live(port: int, rate: float, seconds: float) -> dict[str, Any]:
    """vis.line append -> the browser socket's message for that window (/socket, subscribed like the web UI)."""
    from websockets.sync.client import connect

    env, n = "bench_live", int(rate * seconds)
    vis = _visdom(port, env)
    vis.line(X=np.array([-1]), Y=np.array([0.0]), win="w")
    ws = connect(f"ws://127.0.0.1:{port}/socket", open_timeout=10, compression=None, proxy=None)
    sid = None
    while sid is None:
        msg = json.loads(ws.recv(timeout=10))
        if msg.get("command") == "register":
            sid = msg["data"]
    timed_get(f"http://127.0.0.1:{port}/env/{env}", data=json.dumps({"sid": sid, "eid": env}).encode())
    while json.loads(ws.recv(timeout=10)).get("command") != "layout":  # end of the env load
        pass
    arrived: list[float] = []

    def reader() -> None:
        while len(arrived) < n:
            try:
                frame = ws.recv(timeout=10)
            except Exception:
                return
            msg = json.loads(frame)
            # Every /update of the window is broadcast once: a JSON patch, or the whole window.
            if msg.get("command") in ("window_update", "window") and msg.get("win", msg.get("id")) == "w":
                arrived.append(time.perf_counter())

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    times, took = paced(n, rate, lambda i: vis.line(X=np.array([i]), Y=np.array([1.0]), win="w", update="append"))
    sent = np.array(times)
    achieved = n / took
    th.join(timeout=30)
    ws.close()
    lat = (np.array(arrived[:n]) - sent[:len(arrived)]) * 1e3
    return {"rate_per_s": rate, "achieved_per_s": achieved, "events": n, "received": len(lat),
            "p50_ms": float(np.percentile(lat, 50)) if len(lat) else None,
            "p99_ms": float(np.percentile(lat, 99)) if len(lat) else None}


def visdom_window(port: int, points: int, reps: int) -> dict[str, Any]:
    """One window of `points` points (created in a single call), then POST /win_data timed reps times."""
    vis = _visdom(port, "bench_open")
    x = np.arange(points, dtype=np.float64)
    vis.line(X=x, Y=np.sin(x / 500.0), win="w")
    url, body = f"http://127.0.0.1:{port}/win_data", json.dumps({"win": "w", "eid": "bench_open"}).encode()
    times, size = [], 0
    for _ in range(reps):
        dt, data = timed_get(url, data=body)
        times.append(dt)
        size = len(data)
    return {"points": points, "first_ms": times[0] * 1e3, "median_ms": float(np.median(times)) * 1e3,
            "bytes": size, "points_returned": points}


# -------------------------------------------------------------------------------------------- TensorBoard

def torch_writer(logdir: Path, n: int) -> dict[str, Any]:
    """torch.utils.tensorboard.SummaryWriter.add_scalar n times (default queue/flush), then close()."""
    if not has_module("tensorboard"):
        return {"na": "tensorboard is not installed (not in [dev]); torch's SummaryWriter needs it"}
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(log_dir=str(logdir))
    times = np.empty(n)
    clock, add = time.perf_counter, w.add_scalar
    t_start = clock()
    for i in range(n):
        t0 = clock()
        add(TB_TAG, 1.0 / (i + 1), i)
        times[i] = clock() - t0
    w.close()  # everything is in the event file once close() returns
    out = _rates(times)
    out["committed_calls_per_s"] = n / (clock() - t_start)
    return out


def write_tb_logdir(logdir: Path, n: int) -> Path:
    """A logdir with one run of n scalars under one tag (the files every TensorBoard figure reads)."""
    torch_writer(logdir / TB_RUN, n)
    return logdir


_EA = """import sys, time
from tensorboard.backend.event_processing import event_accumulator as ea
t0 = time.perf_counter()
acc = ea.EventAccumulator(sys.argv[1], size_guidance={k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE})
acc.Reload()
n = sum(len(acc.Scalars(t)) for t in acc.Tags()["scalars"])
print(time.perf_counter() - t0, n)
"""


def ea_reload(logdir: Path) -> dict[str, Any]:
    """EventAccumulator (keep everything) Reload() of the run in a fresh interpreter: wall time and Reload() alone."""
    if not has_module("tensorboard"):
        return {"na": "tensorboard is not installed (not in [dev])"}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _EA, str(logdir / TB_RUN)], capture_output=True, text=True,
                         timeout=600, check=True).stdout.split()
    wall = time.perf_counter() - t0  # with interpreter start and imports, like `dash-server import-tb`
    secs, n = float(out[0]), int(out[1])
    return {"seconds": wall, "reload_only_s": secs, "points": n, "points_per_s": n / wall}


def tb_serve(logdir: Path, port: int, last_step: int, load_fast: bool, reps: int) -> dict[str, Any]:
    """Start tensorboard, poll the scalars route until the last step is served, then time reps requests."""
    url = f"http://127.0.0.1:{port}/data/plugin/scalars/scalars?run={TB_RUN}&tag={TB_TAG}"
    t0 = time.perf_counter()
    proc = start_tensorboard(logdir, port, load_fast)
    try:
        up = time.perf_counter() - t0
        first = full = None
        deadline = t0 + 300
        while full is None and time.perf_counter() < deadline:
            try:
                _, body = timed_get(url)
                data = json.loads(body)
            except (OSError, ValueError):
                data = []
            if data and first is None:
                first = time.perf_counter() - t0
            if data and data[-1][1] >= last_step:
                full = time.perf_counter() - t0
            else:
                time.sleep(0.1)
        if full is None:
            return {"na": "tensorboard did not serve the last step within 300 s"}
        times, size, pts = [], 0, 0
        for _ in range(reps):
            dt, body = timed_get(url)
            times.append(dt)
            size, pts = len(body), len(json.loads(body))
        return {"http_up_s": up, "first_data_s": first, "full_data_s": full, "first_ms": times[0] * 1e3,
                "median_ms": float(np.median(times)) * 1e3, "bytes": size, "points_returned": pts,
                "rss_mb": tree_rss_mb(proc.pid)}
    finally:
        stop(proc, group=True)
