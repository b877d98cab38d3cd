"""Full-range reads of long traces from chunk digests: the same answers as reading every chunk row, without it."""

from __future__ import annotations

import numpy as np
import pytest
from alembic import command
from sqlalchemy import event, func, select

from paneboard.server.store import SqlStore, downsample
from paneboard.server.store.chunks import CHUNK_POINTS
from paneboard.server.store.digests import DIGEST_CHUNKS
from paneboard.server.store.models import chunk_t, digest_t
from paneboard.server.store.schema import alembic_config, ensure_schema

PAGES = 2  # full digest pages in the long traces below
POINTS = PAGES * DIGEST_CHUNKS * CHUNK_POINTS + 3 * CHUNK_POINTS + 700  # and three full chunks and a tail after
BUDGETS = (12, 40, 400, 2000)  # buckets wider than a chunk (summaries used) down to narrower (chunks decoded)


@pytest.fixture
def url(db_url):
    ensure_schema(db_url, db_url)
    return db_url


@pytest.fixture
def store(url):
    s = SqlStore(url)
    yield s
    s.close()


def noisy(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (2.0 / (1.0 + np.arange(n) / 500.0) + 0.05 * rng.normal(size=n)).astype(np.float32).astype(np.float64)


def series_kinds(n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Lines that exercise each rule: sorted x, ties (first min, last max), NaN gaps and a spike, x going back."""
    x = np.arange(n, dtype=float)
    ties = np.round(noisy(n, 1) * 4) / 4  # few distinct values: many chunks share their min and max
    gappy = noisy(n, 2)
    gappy[5000:9000] = np.nan  # two whole chunks without a finite y
    gappy[::997] = np.inf
    gappy[n // 3] = 1e6  # a spike
    back = x.copy()
    back[n // 2:] -= 50_000  # a restarted run logged into the same line: x goes back (the general path)
    return {"noisy": (x, noisy(n)), "ties": (x, ties), "gappy": (x, gappy), "back": (back, noisy(n, 3))}


def write(store: SqlStore, env: str, x: np.ndarray, y: np.ndarray):
    """One bulk append, then small ones: full chunks written both ways, a partial tail at the end."""
    with store.transaction() as tx:
        trace = tx.add_trace(tx.put_pane(env, "w", "line", "", {}, None), "t", {})
    cut = len(x) - 9_000
    with store.transaction() as tx:
        tx.append_points(trace, x[:cut], y[:cut], np.zeros(cut))
    for lo in range(cut, len(x), 1000):
        with store.transaction() as tx:
            tx.append_points(trace, x[lo:lo + 1000], y[lo:lo + 1000], np.zeros(len(x[lo:lo + 1000])))
    return store.list_traces(store.get_pane(env, "w"))[0]


def read_every_chunk_row(store: SqlStore, trace, budget: int) -> tuple[np.ndarray, np.ndarray]:
    """The read as main makes it: every chunk row's summary columns, then downsample.minmax."""
    c = chunk_t.c
    with store.engine.connect() as conn:
        q = select(c.seq, c.n, c.x0, c.x1, c.ymin, c.ymax, c.x_ymin, c.x_ymax).where(c.trace_id == trace.id)
        metas = [downsample.ChunkMeta(*r) for r in conn.execute(q.order_by(c.seq))]
        s = store._read_chunks(conn, trace, metas, budget, None, None, "minmax", {})
    return s.x, s.y


def digest_pages(store: SqlStore, trace_id: int) -> list[int]:
    with store.engine.connect() as conn:
        return list(conn.execute(select(digest_t.c.page).where(digest_t.c.trace_id == trace_id)
                                 .order_by(digest_t.c.page)).scalars())


def xy(series) -> tuple[np.ndarray, np.ndarray]:
    return series.x, series.y


def assert_same(got, want) -> None:
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_full_range_reads_equal_the_chunk_row_reads_for_every_kind_of_line(store):
    for env, (x, y) in series_kinds(POINTS).items():
        trace = write(store, env, x, y)
        assert digest_pages(store, trace.id) == list(range(PAGES))
        for budget in BUDGETS:
            s = store.read_series(trace, budget)
            assert s.downsampled
            assert_same((s.x, s.y), read_every_chunk_row(store, trace, budget))
        # Zoomed reads and scatter reads keep their own path, and their answers.
        zoom = store.read_series(trace, 400, 1000.0, 90_000.0)
        assert zoom.x.min() >= 1000.0 and zoom.x.max() <= 90_000.0


def test_a_full_range_read_steps_through_no_sealed_chunk_row(store):
    x, y = series_kinds(POINTS)["noisy"]
    trace = write(store, "e", x, y)
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        s = store.read_series(trace, 2000)
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert len(s.x) <= 2000
    # Main read every chunk's summary row (one SQLite page each); now only rows bounded by seq: the chunks
    # after the digests, and those the read decodes.
    chunk_reads = [q for q in statements if "FROM chunk " in q + " "]
    assert chunk_reads and all("chunk.seq >=" in q or "chunk.seq =" in q or "chunk.seq IN" in q
                               for q in chunk_reads), chunk_reads


def test_fork_copies_digests_and_rewind_rebuilds_them(store):
    x, y = series_kinds(POINTS)["gappy"]
    trace = write(store, "src", x, y)
    with store.transaction() as tx:
        tx.fork_env("src", "dst")
    forked = store.list_traces(store.get_pane("dst", "w"))[0]
    assert digest_pages(store, forked.id) == list(range(PAGES))
    assert_same(xy(store.read_series(forked, 40)), read_every_chunk_row(store, trace, 40))
    # Cut the fork back to one and a half pages: its digests follow its chunks, the source keeps its own.
    keep_to = 1.5 * DIGEST_CHUNKS * CHUNK_POINTS
    with store.transaction() as tx:
        tx.rewind_env("dst", keep_to, keep=False)
    forked = store.list_traces(store.get_pane("dst", "w"))[0]
    assert digest_pages(store, forked.id) == [0]
    assert digest_pages(store, trace.id) == list(range(PAGES))
    for budget in BUDGETS:
        s = store.read_series(forked, budget)
        assert s.x.max() <= keep_to
        assert_same((s.x, s.y), read_every_chunk_row(store, forked, budget))
    # Appending after the rewind seals the next page again.
    more = np.arange(keep_to + 1, keep_to + 1 + DIGEST_CHUNKS * CHUNK_POINTS)
    with store.transaction() as tx:
        tx.append_points(forked, more, noisy(len(more), 5), np.zeros(len(more)))
    forked = store.list_traces(store.get_pane("dst", "w"))[0]
    assert digest_pages(store, forked.id) == [0, 1]
    assert_same(xy(store.read_series(forked, 40)), read_every_chunk_row(store, forked, 40))


def test_deleting_a_trace_deletes_its_digests(store):
    x, y = series_kinds(POINTS)["noisy"]
    trace = write(store, "e", x, y)
    with store.transaction() as tx:
        tx.delete_env("e")
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(digest_t)).scalar_one() == 0
    assert digest_pages(store, trace.id) == []


def test_migration_backfills_the_digests_of_stored_traces(url):
    store = SqlStore(url)
    try:
        traces = {env: write(store, env, *xy) for env, xy in series_kinds(POINTS).items() if env in ("ties", "back")}
        with store.engine.connect() as conn:
            written = conn.execute(select(digest_t).order_by(digest_t.c.trace_id, digest_t.c.page)).all()
    finally:
        store.close()
    assert len(written) == 2 * PAGES
    cfg = alembic_config(url)
    command.downgrade(cfg, "0009_sweeps")  # a database from before the digests, holding these traces
    command.upgrade(cfg, "head")
    store = SqlStore(url)
    try:
        with store.engine.connect() as conn:
            backfilled = conn.execute(select(digest_t).order_by(digest_t.c.trace_id, digest_t.c.page)).all()
        assert [tuple(r) for r in backfilled] == [tuple(r) for r in written]
        for trace in traces.values():
            s = store.read_series(trace, 40)
            assert_same((s.x, s.y), read_every_chunk_row(store, trace, 40))
    finally:
        store.close()


def test_many_reads_take_long_lines_from_digests_and_the_rest_as_before(store):
    x, y = series_kinds(POINTS)["ties"]
    long = write(store, "long", x, y)
    with store.transaction() as tx:
        short = tx.add_trace(tx.put_pane("short", "w", "line", "", {}, None), "t", {})
        tx.append_points(short, np.arange(3000.0), noisy(3000, 7), np.zeros(3000))
    short = store.list_traces(store.get_pane("short", "w"))[0]
    reads = [(long, None, "minmax"), (short, None, "minmax"), (long, 250_000.0, "minmax"), (long, None, "stride")]
    got = store.read_series_many(reads, 40)
    assert_same(xy(got[0]), read_every_chunk_row(store, long, 40))
    for (trace, x0, method), series in zip(reads[1:], got[1:], strict=True):
        assert_same(xy(series), xy(store.read_series(trace, 40, x0, method=method)))
    assert got[2].x.min() >= 250_000.0 and len(got[3].x) <= 40
