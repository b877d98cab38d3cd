"""paneboard measurements for run_all beyond bench/ingest.py: SummaryWriter, opening series, memory, import-tb."""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import free_port, rss_mb, rss_parts_mb, start_server, stop, timed_get
from ingest import bulk

import paneboard


def sdk_writer_cost(port: int, n: int, env: str = "bench_sw") -> dict[str, Any]:
    """paneboard.SummaryWriter.add_scalar per-call cost, if the SDK has it yet (another branch adds it)."""
    cls = getattr(paneboard, "SummaryWriter", None)
    if cls is None:
        return {"na": "paneboard.SummaryWriter does not exist yet"}
    params = inspect.signature(cls).parameters
    # Torch's signature plus keyword-only server/port (or client=); log_dir names the env.
    kw: dict[str, Any] = {"log_dir": env} if "log_dir" in params else {}
    if "server" in params and "port" in params:
        kw.update(server="http://127.0.0.1", port=port)
    elif "client" in params:
        kw["client"] = paneboard.Client(server="http://127.0.0.1", port=port, env=env)
    else:
        return {"na": f"unknown SummaryWriter signature {inspect.signature(cls)}"}
    w = cls(**kw)
    costs = np.empty(n, dtype=np.int64)
    clock, add = time.perf_counter_ns, w.add_scalar
    for i in range(n):
        t0 = clock()
        add("loss", 1.0 / (i + 1), i)
        costs[i] = clock() - t0
    acked = w.flush(120) if "timeout" in inspect.signature(w.flush).parameters else None
    w.close()
    return {"calls": n, "median_us": float(np.median(costs)) / 1e3, "mean_us": float(costs.mean()) / 1e3,
            "all_acked": acked, "kwargs": sorted(kw)}


def open_series(port: int, env: str, win: str, reps: int, budget: int = 2000) -> dict[str, Any]:
    """GET one pane at a point budget reps times: first and median time to the last byte, payload bytes."""
    url = f"http://127.0.0.1:{port}/api/v1/envs/{env}/panes/{win}?points={budget}"
    times, body = [], b""
    for _ in range(reps):
        dt, body = timed_get(url)
        times.append(dt)
    tr = json.loads(body)["data"]["traces"][0]
    return {"first_ms": times[0] * 1e3, "median_ms": float(np.median(times)) * 1e3, "bytes": len(body),
            "points_returned": len(tr["x"]), "total": tr.get("total")}


def open_after_start(db: Path, env: str, win: str, total: int) -> dict[str, Any]:
    """A fresh dash-server on a filled database: start -> HTTP up -> the whole series answered."""
    port = free_port()
    t0 = time.perf_counter()
    proc = start_server(db, port)
    try:
        up = time.perf_counter() - t0
        _, body = timed_get(f"http://127.0.0.1:{port}/api/v1/envs/{env}/panes/{win}?points=2000")
        full = time.perf_counter() - t0
        got = json.loads(body)["data"]["traces"][0].get("total")
        return {"http_up_s": up, "full_data_s": full, "total": got, "complete": got == total}
    finally:
        stop(proc)


def fill_and_open(tmp: Path, sizes: list[int], reps: int, per_call: int) -> dict[str, Any]:
    """One series per size through the SDK into a fresh server, each opened at a 2,000-point budget."""
    db = tmp / "open.db"
    port = free_port()
    proc = start_server(db, port)
    out: dict[str, Any] = {}
    try:
        for n in sizes:
            fill = bulk(port, n, min(per_call, n), env="bench_open", win=f"s{n}")
            out[str(n)] = {"fill_points_per_s": fill["points_per_s"],
                           **open_series(port, "bench_open", f"s{n}", reps)}
    finally:
        stop(proc)
    out["restart"] = open_after_start(db, "bench_open", f"s{sizes[0]}", sizes[0] + 1)
    return out


def db_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def memory(tmp: Path, panes: int, per_pane: int, per_call: int) -> dict[str, Any]:
    """Server RSS while panes x per_pane points are stored (sampled at each quarter) and DB bytes per point."""
    db = tmp / "mem.db"
    port = free_port()
    proc = start_server(db, port)
    client = paneboard.Client(server="http://127.0.0.1", port=port, env="bench_mem", spool_dir=False)
    samples = [(0.0, rss_mb(proc.pid))]
    x = np.arange(per_call, dtype=np.float64)
    y = np.random.default_rng(1).normal(size=per_call)
    total = panes * per_pane
    marks = [total * q // 4 for q in (1, 2, 3, 4)]
    done, t0 = 0, time.perf_counter()
    try:
        for k in range(panes):
            for start in range(0, per_pane, per_call):
                client.line(X=x + start, Y=y, win=f"m{k}", update="append")
                done += per_call
                if marks and done >= marks[0]:  # a quarter stored: wait for its commit, then sample
                    marks.pop(0)
                    client.flush(timeout=600)
                    samples.append((done / total, rss_mb(proc.pid)))
        ok = client.flush(timeout=600)
        rate = total / (time.perf_counter() - t0)
        parts = rss_parts_mb(proc.pid)
        client.close_connection(timeout=10)
        # The pages hold what a browser would ask for first: one pane opened, as after a restart.
        _, body = timed_get(f"http://127.0.0.1:{port}/api/v1/envs/bench_mem/panes?points=2000")
        after_open = rss_mb(proc.pid)
    finally:
        stop(proc)
    size = db_bytes(db)  # after a clean stop the WAL is checkpointed into the file
    return {"points": total, "panes": panes, "all_acked": ok, "points_per_s": rate,
            "rss_idle_mb": samples[0][1], "rss_samples": [[f, m] for f, m in samples],
            "rss_final_mb": samples[-1][1], "rss_after_open_all_mb": after_open,
            "rss_anon_mb": parts.get("RssAnon"), "rss_file_mb": parts.get("RssFile"),
            "db_bytes": size, "db_bytes_per_point": size / total, "rendered_bytes": len(body)}


def import_tb_available() -> bool:
    exe = shutil.which("dash-server")
    if exe is None:
        return False
    r = subprocess.run([exe, "import-tb", "--help"], capture_output=True, text=True, timeout=60)
    return r.returncode == 0 and "logdir" in (r.stdout + r.stderr).lower()


def import_tb(logdir: Path, db: Path, points: int) -> dict[str, Any]:
    """`dash-server import-tb LOGDIR --db PATH` wall time (process start included, as for the peer's child)."""
    if not import_tb_available():
        return {"na": "dash-server import-tb does not exist yet"}
    t0 = time.perf_counter()
    subprocess.run(["dash-server", "import-tb", str(logdir), "--db", str(db)], check=True, timeout=900,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    secs = time.perf_counter() - t0
    return {"seconds": secs, "points": points, "points_per_s": points / secs, "db_bytes": db_bytes(db)}
