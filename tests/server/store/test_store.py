"""Store layer: schema/migrations, chunked appends, budgeted reads that keep spikes, rollbacks."""

from __future__ import annotations

import numpy as np
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import func, select, text

from paneboard.server.store import SqlStore, chunks
from paneboard.server.store.chunks import CHUNK_POINTS, MAX_TAIL_PIECES
from paneboard.server.store.models import Base, chunk_t
from paneboard.server.store.schema import (
    SchemaError,
    alembic_config,
    current_revision,
    ensure_schema,
    head_revision,
)


@pytest.fixture
def url(db_url):
    ensure_schema(db_url, db_url)
    return db_url


@pytest.fixture
def store(url):
    s = SqlStore(url)
    yield s
    s.close()


def make_line(store, env="e", win="w", name="t"):
    with store.transaction() as tx:
        pane = tx.put_pane(env, win, "line", "", {}, None)
        trace = tx.add_trace(pane, name, {})
    return trace


def append(store, trace, x, y):
    x = np.asarray(x, dtype=float)
    with store.transaction() as tx:
        tx.append_points(trace, x, np.asarray(y, dtype=float), np.zeros(len(x)))


def all_points(store, trace):
    blocks = list(store.export_series(trace))
    if not blocks:
        return np.empty(0), np.empty(0)
    return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


def test_fresh_database_is_at_the_single_head_and_matches_the_models(url):
    assert len(ScriptDirectory.from_config(alembic_config(url)).get_heads()) == 1
    assert current_revision(url) == head_revision()
    s = SqlStore(url)
    with s.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    s.close()
    assert diff == []


def test_database_behind_head_is_refused_with_upgrade_instructions(url, tmp_path):
    s = SqlStore(url)
    with s.engine.begin() as conn:
        conn.execute(text("DELETE FROM alembic_version"))
    s.close()
    with pytest.raises(SchemaError, match="dash-server db upgrade"):
        ensure_schema(url, "the.db")


def test_single_point_appends_keep_every_point_in_bounded_chunk_rows(store, monkeypatch):
    # Chunks of 256 points: the same boundaries and tail merges as at 2,048, in an eighth of the transactions.
    monkeypatch.setattr(chunks, "CHUNK_POINTS", 256)
    chunk_points = chunks.CHUNK_POINTS
    trace = make_line(store)
    n = 2 * chunk_points + 123  # two chunk boundaries crossed point by point
    for i in range(n):
        append(store, trace, [i], [i * 0.5])
    x, y = all_points(store, trace)
    assert np.array_equal(x, np.arange(n))
    assert np.array_equal(y, np.arange(n) * 0.5)
    with store.engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(chunk_t).where(chunk_t.c.trace_id == trace.id)).scalar()
    # Appends never leave more than MAX_TAIL_PIECES small rows behind the full chunks.
    assert rows <= n // chunk_points + MAX_TAIL_PIECES
    assert store.list_traces(store.get_pane("e", "w"))[0].total == n


def test_many_appends_in_one_transaction_are_buffered_into_one_write(store):
    trace = make_line(store)
    with store.transaction() as tx:
        for i in range(5000):
            tx.append_points(trace, np.array([float(i)]), np.array([1.0]), np.array([0.0]))
    x, _ = all_points(store, trace)
    assert len(x) == 5000 and x[-1] == 4999


def test_budgeted_read_of_two_million_points_keeps_the_spike_and_the_ends(store):
    trace = make_line(store)
    n = 2_000_000
    x = np.arange(n, dtype=float)
    y = np.sin(x / 5000.0)
    y[1_234_567] = 1000.0   # one spike among 2M points
    y[345_678] = -1000.0
    for start in range(0, n, 250_000):
        append(store, trace, x[start:start + 250_000], y[start:start + 250_000])
    trace = store.list_traces(store.get_pane("e", "w"))[0]
    s = store.read_series(trace, 2000)
    assert s.downsampled and s.total == n
    assert len(s.x) <= 2002
    assert 1000.0 in s.y and -1000.0 in s.y
    assert s.x[0] == 0 and s.x[-1] == n - 1
    assert np.all(np.diff(s.x) >= 0)
    spike_at = s.x[np.argmax(s.y)]
    assert spike_at == 1_234_567


def test_zoomed_read_returns_full_detail_inside_the_range(store):
    trace = make_line(store)
    x = np.arange(100_000, dtype=float)
    append(store, trace, x, x * 2)
    s = store.read_series(trace, 2000, x0=500, x1=1500)
    assert not s.downsampled
    assert np.array_equal(s.x, np.arange(500, 1501))
    assert np.array_equal(s.y, np.arange(500, 1501) * 2)


def test_nan_values_are_kept_as_gaps(store):
    trace = make_line(store)
    append(store, trace, [0, 1, 2], [1.0, float("nan"), 3.0])
    s = store.read_series(trace, 100)
    assert s.y[0] == 1 and np.isnan(s.y[1]) and s.y[2] == 3


