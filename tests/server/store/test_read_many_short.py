"""read_series_many's short traces (read whole: every chunk row in a few queries, blobs decoded by codec.decode_many)
give exactly read_series's answers, on SQLite and PostgreSQL: partial and full chunks, tail pieces, NaN and inf
values, a NaN x, x going back, float32 values, an empty trace, zooms and strides, budgets above and below a line."""

from __future__ import annotations

import numpy as np
import pytest

from paneboard.server.store import SqlStore, codec
from paneboard.server.store.chunks import CHUNK_POINTS
from paneboard.server.store.short_reads import SHORT_POINTS

BUDGETS = (4, 16, 40, 5000)


def lines() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    x50 = np.arange(50, dtype=np.float64)
    bad = rng.normal(size=50)
    bad[[3, 9]] = np.nan
    bad[[5, 20]] = [np.inf, -np.inf]
    nan_x = x50.copy()
    nan_x[7] = np.nan
    back = np.r_[np.arange(30.0), np.arange(10.0, 30.0)]  # a restarted run logged into the same line
    full = np.arange(CHUNK_POINTS + 300, dtype=np.float64)  # a full chunk and a partial one
    return {
        "short": (x50, np.exp(-x50 / 20) + rng.normal(0, 0.01, 50)),
        "float32": (x50 * 2, rng.normal(size=50).astype(np.float32).astype(np.float64)),
        "nan_inf": (x50, bad),
        "nan_x": (nan_x, rng.normal(size=50)),
        "back": (back, rng.normal(size=len(back))),
        "full": (full, np.sin(full / 100) + rng.normal(0, 0.1, len(full))),
        "one": (np.array([3.0]), np.array([np.nan])),
        "long": (np.arange(SHORT_POINTS + 500.0), rng.normal(size=SHORT_POINTS + 500)),  # the summaries' path
    }


def fill(store: SqlStore) -> dict[str, object]:
    traces = {}
    with store.transaction() as tx:
        for name, (x, y) in lines().items():
            pane = tx.put_pane("run", name, "line", name, {}, None)
            traces[name] = tx.add_trace(pane, "", {})
            tx.append_points(traces[name], x[:-10], y[:-10], x[:-10])
        traces["empty"] = tx.add_trace(tx.put_pane("run", "empty", "line", "empty", {}, None), "", {})
    for name, (x, y) in lines().items():  # the last points in small appends: partial tail pieces
        for k in range(len(x) - 10, len(x), 4):
            with store.transaction() as tx:
                tx.append_points(traces[name], x[k:k + 4], y[k:k + 4], x[k:k + 4])
    listed = store.chart_panes(["run"], ("line",))["run"]
    return {pane.win: ts[0] for pane, ts in listed}


def same(a, b) -> bool:
    return (a.x.dtype == b.x.dtype and a.y.dtype == b.y.dtype and a.x.tobytes() == b.x.tobytes()
            and a.y.tobytes() == b.y.tobytes() and a.total == b.total and a.downsampled == b.downsampled)


@pytest.mark.parametrize("budget", BUDGETS)
def test_many_short_reads_equal_one_by_one_reads(store, budget):
    traces = fill(store)
    assert traces["full"].total == CHUNK_POINTS + 300 <= SHORT_POINTS < traces["long"].total
    reads = [(t, x0, method) for t in traces.values() for x0, method in ((None, "minmax"), (None, "stride"),
                                                                          (20.0, "minmax"), (20.0, "stride"))]
    got = store.read_series_many(reads, budget)
    for (trace, x0, method), series in zip(reads, got, strict=True):
        assert same(series, store.read_series(trace, budget, x0, None, method)), (trace.total, x0, method, budget)
    # Without the NaN-x line, every whole line over the budget is downsampled in the batched pass.
    finite = [(t, None, "minmax") for name, t in traces.items() if name != "nan_x"] * 2
    for (trace, x0, method), series in zip(finite, store.read_series_many(finite, budget), strict=True):
        assert same(series, store.read_series(trace, budget, x0, None, method))
    assert store.read_series_many([], budget) == []
    # In any order: the chunk query sorts by trace id, a Scalars page lists runs pinned first, newest first, ...
    backwards = sorted(finite, key=lambda r: -r[0].id)
    for (trace, x0, method), series in zip(backwards, store.read_series_many(backwards, budget), strict=True):
        assert same(series, store.read_series(trace, budget, x0, None, method)), (trace.id, budget)


def test_decode_many_is_decode_bit_for_bit():
    rng = np.random.default_rng(3)
    arrays = []
    for n in (0, 1, 2, 3, 50, 50, 2048, 7):
        weird = rng.normal(size=n)
        weird[: min(n, 3)] = [np.nan, -0.0, np.inf][: min(n, 3)]
        arrays += [np.arange(n) * 0.5 + 3, rng.normal(size=n), rng.normal(size=n).astype(np.float32).astype(float),
                   weird]
    blobs = [codec.encode(a, compact, level) for a in arrays for compact, level in ((True, 1), (True, 6), (False, 6))]
    blobs.append(b"")
    assert {b[0] for b in blobs if b} == {codec.RAW_F64, codec.ARITH, codec.DELTA_Z, codec.DELTA32_Z}
    for blob, got in zip(blobs, codec.decode_many(blobs), strict=True):
        want = codec.decode(blob)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
