"""2,000-point reads of one long series, before (main: chunks decoded on every read) and after (decoded-chunk cache
with block extremes), full range and zoomed, warm and first; then the phases of the 1M-point read.

Usage: python bench/read_overview.py [points ...]   (default 1e5 1e6 3e6 1e7). Fills a fresh SQLite store directly
(no HTTP: the read is what changed), then times store.read_series at a 2,000-point budget, warm (median of reps)
and first (a cold cache, a warm SQLite page cache), both ways on the same database, over the full range, a wide
zoom (the middle half) and a narrow one (the middle 2%), and checks the answers are identical. Last, each size's
warm full-range read against the goals (<= 20 ms at every length; <= 50 ms and <= 2x the smallest size's).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select

from paneboard.server.jsonio import dumps as json_dumps
from paneboard.server.store import SqlStore, codec, digests, downsample, overview
from paneboard.server.store.chunk_cache import ChunkCache
from paneboard.server.store.models import chunk_t
from paneboard.server.store.records import TraceRecord
from paneboard.server.store.schema import ensure_schema

PIECE = 5_000_000  # points per writer transaction while filling
REPS = 7
GOAL_MS, GOAL_RATIO, GOAL_ALL_MS = 50.0, 2.0, 20.0


def fill(store: SqlStore, n: int) -> TraceRecord:
    with store.transaction() as tx:
        trace = tx.add_trace(tx.put_pane("bench", "loss", "line", "", {}, None), "t", {})
    rng = np.random.default_rng(0)
    for lo in range(0, n, PIECE):
        k = min(PIECE, n - lo)
        x = np.arange(lo, lo + k, dtype=np.float64)
        y = (2.0 / (1.0 + x / 5e5) + 0.05 * rng.normal(size=k)).astype(np.float32).astype(np.float64)
        with store.transaction() as tx:
            tx.append_points(trace, x, y, 1.7e9 + x * 0.01)
    return store.list_traces(store.get_pane("bench", "loss"))[0]


def plain_loader(conn: Any, trace_id: int, phases: dict[str, float]) -> tuple[Any, Any]:
    """main's chunk access: every chunk a read needs fetched in one query and decoded, every read again."""
    c = chunk_t.c
    got: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def fetch(seqs: Any) -> None:
        wanted = sorted(set(seqs) - got.keys())
        want = set(wanted)
        if not wanted:
            return
        t0 = time.perf_counter()
        q = select(c.seq, c.xs, c.ys).where(c.trace_id == trace_id)
        if wanted[-1] - wanted[0] + 1 <= 2 * len(wanted):  # as main: a range scan when dense, IN lists when not
            rows = conn.execute(q.where(c.seq >= wanted[0], c.seq <= wanted[-1])).all()
        else:
            rows = [r for i in range(0, len(wanted), 900) for r in conn.execute(q.where(c.seq.in_(wanted[i:i + 900])))]
        t1 = time.perf_counter()
        for r in rows:
            if r.seq in want:
                got[r.seq] = (codec.decode(r.xs), codec.decode(r.ys))
        phases["sql_fetch"] += t1 - t0
        phases["decode"] += time.perf_counter() - t1

    def load(seq: int) -> tuple[np.ndarray, np.ndarray]:
        fetch([seq])
        return got[seq]

    return load, fetch