def test_replace_and_delete_trace_keep_indices_dense(store):
    with store.transaction() as tx:
        pane = tx.put_pane("e", "w", "line", "", {}, None)
        traces = [tx.add_trace(pane, name, {}) for name in "abc"]
        for t in traces:
            tx.append_points(t, np.arange(10.0), np.ones(10), np.zeros(10))
    with store.transaction() as tx:
        tx.replace_points(traces[2], np.array([5.0]), np.array([7.0]), np.zeros(1))
        tx.delete_trace(traces[0])
    pane = store.get_pane("e", "w")
    left = store.list_traces(pane)
    assert [(t.name, t.idx, t.total) for t in left] == [("b", 0, 10), ("c", 1, 1)]
    assert all_points(store, left[1])[1].tolist() == [7.0]


def test_rollback_discards_writes_and_writer_cache(store):
    trace = make_line(store)
    append(store, trace, [0, 1], [0, 1])
    with pytest.raises(RuntimeError):
        with store.transaction() as tx:
            tx.append_points(trace, np.array([2.0]), np.array([2.0]), np.zeros(1))
            tx.put_pane("e", "other", "text", "", {}, {"html": "x"})
            raise RuntimeError("boom")
    assert store.get_pane("e", "other") is None
    append(store, trace, [3], [3])
    assert all_points(store, trace)[0].tolist() == [0, 1, 3]


def test_overwriting_a_pane_drops_its_old_traces(store):
    trace = make_line(store)
    append(store, trace, [0, 1], [0, 1])
    with store.transaction() as tx:
        pane = tx.put_pane("e", "w", "line", "new", {}, None)
        t2 = tx.add_trace(pane, "fresh", {})
        tx.append_points(t2, np.array([9.0]), np.array([9.0]), np.zeros(1))
    pane = store.get_pane("e", "w")
    assert pane.title == "new" and pane.version == 2
    assert [(t.name, t.total) for t in store.list_traces(pane)] == [("fresh", 1)]
    assert store.get_env("e").points == 1


def test_blobs_are_content_addressed(store):
    with store.transaction() as tx:
        a = tx.put_blob(b"hello", "image/png")
        b = tx.put_blob(b"hello", "image/png")
    assert a == b
    assert store.get_blob(a) == ("image/png", b"hello")
    assert store.get_blob("0" * 64) is None


def test_step_records_and_wall_lookups_on_both_databases(store):
    with store.transaction() as tx:
        pane = tx.put_pane("e", "h", "histogram", "", {}, {"count": 0})
        blob = tx.put_blob(b"\x89PNG fake", "image/png")
        tx.append_steps(pane, 0, [(float(s), 1000.0 + s, {"v": [s, s * 2]}, blob if s == 3 else None)
                                  for s in range(5)])
    steps, walls = store.step_index(pane)
    assert steps.tolist() == [0, 1, 2, 3, 4] and walls.tolist() == [1000, 1001, 1002, 1003, 1004]
    rows = store.read_steps(pane, [4, 3])
    assert [r.idx for r in rows] == [3, 4] and rows[0].data == {"v": [3, 6]} and rows[0].blob == blob
    with store.transaction() as tx:
        tx.fork_env("e", "f")
        tx.clear_steps(tx.get_pane("e", "h"))
    assert store.step_index(store.get_pane("e", "h"))[0].tolist() == []
    assert store.step_index(store.get_pane("f", "h"))[0].tolist() == [0, 1, 2, 3, 4]
    trace = make_line(store)
    x = np.arange(3 * CHUNK_POINTS, dtype=float)
    with store.transaction() as tx:
        tx.append_points(trace, x, np.sin(x), 5000.0 + x / 10)
    got = store.read_walls(trace, np.array([0.0, 2049.0, 6143.0, 99999.0]))
    assert got[:3].tolist() == [5000.0, 5204.9, 5614.3] and np.isnan(got[3])


def test_sweep_deletes_only_blobs_nothing_refers_to(store):
    with store.transaction() as tx:
        shown = tx.put_blob(b"shown", "image/png")
        in_history = tx.put_blob(b"history", "image/png")
        in_step = tx.put_blob(b"step", "audio/wav")
        orphan = tx.put_blob(b"orphan", "image/png")
        tx.put_pane("e", "img", "image", "", {}, {"blob": shown, "history": [{"blob": in_history}]})
        media = tx.put_pane("e", "m", "media", "", {}, None)
        tx.append_steps(media, 0, [(0.0, 0.0, {"type": "audio"}, in_step)])
    with store.transaction() as tx:
        assert tx.sweep_blobs() == 1
    assert store.get_blob(orphan) is None
    assert all(store.get_blob(sha) is not None for sha in (shown, in_history, in_step))
