"""A run's open tail is stored compact: short runs cost what long ones do, and every read answers as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from paneboard.server.store import SqlStore, chunks, codec
from paneboard.server.store.models import chunk_t
from paneboard.server.store.schema import ensure_schema

POINTS = 5000  # two full chunks and a 904-point tail
PER_COMMIT = 50  # a training loop's points per writer transaction


def noisy_curve(n: int, seed: int = 0) -> np.ndarray:
    """A float32 loss decaying with noise, widened to float64 as `.item()` gives it."""
    rng = np.random.default_rng(seed)
    return (2.0 / (1.0 + np.arange(n) / 500.0) + 0.05 * rng.normal(size=n)).astype(np.float32).astype(np.float64)


def raw_encoding(values: np.ndarray, compact: bool = False, level: int = 0) -> bytes:
    """How main encoded a partial tail row (raw float64): the rows an existing database holds."""
    return bytes([codec.RAW_F64]) + np.ascontiguousarray(values, dtype="<f8").tobytes()


@pytest.fixture
def new_store(tmp_path: Path):
    def make(name: str) -> SqlStore:
        url = f"sqlite:///{tmp_path / name}.db"
        ensure_schema(url, name)
        made.append(SqlStore(url))
        return made[-1]

    made: list[SqlStore] = []
    yield make
    for s in made:
        s.close()


def log_run(store: SqlStore, y: np.ndarray, per_commit: int = PER_COMMIT, env: str = "run"):
    with store.transaction() as tx:
        trace = tx.add_trace(tx.put_pane(env, "loss", "line", "", {}, None), "1", {})
    walls = 1.7e9 + np.arange(len(y)) * 0.01
    for lo in range(0, len(y), per_commit):
        with store.transaction() as tx:
            hi = min(len(y), lo + per_commit)
            tx.append_points(trace, np.arange(lo, hi, dtype=float), y[lo:hi], walls[lo:hi])
    return store.list_traces(store.get_pane(env, "loss"))[0]


def payload_bytes(store: SqlStore, trace_id: int) -> tuple[int, list[int]]:
    """Bytes of the trace's chunk payloads, and the encoding tag of each row's y column."""
    c = chunk_t.c
    with store.engine.connect() as conn:
        size = conn.execute(select(func.sum(func.length(c.xs) + func.length(c.ys) + func.length(c.walls)))
                            .where(c.trace_id == trace_id)).scalar_one()
        tags = [r.ys[0] for r in conn.execute(select(c.ys).where(c.trace_id == trace_id).order_by(c.seq))]
    return int(size), tags


def reads(store: SqlStore, trace) -> list[tuple[np.ndarray, np.ndarray]]:
    """The reads a chart makes: the whole line at a budget, every point, zoomed ranges, stride."""
    out = []
    for budget, x0, x1, method in [(2000, None, None, "minmax"), (200_000, None, None, "minmax"),
                                   (500, 4100.0, 4990.0, "minmax"), (100, 3000.0, None, "minmax"),
                                   (300, None, None, "stride")]:
        s = store.read_series(trace, budget, x0, x1, method=method)
        out.append((s.x, s.y))
    x, y, w = (np.concatenate(parts) for parts in zip(*store.export_series(trace), strict=True))
    out.append((x, np.concatenate([y, w])))
    return out


def test_a_short_runs_tail_is_compact_and_it_costs_what_a_long_run_does(new_store) -> None:
    store = new_store("short")
    trace = log_run(store, noisy_curve(POINTS))
    size, tags = payload_bytes(store, trace.id)
    assert codec.RAW_F64 not in tags  # the 904-point tail included
    assert size / POINTS <= 5.0, f"{size / POINTS:.2f} B/point"
    long = log_run(store, noisy_curve(20 * chunks.CHUNK_POINTS), per_commit=4096, env="long")
    long_size, _ = payload_bytes(store, long.id)
    assert size / POINTS <= 1.15 * long_size / long.total


def test_reads_answer_the_same_as_with_raw_tails_and_old_raw_rows_still_merge(new_store, monkeypatch) -> None:
    y = noisy_curve(POINTS, seed=3)
    y[1234] = np.nan  # a gap and a spike the budgeted read must keep
    y[4500] = 40.0
    compact = new_store("compact")
    want = reads(compact, log_run(compact, y))

    # The same run written with raw tails, as main wrote them (all of it), then half raw and the rest compact:
    # a database from before this change whose open tails get appended to and merged.
    with monkeypatch.context() as m:
        m.setattr(chunks.codec, "encode", raw_encoding)
        raw = new_store("raw")
        got_raw = reads(raw, log_run(raw, y))
    mixed = new_store("mixed")
    with monkeypatch.context() as m:
        m.setattr(chunks.codec, "encode", raw_encoding)
        trace = log_run(mixed, y[:4500])
    with mixed.transaction() as tx:
        tx.append_points(trace, np.arange(4500, POINTS, dtype=float), y[4500:], 1.7e9 + np.arange(4500, POINTS) * 0.01)
    got_mixed = reads(mixed, mixed.list_traces(mixed.get_pane("run", "loss"))[0])

    for got in (got_raw, got_mixed):
        for (wx, wy), (gx, gy) in zip(want, got, strict=True):
            assert np.array_equal(wx.view("<i8"), gx.view("<i8")) and np.array_equal(wy.view("<i8"), gy.view("<i8"))
