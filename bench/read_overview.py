"""Full-range 2,000-point reads of one long series: from chunk digests (now) and from every chunk row (main).

Usage: python bench/read_overview.py [points ...]   (default 1e6 1e7 1e8). Fills a fresh SQLite store directly
(no HTTP: the read is what changed), then times store.read_series at a 2,000-point budget, warm (median of
reps) and first, both ways on the same database, and checks the two answers are identical. Last, each size's
warm read against the smallest size's (goal: <= 50 ms and <= 2x the 1M-point read).
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

from paneboard.server.store import SqlStore, downsample
from paneboard.server.store.models import chunk_t
from paneboard.server.store.records import TraceRecord
from paneboard.server.store.schema import ensure_schema

PIECE = 5_000_000  # points per writer transaction while filling
REPS = 7
GOAL_MS, GOAL_RATIO = 50.0, 2.0


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


def every_chunk_row(store: SqlStore, trace: TraceRecord, budget: int) -> tuple[np.ndarray, np.ndarray]:
    """main's full-range read: every chunk row's summary columns, then downsample.minmax."""
    c = chunk_t.c
    with store.engine.connect() as conn:
        q = select(c.seq, c.n, c.x0, c.x1, c.ymin, c.ymax, c.x_ymin, c.x_ymax).where(c.trace_id == trace.id)
        metas = [downsample.ChunkMeta(*r) for r in conn.execute(q.order_by(c.seq))]
        s = store._read_chunks(conn, trace, metas, budget, None, None, "minmax", {})
    return s.x, s.y


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(REPS):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times[0] * 1e3, statistics.median(times[1:]) * 1e3, out


def measure(n: int) -> dict[str, Any]:
    """One fresh database holding an n-point series, read both ways."""
    with tempfile.TemporaryDirectory(prefix="pb-read-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'r.db'}"
        ensure_schema(url, url)
        store = SqlStore(url)
        try:
            t0 = time.perf_counter()
            trace = fill(store, n)
            fill_s = time.perf_counter() - t0
            first_new, warm_new, new = timed(lambda: store.read_series(trace, 2000))
            first_old, warm_old, old = timed(lambda: every_chunk_row(store, trace, 2000))
        finally:
            store.close()
    same = bool(np.array_equal(new.x, old[0]) and np.array_equal(new.y, old[1]))
    return {"fill_s": round(fill_s, 1), "digest_first_ms": round(first_new, 2), "digest_warm_ms": round(warm_new, 2),
            "chunk_rows_first_ms": round(first_old, 2), "chunk_rows_warm_ms": round(warm_old, 2),
            "points": len(new.x), "identical": same}


def main() -> None:
    sizes = [int(float(a)) for a in sys.argv[1:]] or [1_000_000, 10_000_000, 100_000_000]
    results = {}
    for n in sizes:
        r = results[n] = measure(n)
        print(f"{n:>12,} points: digests {r['digest_warm_ms']:7.2f} ms warm (first {r['digest_first_ms']:.2f}) | "
              f"every chunk row (main) {r['chunk_rows_warm_ms']:7.2f} ms warm | identical={r['identical']} "
              f"(filled in {r['fill_s']} s)", flush=True)
    base = sizes[0]
    for n in sizes[1:]:
        warm, ref = results[n]["digest_warm_ms"], results[base]["digest_warm_ms"]
        ok = warm <= GOAL_MS and warm <= GOAL_RATIO * ref
        print(f"{n:,} points vs {base:,}: {warm:.2f} ms vs {ref:.2f} ms warm, ratio {warm / ref:.2f} "
              f"(goal <= {GOAL_MS:.0f} ms and <= {GOAL_RATIO:.0f}x: {'met' if ok else 'NOT met'})", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