def main_read(store: SqlStore, trace: TraceRecord, budget: int, x0: float | None = None, x1: float | None = None,
              phases: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The read as main makes it (digests for the full range, chunk rows for a zoom; no cache)."""
    ph = phases if phases is not None else {"sql_fetch": 0.0, "decode": 0.0}
    c = chunk_t.c
    with store.engine.connect() as conn:
        load, fetch = plain_loader(conn, trace.id, ph)
        if x0 is None:
            t0 = time.perf_counter()
            found = digests.summaries(conn, trace.id)
            ph["summaries"] = time.perf_counter() - t0
            if found is not None:
                return overview.minmax(*found, load, budget, fetch)
        q = select(c.seq, c.n, c.x0, c.x1, c.ymin, c.ymax, c.x_ymin, c.x_ymax).where(c.trace_id == trace.id)
        if x0 is not None and x1 is not None:
            q = q.where(c.x1 >= x0, c.x0 <= x1)
        metas = [downsample.ChunkMeta(*r) for r in conn.execute(q.order_by(c.seq))]
        lo = x0 if x0 is not None else min(m.x0 for m in metas if m.x0 is not None)
        hi = x1 if x1 is not None else max(m.x1 for m in metas if m.x1 is not None)
        return downsample.minmax(metas, load, budget, float(lo), float(hi),
                                 prefetch=lambda ms: fetch([m.seq for m in ms]))


def timed(fn: Callable[[], Any]) -> tuple[float, float, float, Any]:
    """First and median warm wall ms, median warm CPU ms (the machine is shared: wall time includes waiting)."""
    times, cpu, out = [], [], None
    for _ in range(REPS):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return times[0] * 1e3, statistics.median(times[1:]) * 1e3, statistics.median(cpu[1:]) * 1e3, out


def measure(n: int) -> dict[str, Any]:
    """One fresh database holding an n-point series, read both ways over three ranges."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="pb-read-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'r.db'}"
        ensure_schema(url, url)
        store = SqlStore(url)
        try:
            t0 = time.perf_counter()
            trace = fill(store, n)
            out["fill_s"] = round(time.perf_counter() - t0, 1)
            ranges = {"full": (None, None), "zoom_half": (0.25 * n, 0.75 * n), "zoom_2pct": (0.49 * n, 0.51 * n)}
            for name, (x0, x1) in ranges.items():
                first_old, warm_old, cpu_old, old = timed(lambda a=x0, b=x1: main_read(store, trace, 2000, a, b))
                store.chunk_cache = ChunkCache()  # so that the first read below is a cold one

                def new_read(a: float | None = x0, b: float | None = x1) -> tuple[np.ndarray, np.ndarray]:
                    s = store.read_series(trace, 2000, a, b)
                    return s.x, s.y

                first_new, warm_new, cpu_new, new = timed(new_read)
                if name == "full":
                    out["cache_mb"] = round(store.chunk_cache.nbytes / 2**20, 1)
                out[name] = {"before_warm_ms": round(warm_old, 2), "before_first_ms": round(first_old, 2),
                             "after_warm_ms": round(warm_new, 2), "after_first_ms": round(first_new, 2),
                             "before_cpu_ms": round(cpu_old, 2), "after_cpu_ms": round(cpu_new, 2),
                             "points": len(new[0]),
                             "identical": bool(np.array_equal(new[0], old[0]) and np.array_equal(new[1], old[1]))}
            if n == 1_000_000:
                out["phases_before_ms"] = phases(store, trace)
        finally:
            store.close()
    return out


def phases(store: SqlStore, trace: TraceRecord) -> dict[str, float]:
    """Where main's warm 1M-point full-range read spends its time (median of reps), JSON of the answer included."""
    runs = []
    for _ in range(REPS):
        ph = {"sql_fetch": 0.0, "decode": 0.0, "summaries": 0.0}
        t0 = time.perf_counter()
        x, y = main_read(store, trace, 2000, phases=ph)
        total = time.perf_counter() - t0
        t1 = time.perf_counter()
        json_dumps({"x": x.tolist(), "y": y.tolist()})
        ph["json"] = time.perf_counter() - t1
        ph["bucket_pass"] = total - ph["sql_fetch"] - ph["decode"] - ph["summaries"]
        runs.append(ph)
    return {k: round(statistics.median(r[k] for r in runs) * 1e3, 2) for k in runs[0]}


def main() -> None:
    sizes = [int(float(a)) for a in sys.argv[1:]] or [100_000, 1_000_000, 3_000_000, 10_000_000]
    results = {}
    for n in sizes:
        r = results[n] = measure(n)
        for name in ("full", "zoom_half", "zoom_2pct"):
            m = r[name]
            print(f"{n:>12,} points {name:>9}: before {m['before_warm_ms']:7.2f} ms warm (cpu "
                  f"{m['before_cpu_ms']:6.2f}, first {m['before_first_ms']:7.2f}) | after {m['after_warm_ms']:6.2f} ms "
                  f"warm (cpu {m['after_cpu_ms']:5.2f}, first {m['after_first_ms']:7.2f}) | identical={m['identical']}",
                  flush=True)
        print(f"{'':>12} filled in {r['fill_s']} s, cache {r['cache_mb']} MB", flush=True)
        if "phases_before_ms" in r:
            print(f"{'':>12} before, warm 1M full read by phase (ms): {r['phases_before_ms']}", flush=True)
    base = 1_000_000 if 1_000_000 in results else sizes[0]  # the goal: <= 2x the 1M-point read
    for n in sizes:
        warm, ref = results[n]["full"]["after_warm_ms"], results[base]["full"]["after_warm_ms"]
        zoom = results[n]["zoom_half"]["after_warm_ms"]
        ok = warm <= min(GOAL_MS, GOAL_ALL_MS) and warm <= GOAL_RATIO * ref and zoom <= GOAL_ALL_MS
        print(f"{n:,} points: full {warm:.2f} ms, wide zoom {zoom:.2f} ms warm; vs {base:,}: ratio {warm / ref:.2f} "
              f"(goal <= {GOAL_ALL_MS:.0f} ms, <= {GOAL_RATIO:.0f}x: {'met' if ok else 'NOT met'})", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
