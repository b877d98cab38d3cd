"""Reads through the decoded-chunk cache and its block extremes: the same answers as a plain decode-all read, and a
reread that decodes no full chunk again."""

from __future__ import annotations

import numpy as np
from sqlalchemy import event, select

from paneboard.server.store import SqlStore, codec, downsample
from paneboard.server.store.chunk_cache import BLOCK, ChunkCache, candidates, decoded, fingerprint_of
from paneboard.server.store.chunks import CHUNK_POINTS
from paneboard.server.store.digests import DIGEST_CHUNKS
from paneboard.server.store.models import chunk_t

POINTS = DIGEST_CHUNKS * CHUNK_POINTS + 5 * CHUNK_POINTS + 700  # one digest page, chunks after it, a partial tail
# From buckets of ~26,000 steps (chunks summarized) down to ~44 (narrower than a block: every block straddles).
BUDGETS = (12, 400, 2000, 6000)
ZOOMS = ((20_000.0, 90_000.0), (1_000.5, 140_000.0))  # wide zooms: buckets narrower than a chunk


def lines(n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Sorted x; ties; NaN/inf y, a spike and a gap in x; x going back; x jumbled inside chunks with NaN x; steps
    logged twice."""
    rng = np.random.default_rng(44)
    x = np.arange(n, dtype=float)
    noisy = (2.0 / (1.0 + x / 500.0) + 0.05 * rng.normal(size=n)).astype(np.float32).astype(np.float64)
    ties = np.round(noisy * 8) / 8
    gappy = noisy.copy()
    gappy[rng.choice(n, n // 20, replace=False)] = np.nan
    gappy[rng.choice(n, 50, replace=False)] = np.inf
    gappy[rng.choice(n, 50, replace=False)] = -np.inf
    gappy[7000:11_000] = np.nan  # whole blocks and two whole chunks without a finite y
    gappy[n // 3] = 1e6
    gap_x = x.copy()
    gap_x[n // 2:] += 3e5  # a long stretch of empty buckets
    back = x.copy()
    back[n // 2:] -= 50_000
    jumbled = x.copy()
    for lo in range(0, n - 300, 9_000):
        jumbled[lo:lo + 300] = rng.permutation(jumbled[lo:lo + 300])
    jumbled[rng.choice(n, 40, replace=False)] = np.nan
    twice = np.repeat(np.arange((n + 1) // 2, dtype=float), 2)[:n]
    return {"noisy": (x, noisy), "ties": (x, ties), "gappy": (gap_x, gappy), "back": (back, noisy),
            "jumbled": (jumbled, ties), "twice": (twice, noisy)}


def write(store: SqlStore, env: str, x: np.ndarray, y: np.ndarray, n: int = POINTS):
    with store.transaction() as tx:
        trace = tx.add_trace(tx.put_pane(env, "w", "line", "", {}, None), "t", {})
    cut = n - 3_000
    with store.transaction() as tx:
        tx.append_points(trace, x[:cut], y[:cut], np.zeros(cut))
    for lo in range(cut, n, 1000):  # small appends: partial tail rows at the end
        with store.transaction() as tx:
            tx.append_points(trace, x[lo:lo + 1000], y[lo:lo + 1000], np.zeros(len(x[lo:lo + 1000])))
    return store.list_traces(store.get_pane(env, "w"))[0]


def decode_all_read(store: SqlStore, trace, budget: int, x0: float | None = None, x1: float | None = None):
    """The reference: every chunk meeting the range decoded from its row, then downsample.minmax as main has it."""
    c = chunk_t.c
    q = select(c.seq, c.n, c.x0, c.x1, c.ymin, c.ymax, c.x_ymin, c.x_ymax).where(c.trace_id == trace.id)
    if x0 is not None:
        q = q.where(c.x1 >= x0)
    if x1 is not None:
        q = q.where(c.x0 <= x1)
    with store.engine.connect() as conn:
        metas = [downsample.ChunkMeta(*r) for r in conn.execute(q.order_by(c.seq))]
        points = {r.seq: (codec.decode(r.xs), codec.decode(r.ys))
                  for r in conn.execute(select(c.seq, c.xs, c.ys).where(c.trace_id == trace.id))}
    bounds = [m for m in metas if m.x0 is not None]
    lo = x0 if x0 is not None else min(m.x0 for m in bounds if m.x0 is not None)
    hi = x1 if x1 is not None else max(m.x1 for m in bounds if m.x1 is not None)
    return downsample.minmax(bounds, points.__getitem__, budget, lo, hi)


def assert_same(series, want) -> None:
    assert series.downsampled
    np.testing.assert_array_equal(series.x, want[0])
    np.testing.assert_array_equal(series.y, want[1])


def test_cold_and_warm_reads_equal_a_decode_all_read_at_bucket_widths_below_and_above_a_chunk(store):
    for env, (x, y) in lines(POINTS).items():
        trace = write(store, env, x, y)
        for budget in BUDGETS:
            want = decode_all_read(store, trace, budget)
            store.chunk_cache = ChunkCache()  # cold: every chunk decoded by this read
            assert_same(store.read_series(trace, budget), want)
            assert len(store.chunk_cache) > 0, env
            assert_same(store.read_series(trace, budget), want)  # warm: block extremes from the cache
        for x0, x1 in ZOOMS:
            want = decode_all_read(store, trace, 2000, x0, x1)
            assert_same(store.read_series(trace, 2000, x0, x1), want)
        many = store.read_series_many([(trace, None, "minmax"), (trace, 30_000.0, "minmax")], 2000)
        assert_same(many[0], decode_all_read(store, trace, 2000))
        assert_same(many[1], decode_all_read(store, trace, 2000, 30_000.0))


def test_a_reread_decodes_only_the_partial_tail(store, monkeypatch):
    x, y = lines(POINTS)["noisy"]
    trace = write(store, "e", x, y)
    with store.engine.connect() as conn:
        partial = len(conn.execute(select(chunk_t.c.seq).where(chunk_t.c.trace_id == trace.id,
                                                                chunk_t.c.n < CHUNK_POINTS)).all())
    calls = []
    real = codec.decode

    def counting(data: bytes) -> np.ndarray:
        calls.append(len(data))
        return real(data)

    monkeypatch.setattr(codec, "decode", counting)
    for x0, x1 in ((None, None), ZOOMS[0]):
        store.chunk_cache = ChunkCache()
        first = store.read_series(trace, 2000, x0, x1)
        assert len(calls) >= 2 * 30  # buckets narrower than a chunk: the (30 or more) chunks were decoded
        calls.clear()
        again = store.read_series(trace, 2000, x0, x1)
        assert len(calls) <= 2 * partial, (x0, len(calls))  # xs and ys of the partial rows only
        calls.clear()
        np.testing.assert_array_equal(again.x, first.x)
        np.testing.assert_array_equal(again.y, first.y)


def test_zoomed_reads_of_long_lines_take_the_digests_and_give_the_chunk_query_answers(store):
    for env, (x, y) in lines(POINTS).items():
        trace = write(store, env, x, y)
        for x0, x1 in (*ZOOMS, (None, 60_000.0), (60_000.0, None), (-5.0, 3_000.0), (1_000.0, 1_500.0), (2e6, 3e6)):
            for budget in (40, 2000):
                s = store.read_series(trace, budget, x0, x1)
                if s.downsampled:
                    assert_same(s, decode_all_read(store, trace, budget, x0, x1))
                else:  # no more points in range than the budget: every one of them, from the chunk rows
                    lo, hi = -np.inf if x0 is None else x0, np.inf if x1 is None else x1
                    assert len(s.x) == np.count_nonzero((x >= lo) & (x <= hi)) <= budget


def test_a_wide_zoom_of_a_long_line_steps_through_no_sealed_chunk_row(store):
    x, y = lines(POINTS)["noisy"]
    trace = write(store, "e", x, y)
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        s = store.read_series(trace, 400, 10_000.0, 120_000.0)
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert s.downsampled
    # Main selected every chunk row of the trace (no index on x) to find those meeting the range.
    chunk_reads = [q for q in statements if "FROM chunk " in q + " "]
    assert chunk_reads and all("chunk.seq >=" in q or "chunk.seq =" in q or "chunk.seq IN" in q
                               for q in chunk_reads), chunk_reads


def test_rewritten_chunks_are_read_again_not_served_from_the_cache(store):
    x, y = lines(POINTS)["noisy"]
    trace = write(store, "e", x, y)
    before = store.read_series(trace, 2000)
    with store.transaction() as tx:  # cut the line back and log other values at the same steps
        tx.rewind_env("e", 20_000.0, keep=False)
    trace = store.list_traces(store.get_pane("e", "w"))[0]
    with store.transaction() as tx:
        tx.append_points(trace, x[20_001:], y[20_001:] + 0.5, np.zeros(len(x) - 20_001))
    trace = store.list_traces(store.get_pane("e", "w"))[0]
    after = store.read_series(trace, 2000)
    assert_same(after, decode_all_read(store, trace, 2000))
    assert not np.array_equal(after.y, before.y)


def test_a_rewrite_with_the_same_extremes_is_read_again_not_served_from_the_cache(store):
    # Every chunk's summary (first/last step, min and max with their steps) is the same before and after: only
    # the points between differ, so the fingerprint cannot tell; the writer's commit must drop the copies.
    n = 16 * CHUNK_POINTS
    x = np.arange(n, dtype=float)
    y = np.random.default_rng(3).uniform(-1, 1, n)
    y[::CHUNK_POINTS], y[1::CHUNK_POINTS] = -5.0, 5.0
    trace = write(store, "same", x, y)
    before = store.read_series(trace, 2000)
    assert len(store.chunk_cache) > 0
    with store.transaction() as tx:
        tx.rewind_env("same", -1.0, keep=False)
    trace = store.list_traces(store.get_pane("same", "w"))[0]
    y2 = y * 0.5
    y2[::CHUNK_POINTS], y2[1::CHUNK_POINTS] = -5.0, 5.0
    with store.transaction() as tx:
        tx.append_points(trace, x, y2, np.zeros(n))
    trace = store.list_traces(store.get_pane("same", "w"))[0]
    after = store.read_series(trace, 2000)
    assert_same(after, decode_all_read(store, trace, 2000))
    assert not np.array_equal(after.y, before.y)


def test_the_cache_stays_under_its_byte_bound():
    rng = np.random.default_rng(1)
    cache = ChunkCache(max_bytes=5 * 2 * 8 * CHUNK_POINTS)  # room for about four chunks
    for seq in range(20):
        x = np.arange(seq * CHUNK_POINTS, (seq + 1) * CHUNK_POINTS, dtype=float)
        cache.put(1, seq, decoded(fingerprint_of([seq]), x, rng.normal(size=CHUNK_POINTS)))
        assert cache.nbytes <= cache.max_bytes
    assert 0 < len(cache) < 5
    assert cache.get(1, 19, fingerprint_of([19])) is not None  # the newest kept, the oldest evicted
    assert cache.get(1, 0, fingerprint_of([0])) is None
    assert cache.get(1, 19, fingerprint_of([18])) is None  # another fingerprint: a rewritten chunk


def test_block_candidates_hold_every_buckets_first_minimum_and_last_maximum():
    rng = np.random.default_rng(7)
    x = np.cumsum(rng.integers(0, 3, CHUNK_POINTS)).astype(float)  # repeated and skipped steps
    y = np.round(rng.normal(size=CHUNK_POINTS), 1)  # many ties
    y[rng.choice(CHUNK_POINTS, 100, replace=False)] = np.nan
    chunk = decoded(fingerprint_of([1]), x, y)
    for width in (3.0, BLOCK * 1.5, 700.0, 5000.0):
        nb = int(np.ceil((x[-1] - x[0] + 1) / width))
        cx, cy = candidates([chunk], float(x[0]), float(x[-1]), width, nb)[0]
        assert len(cx) <= len(x) and np.all(np.isin(cx, x))
        ok = np.isfinite(y)
        got = downsample.select_extremes(cx[np.isfinite(cy)], cy[np.isfinite(cy)], float(x[0]), width, nb, None, None)
        want = downsample.select_extremes(x[ok], y[ok], float(x[0]), width, nb, None, None)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
