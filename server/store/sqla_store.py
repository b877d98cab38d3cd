"""SQLAlchemy implementation of the store, for SQLite (default) and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.engine import Connection

from . import codec, digests, downsample, overview, short_reads, sqla_runs
from .base import Store
from .chunk_cache import ChunkCache
from .chunk_source import ChunkSource, meta_fingerprints, table_fingerprints
from .dialect import IN_LIST_MAX, create_engine_for
from .downsample import ChunkMeta, Loader
from .models import blob_t, chunk_t, client_t, env_t, epoch_t, pane_t, step_t, trace_t
from .records import EnvSummary, PaneRecord, RunRecord, RunRow, Series, SeriesRow, StepRow, TraceRecord
from .sqla_artifacts import SqlArtifacts
from .sqla_blob_refs import SqlBlobRefs
from .sqla_charts import SqlCharts
from .sqla_console import SqlConsole
from .sqla_notify import SqlNotify
from .sqla_settings import SqlSettings
from .sqla_space import SqlSpace
from .sqla_sweeps import RelaxedConnection, SqlSweeps
from .sqla_tokens import SqlShareTokens
from .sqla_tx import SqlTx, WriterCache, pane_from_row

MAX_BUDGET = 200_000


class SqlStore(SqlArtifacts, SqlBlobRefs, SqlCharts, SqlConsole, SqlNotify, SqlShareTokens, SqlSettings, SqlSpace,
               SqlSweeps, Store):
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_engine_for(url)
        self._writer_conn: Connection | None = None
        self._writer_lock = threading.Lock()  # documents (and enforces) the single-writer rule
        self._cache = WriterCache()
        self.chunk_cache = ChunkCache()  # decoded full chunks, for reads: a chart's reread decodes none again
        # PostgreSQL may have several servers writing: see _claim_epoch. SQLite has one (a lock file says so).
        self._shared = self.engine.dialect.name == "postgresql"
        self._epoch = -1  # writer_epoch.n after this process's last commit (-1: unknown)
        self._relaxed = RelaxedConnection(self.engine)  # sweeps' heartbeats (sqla_sweeps)

    # -- writes -----------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[SqlTx]:
        with self._writer_lock:
            if self._writer_conn is None:
                self._writer_conn = self.engine.connect()
            conn = self._writer_conn
            trans = conn.begin()
            try:
                if self._shared:
                    self._claim_epoch(conn)
                tx = SqlTx(conn, self._cache)
                yield tx
                tx.flush()
                trans.commit()
                # The cache's fingerprints tell most rewritten chunks apart; a rewind that logs the same extremes
                # again would not be, so what this process rewrote goes from it once the rewrite is visible.
                self.chunk_cache.forget(tx.rewritten_traces())
            except BaseException:
                trans.rollback()
                self._cache.clear()  # cached rows may describe what was just rolled back
                self._epoch = -1
                raise

    def _claim_epoch(self, conn: Connection) -> None:
        """Lock the writer_epoch row for this transaction and drop the writer cache if another server wrote.

        The cache (trace tails and chunk numbering, pane and trace ids) is only true while this process is the
        only writer. The row lock makes the writers of every server commit one at a time, and the counter tells
        whether another one committed since this process's last transaction.
        """
        n = conn.execute(update(epoch_t).where(epoch_t.c.id == 1).values(n=epoch_t.c.n + 1)
                         .returning(epoch_t.c.n)).scalar_one()
        if n != self._epoch + 1:
            self._cache.clear()
        self._epoch = n

    # -- reads ------------------------------------------------------------------------------------
    def _summaries(self, where: ColumnElement[bool] | None = None) -> list[EnvSummary]:
        panes = (select(func.count()).select_from(pane_t).where(pane_t.c.env_id == env_t.c.id)
                 .scalar_subquery())
        points = (select(func.coalesce(func.sum(trace_t.c.npoints), 0))
                  .select_from(trace_t.join(pane_t, trace_t.c.pane_id == pane_t.c.id))
                  .where(pane_t.c.env_id == env_t.c.id).scalar_subquery())
        q = select(env_t.c.name, env_t.c.created, env_t.c.updated, env_t.c.forked_from,
                   panes.label("panes"), points.label("points")).order_by(env_t.c.updated.desc())
        if where is not None:
            q = q.where(where)
        with self.engine.connect() as conn:
            return [EnvSummary(name=r.name, panes=int(r.panes), points=int(r.points), created=r.created,
                               updated=r.updated, forked_from=r.forked_from) for r in conn.execute(q)]

    def list_envs(self) -> list[EnvSummary]:
        return self._summaries()

    def get_env(self, name: str) -> EnvSummary | None:
        found = self._summaries(env_t.c.name == name)
        return found[0] if found else None

    def get_env_meta(self, name: str) -> dict | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(env_t.c.meta).where(env_t.c.name == name)).first()
        return None if row is None else dict(row.meta or {})

    def list_panes(self, env: str) -> list[PaneRecord]:
        q = (select(pane_t).join(env_t, pane_t.c.env_id == env_t.c.id).where(env_t.c.name == env)
             .order_by(pane_t.c.position))
        with self.engine.connect() as conn:
            return [pane_from_row(r, env) for r in conn.execute(q)]

    def get_pane(self, env: str, win: str) -> PaneRecord | None:
        q = (select(pane_t).join(env_t, pane_t.c.env_id == env_t.c.id)
             .where(env_t.c.name == env, pane_t.c.win == win))
        with self.engine.connect() as conn:
            row = conn.execute(q).first()
        return pane_from_row(row, env) if row else None

    def get_run(self, env: str) -> RunRecord | None:
        with self.engine.connect() as conn:
            return sqla_runs.get_run(conn, env)

    def list_runs(self, envs: list[str] | None = None) -> list[RunRow]:
        with self.engine.connect() as conn:
            if envs is None or len(envs) > IN_LIST_MAX:  # (IN lists stay under SQLite's parameter limit)
                rows = sqla_runs.list_runs(conn, None)
                return rows if envs is None else [r for r in rows if r.env in set(envs)]
            return sqla_runs.list_runs(conn, envs)

    def list_series(self, envs: list[str] | None = None) -> list[SeriesRow]:
        with self.engine.connect() as conn:
            if envs is None or len(envs) > IN_LIST_MAX:
                rows = sqla_runs.list_series(conn, None)
                wanted = None if envs is None else set(envs)
                return rows if wanted is None else [r for r in rows if r.env in wanted]
            return sqla_runs.list_series(conn, envs)

    def active_run_clients(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        with self.engine.connect() as conn:
            for run in sqla_runs.active_runs(conn):
                for cid in run.clients:
                    out.setdefault(cid, []).append(run.env)
        return out

    def crashed_run_clients(self, client_ids: set[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        with self.engine.connect() as conn:
            for run in sqla_runs.active_runs(conn, ("crashed",)):
                for cid in run.clients:
                    if cid in client_ids:
                        out.setdefault(cid, []).append(run.env)
        return out

    def list_traces(self, pane: PaneRecord) -> list[TraceRecord]:
        q = select(trace_t).where(trace_t.c.pane_id == pane.id).order_by(trace_t.c.idx)
        with self.engine.connect() as conn:
            return [TraceRecord(r.id, r.pane_id, r.idx, r.name, r.style or {}, r.npoints) for r in conn.execute(q)]

    def read_series(self, trace: TraceRecord, budget: int, x0: float | None = None, x1: float | None = None,
                    method: str = "minmax") -> Series:
        budget = max(4, min(int(budget), MAX_BUDGET))
        c = chunk_t.c
        q = select(c.seq, c.n, c.x0, c.x1, c.ymin, c.ymax, c.x_ymin, c.x_ymax).where(c.trace_id == trace.id)
        # Chunks whose x is all NaN have NULL bounds; they can only matter to an unbounded read.
        if x0 is not None:
            q = q.where(c.x1 >= x0)
        if x1 is not None:
            q = q.where(c.x0 <= x1)
        with self.engine.connect() as conn:
            if method == "minmax":
                whole = self._read_overview(conn, trace, budget, x0, x1)
                if whole is not None:
                    return whole
            metas = [downsample.ChunkMeta(*r) for r in conn.execute(q.order_by(c.seq))]
            return self._read_chunks(conn, trace, metas, budget, x0, x1, method, {})

    def _read_overview(self, conn: Connection, trace: TraceRecord, budget: int, x0: float | None = None,
                       x1: float | None = None) -> Series | None:
        """A min/max read of a long trace from its digests and the chunk rows after them (the same answer as
        _read_chunks, without a row per chunk: the chunk query of a zoom, with no index on x, visits them all);
        None when the trace has no digest or the range holds no more points than the budget."""
        found = digests.summaries(conn, trace.id)
        if found is None:
            return None
        table, seqs = overview.in_range(*found, x0, x1)
        source = ChunkSource(conn, trace.id, self.chunk_cache, table_fingerprints(*found))
        if table[:, 0].sum() <= budget:
            return None
        if x0 is not None or x1 is not None:
            source.prefetch([int(s) for s, inside in zip(seqs, overview.wholly_inside(table, x0, x1), strict=True)
                             if not inside])
            if overview.count(table, seqs, source.load, x0, x1) <= budget:
                return None
        x, y = overview.minmax(*found, source.load, budget, source.prefetch, source.candidates, x0, x1)
        return Series(x, y, trace.total, True)

    def read_series_many(self, reads: list[tuple[TraceRecord, float | None, str]], budget: int) -> list[Series]:
        """One connection; short traces (a sweep's or a multi-metric chart's lines) read whole in a few queries and
        one batched decode; the others' chunk summaries in a few queries; whole short lines over the budget
        downsampled together; then every other read as above."""
        budget = max(4, min(int(budget), MAX_BUDGET))
        c = chunk_t.c
        short_ids = list(dict.fromkeys(t.id for t, _, _ in reads if t.total <= short_reads.SHORT_POINTS))
        ids = list(dict.fromkeys(t.id for t, _, _ in reads if t.total > short_reads.SHORT_POINTS))
        metas: dict[int, list[ChunkMeta]] = {}
        caches: dict[int, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        out: list[Series | None] = [None] * len(reads)
        joined: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # trace id -> its whole line, every chunk at hand
        with self.engine.connect() as conn:
            lines = short_reads.read_whole(conn, short_ids)
            for k, (t, x0, _method) in enumerate(reads):
                line = lines.get(t.id)
                if line is None:
                    continue
                if x0 is None and len(line.x) <= budget:  # as _read_chunks: every point, in chunk order
                    out[k] = Series(line.x, line.y, t.total, False)
                elif x0 is None:
                    joined[t.id] = (line.x, line.y)
            long = digests.with_digests(conn, ids)  # whole long lines: from their digests, as read_series
            for k, (t, x0, method) in enumerate(reads):
                if t.id in long and method == "minmax":
                    out[k] = self._read_overview(conn, t, budget, x0)
            ids = list(dict.fromkeys(t.id for (t, _, _), s in zip(reads, out, strict=True)
                                     if s is None and t.id not in lines))
            for i in ids:
                metas[i], caches[i] = [], {}
            for k in range(0, len(ids), IN_LIST_MAX):
                q = (select(c.trace_id, c.seq, c.n, c.x0, c.x1, c.ymin, c.ymax, c.x_ymin, c.x_ymax)
                     .where(c.trace_id.in_(ids[k:k + IN_LIST_MAX])).order_by(c.trace_id, c.seq))
                for r in conn.execute(q):
                    metas[r.trace_id].append(downsample.ChunkMeta(*r[1:]))
            # Whole lines longer than the budget, every chunk at hand: downsampled together in one numpy pass.
            whole = [k for k, (t, x0, method) in enumerate(reads)
                     if out[k] is None and x0 is None and method == "minmax" and t.id in joined
                     and len(joined[t.id][0]) > budget]
            done = downsample.minmax_many([joined[reads[k][0].id] for k in whole], budget) if whole else None
            for k, (x, y) in zip(whole if done is not None else [], done or [], strict=True):
                out[k] = Series(x, y, reads[k][0].total, True)
            for k, (trace, x0, method) in enumerate(reads):
                if out[k] is not None:
                    continue
                if trace.id not in metas:  # a short line read some other way: a zoom, a stride, a NaN x
                    metas[trace.id], caches[trace.id] = lines[trace.id].metas(), lines[trace.id].by_seq()
                ms = metas[trace.id]
                if x0 is not None:  # as read_series's query: chunks ending before x0 are out
                    ms = [m for m in ms if m.x1 is not None and m.x1 >= x0]
                out[k] = self._read_chunks(conn, trace, ms, budget, x0, None, method, caches[trace.id])
            return [s for s in out if s is not None]

    def _read_chunks(self, conn: Connection, trace: TraceRecord, metas: list[ChunkMeta], budget: int,
                     x0: float | None, x1: float | None, method: str,
                     cache: dict[int, tuple[np.ndarray, np.ndarray]]) -> Series:
        """A budgeted read of these chunks of the trace (those meeting [x0, x1]); `cache` holds decoded chunks."""
        source = ChunkSource(conn, trace.id, self.chunk_cache, meta_fingerprints(metas), cache)
        load = source.load
        in_range = sum(m.n for m in metas)
        if in_range > budget and (x0 is not None or x1 is not None):
            source.prefetch_metas(self._edge_chunks(metas, x0, x1))
            in_range = self._count_in_range(metas, load, x0, x1)
        if in_range <= budget:
            source.prefetch_metas(metas)
            x, y = downsample.read_all(metas, load, x0, x1)
            return Series(x, y, trace.total, False)
        if method == "stride":
            source.prefetch_metas(metas)
            x, y = downsample.stride(metas, load, budget, x0, x1)
            return Series(x, y, trace.total, True)
        bounds = [m for m in metas if m.x0 is not None]
        if not bounds:
            return Series(np.empty(0), np.empty(0), trace.total, True)
        lo = x0 if x0 is not None else min(m.x0 for m in bounds if m.x0 is not None)
        hi = x1 if x1 is not None else max(m.x1 for m in bounds if m.x1 is not None)  # set with x0
        x, y = downsample.minmax(bounds, load, budget, lo, hi, prefetch=source.prefetch_metas,
                                 candidates=source.candidates)
        return Series(x, y, trace.total, True)

    @staticmethod
    def _edge_chunks(metas: list[ChunkMeta], x0: float | None, x1: float | None) -> list[ChunkMeta]:
        """The chunks _count_in_range must decode: those not wholly inside [x0, x1]."""
        lo = -np.inf if x0 is None else x0
        hi = np.inf if x1 is None else x1
        # x0 and x1 are NULL together (an all-NaN chunk), so testing both only tells mypy so.
        return [m for m in metas if not (m.x0 is not None and m.x1 is not None and lo <= m.x0 and m.x1 <= hi)]

    @staticmethod
    def _count_in_range(metas: list[ChunkMeta], load: Loader, x0: float | None, x1: float | None) -> int:
        """Exact number of points in [x0, x1]: chunks fully inside count whole, edge chunks are decoded."""
        lo = -np.inf if x0 is None else x0
        hi = np.inf if x1 is None else x1
        count = 0
        for m in metas:
            if m.x0 is not None and m.x1 is not None and lo <= m.x0 and m.x1 <= hi:
                count += m.n
            else:
                x, _ = load(m.seq)
                count += int(np.count_nonzero((x >= lo) & (x <= hi)))
        return count

    def export_series(self, trace: TraceRecord) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        c = chunk_t.c
        last = -1
        with self.engine.connect() as conn:
            while True:  # pages of chunks keep memory flat for huge traces
                rows = conn.execute(select(c.seq, c.xs, c.ys, c.walls).where(c.trace_id == trace.id, c.seq > last)
                                    .order_by(c.seq).limit(64)).all()
                if not rows:
                    return
                for r in rows:
                    yield codec.decode(r.xs), codec.decode(r.ys), codec.decode(r.walls)
                last = rows[-1].seq

    def read_walls(self, trace: TraceRecord, x: np.ndarray) -> np.ndarray:
        out = np.full(len(x), np.nan)
        if len(x) == 0:
            return out
        c = chunk_t.c
        xs_sorted = np.sort(x[np.isfinite(x)])
        with self.engine.connect() as conn:
            metas = conn.execute(select(c.seq, c.x0, c.x1).where(c.trace_id == trace.id).order_by(c.seq)).all()
            # Only chunks holding at least one of the wanted x are decoded (all of them for a short trace).
            need = [m.seq for m in metas if m.x0 is not None
                    and np.searchsorted(xs_sorted, m.x0) < np.searchsorted(xs_sorted, m.x1, side="right")]
            parts_x, parts_w = [], []
            for i in range(0, len(need), IN_LIST_MAX):
                for r in conn.execute(select(c.xs, c.walls).where(c.trace_id == trace.id,
                                                                  c.seq.in_(need[i:i + IN_LIST_MAX]))
                                      .order_by(c.seq)):
                    parts_x.append(codec.decode(r.xs))
                    parts_w.append(codec.decode(r.walls))
        if not parts_x:
            return out
        sx, sw = np.concatenate(parts_x), np.concatenate(parts_w)
        order = np.argsort(sx, kind="stable")  # stable: equal x resolve to the first one stored
        sx, sw = sx[order], sw[order]
        at = np.clip(np.searchsorted(sx, x), 0, len(sx) - 1)
        hit = sx[at] == x
        out[hit] = sw[at[hit]]
        return out

    def step_index(self, pane: PaneRecord) -> tuple[np.ndarray, np.ndarray]:
        st = step_t.c
        with self.engine.connect() as conn:
            rows = conn.execute(select(st.step, st.wall).where(st.pane_id == pane.id).order_by(st.idx)).all()
        if not rows:
            return np.empty(0), np.empty(0)
        # Plain tuples: numpy probing SQLAlchemy Rows as sequences costs ~2 ms per 100 rows (a Compare scrub reads 16).
        arr = np.asarray([tuple(r) for r in rows], dtype=np.float64)
        return arr[:, 0], arr[:, 1]

    def read_steps(self, pane: PaneRecord, indices: list[int]) -> list[StepRow]:
        if not indices:
            return []
        st = step_t.c
        out: list[StepRow] = []
        with self.engine.connect() as conn:
            for i in range(0, len(indices), IN_LIST_MAX):
                q = select(st.idx, st.step, st.wall, st.data, st.blob).where(
                    st.pane_id == pane.id, st.idx.in_(indices[i:i + IN_LIST_MAX]))
                out.extend(StepRow(idx=r.idx, step=r.step, wall=r.wall, data=r.data, blob=r.blob)
                           for r in conn.execute(q))
        return sorted(out, key=lambda r: r.idx)

    def get_blob(self, sha256: str) -> tuple[str, bytes] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(blob_t.c.mime, blob_t.c.data).where(blob_t.c.sha256 == sha256)).first()
        return (row.mime, bytes(row.data)) if row else None

    def client_last_seq(self, client_id: str) -> int:
        with self.engine.connect() as conn:
            got = conn.execute(select(client_t.c.last_seq).where(client_t.c.client_id == client_id)).scalar()
        return int(got or 0)

    def close(self) -> None:
        with self._writer_lock:
            if self._writer_conn is not None:
                self._writer_conn.close()
                self._writer_conn = None
        self._relaxed.close()
        self.engine.dispose()
