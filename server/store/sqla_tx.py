"""The write side of the SQLAlchemy store: one transaction on the writer thread's connection."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Text, cast, delete, func, insert, select, update
from sqlalchemy.engine import Connection

from .. import jsonio
from . import hot_statements as hot
from . import sqla_console, sqla_fork, sqla_runs
from .base import CONSOLE_BASE, RUN_COLOR, StoreError, StoreTx
from .chunks import TailState
from .dialect import insert_ignore, inserted_id
from .models import blob_t, client_t, env_t, pane_t, step_t, trace_t
from .records import PaneRecord, RunRecord, TraceRecord
from .sqla_artifacts import SqlArtifactsTx
from .sqla_points import PointBuffer
from .summary import Summary

_SHA_IN_JSON = re.compile(rb'"([0-9a-f]{64})"')  # a blob reference inside pane content


def _json_bytes(obj: Any) -> bytes:
    try:
        return jsonio.dumps(obj)
    except TypeError:  # an integer beyond 64 bits in stored content: the standard encoder takes it
        return json.dumps(obj).encode()


@dataclass
class WriterCache:
    """Writer-thread state that outlives one transaction; dropped whole on rollback."""

    env_ids: dict[str, int] = field(default_factory=dict)
    panes: dict[tuple[str, str], PaneRecord] = field(default_factory=dict)
    traces: dict[int, list[TraceRecord]] = field(default_factory=dict)
    tails: dict[int, TailState] = field(default_factory=dict)
    client_seqs: dict[str, int] = field(default_factory=dict)
    summaries: dict[int, Summary] = field(default_factory=dict)  # trace id -> its series summary

    def clear(self) -> None:
        for d in (self.env_ids, self.panes, self.traces, self.tails, self.client_seqs, self.summaries):
            d.clear()


def pane_from_row(row: Any, env: str) -> PaneRecord:
    return PaneRecord(id=row.id, env=env, win=row.win, kind=row.kind, title=row.title, opts=row.opts or {},
                      content=row.content, position=row.position, version=row.version,
                      created=row.created, updated=row.updated, layout=row.layout)


class SqlTx(SqlArtifactsTx, StoreTx):
    def __init__(self, conn: Connection, cache: WriterCache) -> None:
        self.conn = conn
        self.cache = cache
        self.now = time.time()
        self._points = PointBuffer(conn, cache.tails, cache.summaries)  # written at flush()
        self._versions: dict[int, int] = {}
        self._touched_envs: set[str] = set()

    def rewritten_traces(self) -> set[int]:
        """The traces this transaction deleted or rewrote: the store drops their decoded chunks once it commits."""
        return self._points.rewritten

    # -- clients ----------------------------------------------------------------------------------
    def client_last_seq(self, client_id: str) -> int:
        if client_id not in self.cache.client_seqs:
            got = self.conn.execute(select(client_t.c.last_seq).where(client_t.c.client_id == client_id)).scalar()
            self.cache.client_seqs[client_id] = int(got or 0)
        return self.cache.client_seqs[client_id]

    def set_client_last_seq(self, client_id: str, seq: int) -> None:
        hot.run(self.conn, hot.client_seq_upsert(self.conn), [{"client_id": client_id, "last_seq": seq, "updated": self.now}])
        self.cache.client_seqs[client_id] = seq

    # -- envs -------------------------------------------------------------------------------------
    def _env_id(self, name: str) -> int | None:
        if name not in self.cache.env_ids:
            got = self.conn.execute(select(env_t.c.id).where(env_t.c.name == name)).scalar()
            if got is None:
                return None
            self.cache.env_ids[name] = got
        return self.cache.env_ids[name]

    def ensure_env(self, name: str) -> bool:
        self._touched_envs.add(name)
        if self._env_id(name) is not None:
            return False
        res = self.conn.execute(insert(env_t).values(name=name, created=self.now, updated=self.now, meta={}))
        self.cache.env_ids[name] = inserted_id(res)
        return True

    def delete_env(self, name: str) -> bool:
        env_id = self._env_id(name)
        if env_id is None:
            return False
        for win in self.pane_wins(name):
            self.delete_pane(name, win)
        sqla_runs.delete_run(self.conn, env_id)
        sqla_console.delete_lines(self.conn, env_id)
        self.conn.execute(delete(env_t).where(env_t.c.id == env_id))
        self.cache.env_ids.pop(name, None)
        self._touched_envs.discard(name)
        return True

    def put_console(self, env: str, rank: int, rows: list[tuple[int, float, str, str, bool]]) -> None:
        self.ensure_env(env)
        sqla_console.put_lines(self.conn, self.cache.env_ids[env], rank, rows)

    def console_last_lines(self, env: str) -> dict[int, int]:
        env_id = self._env_id(env)
        return {} if env_id is None else sqla_console.last_lines(self.conn, env_id)

    @property
    def touched_envs(self) -> set[str]:
        return self._touched_envs

    def fork_env(self, source: str, target: str) -> None:
        src_id = self._env_id(source)
        if src_id is None:
            raise StoreError(f"env {source!r} not found")
        if self._env_id(target) is not None:
            raise StoreError(f"env {target!r} already exists")
        # Points appended earlier in this transaction are still buffered: write them so the fork has them.
        self.flush()
        meta = self.conn.execute(select(env_t.c.meta).where(env_t.c.id == src_id)).scalar() or {}
        meta = {k: v for k, v in meta.items() if k != RUN_COLOR}
        last = sqla_console.last_lines(self.conn, src_id)
        if last:
            # The fork's job numbers its lines from 1 again: they go after the copied ones (apply_console).
            meta = {**meta, CONSOLE_BASE: {str(rank): n for rank, n in last.items()}}
        res = self.conn.execute(insert(env_t).values(name=target, created=self.now, updated=self.now,
                                                     forked_from=source, meta=meta))
        dst_id = inserted_id(res)
        self.cache.env_ids[target] = dst_id
        self._touched_envs.add(target)
        sqla_runs.copy_run(self.conn, src_id, dst_id, target)
        sqla_console.copy_lines(self.conn, src_id, dst_id)
        panes, traces = sqla_fork.copy_panes(self.conn, src_id, dst_id)
        for pane_id in panes:
            self.cache.traces.pop(pane_id, None)
        for trace_id in traces:
            self.cache.tails.pop(trace_id, None)
            self.cache.summaries.pop(trace_id, None)

    def rename_env(self, old: str, new: str) -> None:
        env_id = self._env_id(old)
        if env_id is None:
            raise StoreError(f"env {old!r} not found")
        if self._env_id(new) is not None:
            raise StoreError(f"env {new!r} already exists")
        self.flush()  # buffered points are keyed by trace id, but touched env names must not go stale
        self.conn.execute(update(env_t).where(env_t.c.id == env_id).values(name=new, updated=self.now))
        self.conn.execute(update(env_t).where(env_t.c.forked_from == old).values(forked_from=new))
        self.cache.env_ids.pop(old, None)
        self.cache.env_ids[new] = env_id
        for key in [k for k in self.cache.panes if k[0] == old]:
            del self.cache.panes[key]  # records carry the env name
        self._touched_envs.discard(old)
        self._touched_envs.add(new)

    def env_meta(self, name: str) -> dict | None:
        env_id = self._env_id(name)
        if env_id is None:
            return None
        return dict(self.conn.execute(select(env_t.c.meta).where(env_t.c.id == env_id)).scalar() or {})

    def set_env_meta(self, name: str, meta: dict) -> None:
        env_id = self._env_id(name)
        if env_id is None:
            raise StoreError(f"env {name!r} not found")
        self.conn.execute(update(env_t).where(env_t.c.id == env_id).values(meta=meta))
        self._touched_envs.add(name)

    def get_run(self, env: str) -> RunRecord | None:
        return sqla_runs.get_run(self.conn, env)

    def put_run(self, run: RunRecord) -> None:
        env_id = self._env_id(run.env)
        if env_id is None:
            raise StoreError(f"env {run.env!r} not found")
        sqla_runs.put_run(self.conn, env_id, run)
        self._touched_envs.add(run.env)

    def runs_of_client(self, client_id: str) -> list[RunRecord]:
        return [r for r in sqla_runs.active_runs(self.conn) if client_id in r.clients]

    def set_pane_layout(self, pane: PaneRecord, layout: dict | None) -> PaneRecord:
        self.conn.execute(update(pane_t).where(pane_t.c.id == pane.id).values(layout=layout))
        current = self.cache.panes.get((pane.env, pane.win), pane)
        new = dataclasses.replace(current, layout=layout)
        self.cache.panes[(pane.env, pane.win)] = new
        return new

    # -- panes ------------------------------------------------------------------------------------
    def get_pane(self, env: str, win: str) -> PaneRecord | None:
        key = (env, win)
        if key in self.cache.panes:
            return self.cache.panes[key]
        env_id = self._env_id(env)
        if env_id is None:
            return None
        row = self.conn.execute(select(pane_t).where(pane_t.c.env_id == env_id, pane_t.c.win == win)).first()
        if row is None:
            return None
        pane = pane_from_row(row, env)
        self.cache.panes[key] = pane
        return pane

    def put_pane(self, env: str, win: str, kind: str, title: str, opts: dict, content: dict | None) -> PaneRecord:
        self.ensure_env(env)
        env_id = self._env_id(env)
        old = self.get_pane(env, win)
        if old is not None:
            for t in self.traces(old):
                self._points.forget(t.id)
            self.conn.execute(delete(trace_t).where(trace_t.c.pane_id == old.id))
            self.conn.execute(delete(step_t).where(step_t.c.pane_id == old.id))
            self.cache.traces[old.id] = []
            version = self._versions.get(old.id, old.version) + 1
            self.conn.execute(update(pane_t).where(pane_t.c.id == old.id).values(
                kind=kind, title=title, opts=opts, content=content, version=version, updated=self.now))
            self._versions.pop(old.id, None)
            pane = dataclasses.replace(old, kind=kind, title=title, opts=opts, content=content, version=version,
                                       updated=self.now)
        else:
            pos = self.conn.execute(select(func.coalesce(func.max(pane_t.c.position), -1) + 1)
                                    .where(pane_t.c.env_id == env_id)).scalar_one()
            res = self.conn.execute(insert(pane_t).values(
                env_id=env_id, win=win, kind=kind, title=title, opts=opts, content=content, position=pos,
                version=1, created=self.now, updated=self.now))
            pane = PaneRecord(id=inserted_id(res), env=env, win=win, kind=kind, title=title, opts=opts,
                              content=content, position=pos, version=1, created=self.now, updated=self.now)
            self.cache.traces[pane.id] = []
        self.cache.panes[(env, win)] = pane
        return pane

    def update_pane(self, pane: PaneRecord, *, title: str | None = None, opts: dict | None = None,
                    content: dict | None = None) -> PaneRecord:
        changes: dict[str, Any] = {k: v for k, v in (("title", title), ("opts", opts), ("content", content)) if v is not None}
        version = self.touch_pane(pane)
        current = self.cache.panes.get((pane.env, pane.win), pane)
        new = dataclasses.replace(current, version=version, updated=self.now, **changes)
        if changes:
            self.conn.execute(update(pane_t).where(pane_t.c.id == pane.id).values(**changes))
        self.cache.panes[(pane.env, pane.win)] = new
        return new

    def touch_pane(self, pane: PaneRecord) -> int:
        current = self.cache.panes.get((pane.env, pane.win), pane)
        version = self._versions.get(pane.id, current.version) + 1
        self._versions[pane.id] = version
        self.cache.panes[(pane.env, pane.win)] = dataclasses.replace(current, version=version, updated=self.now)
        self._touched_envs.add(pane.env)
        return version

    def delete_pane(self, env: str, win: str) -> bool:
        pane = self.get_pane(env, win)
        if pane is None:
            return False
        for t in self.traces(pane):
            self._points.forget(t.id)
        self.conn.execute(delete(pane_t).where(pane_t.c.id == pane.id))
        self.cache.panes.pop((env, win), None)
        self.cache.traces.pop(pane.id, None)
        self._versions.pop(pane.id, None)
        self._touched_envs.add(env)
        return True

    def pane_wins(self, env: str) -> list[str]:
        env_id = self._env_id(env)
        if env_id is None:
            return []
        return list(self.conn.execute(select(pane_t.c.win).where(pane_t.c.env_id == env_id)
                                      .order_by(pane_t.c.position)).scalars())

    # -- traces -----------------------------------------------------------------------------------
    def traces(self, pane: PaneRecord) -> list[TraceRecord]:
        if pane.id not in self.cache.traces:
            rows = self.conn.execute(select(trace_t).where(trace_t.c.pane_id == pane.id).order_by(trace_t.c.idx))
            self.cache.traces[pane.id] = [TraceRecord(r.id, r.pane_id, r.idx, r.name, r.style or {}, r.npoints)
                                          for r in rows]
        return list(self.cache.traces[pane.id])

    def add_trace(self, pane: PaneRecord, name: str, style: dict) -> TraceRecord:
        existing = self.traces(pane)
        idx = len(existing)
        res = self.conn.execute(insert(trace_t).values(pane_id=pane.id, idx=idx, name=name, style=style, npoints=0))
        rec = TraceRecord(inserted_id(res), pane.id, idx, name, style, 0)
        self.cache.traces[pane.id] = existing + [rec]
        self.cache.tails[rec.id] = TailState(next_seq=0)
        self.cache.summaries[rec.id] = Summary()
        return rec

    def delete_trace(self, trace: TraceRecord) -> None:
        self._points.forget(trace.id)
        self.conn.execute(delete(trace_t).where(trace_t.c.id == trace.id))
        # Keep indices dense (the browser addresses Plotly traces by position); shift in two steps so
        # the unique (pane_id, idx) constraint never sees a transient duplicate.
        later = trace_t.c.pane_id == trace.pane_id
        self.conn.execute(update(trace_t).where(later, trace_t.c.idx > trace.idx).values(idx=-trace_t.c.idx))
        self.conn.execute(update(trace_t).where(later, trace_t.c.idx < 0).values(idx=-trace_t.c.idx - 1))
        remaining = [t for t in self.cache.traces.get(trace.pane_id, []) if t.id != trace.id]
        self.cache.traces[trace.pane_id] = [dataclasses.replace(t, idx=i) for i, t in enumerate(remaining)]

    def rename_trace(self, trace: TraceRecord, name: str) -> None:
        self.conn.execute(update(trace_t).where(trace_t.c.id == trace.id).values(name=name))
        self.cache.traces[trace.pane_id] = [dataclasses.replace(t, name=name) if t.id == trace.id else t
                                            for t in self.cache.traces.get(trace.pane_id, [])]

    def set_trace_style(self, trace: TraceRecord, style: dict) -> None:
        self.conn.execute(update(trace_t).where(trace_t.c.id == trace.id).values(style=style))
        self.cache.traces[trace.pane_id] = [dataclasses.replace(t, style=style) if t.id == trace.id else t
                                            for t in self.cache.traces.get(trace.pane_id, [])]

    # -- points -----------------------------------------------------------------------------------
    def append_points(self, trace: TraceRecord, x: np.ndarray, y: np.ndarray, wall: np.ndarray) -> None:
        if len(x) == 0:
            return
        self._points.append(trace.id, x, y, wall)
        self._bump_cached_total(trace, len(x))

    def replace_points(self, trace: TraceRecord, x: np.ndarray, y: np.ndarray, wall: np.ndarray) -> None:
        self._points.clear_trace(trace.id)
        self._bump_cached_total(trace, -self._cached_total(trace))
        self.append_points(trace, x, y, wall)

    def _cached_total(self, trace: TraceRecord) -> int:
        for t in self.cache.traces.get(trace.pane_id, []):
            if t.id == trace.id:
                return t.total
        return trace.total

    def _bump_cached_total(self, trace: TraceRecord, delta: int) -> None:
        lst = self.cache.traces.get(trace.pane_id)
        if lst is not None:
            self.cache.traces[trace.pane_id] = [dataclasses.replace(t, total=t.total + delta) if t.id == trace.id
                                                else t for t in lst]

    # -- step records -----------------------------------------------------------------------------
    def append_steps(self, pane: PaneRecord, first_idx: int, rows: list[tuple[float, float, dict | None, str | None]]
                     ) -> None:
        if rows:
            self.conn.execute(insert(step_t), [{"pane_id": pane.id, "idx": first_idx + i, "step": step, "wall": wall,
                                                "blob": blob, "data": data}
                                               for i, (step, wall, data, blob) in enumerate(rows)])

    def clear_steps(self, pane: PaneRecord) -> None:
        self.conn.execute(delete(step_t).where(step_t.c.pane_id == pane.id))

    # -- blobs ------------------------------------------------------------------------------------
    def put_blob(self, data: bytes, mime: str) -> str:
        sha = hashlib.sha256(data).hexdigest()
        self.conn.execute(insert_ignore(self.conn, blob_t), {"sha256": sha, "mime": mime, "size": len(data), "data": data})
        return sha

    def sweep_blobs(self) -> int:
        # A pane refers to blobs by sha256 anywhere in its content (an image, its history, a projector's
        # matrix, metadata and sprite), a step record in its blob column: any 64-hex string there keeps one.
        refs = {r[0] for r in self.conn.execute(select(step_t.c.blob).where(step_t.c.blob.is_not(None)).distinct())}
        for (content,) in self.conn.execute(select(pane_t.c.content).where(pane_t.c.content.is_not(None))):
            refs.update(m.decode() for m in _SHA_IN_JSON.findall(_json_bytes(content)))
        # A media picture's overlays name their mask PNGs by sha256 in the step record's data.
        with_overlays = select(step_t.c.data).where(cast(step_t.c.data, Text).like('%"overlays"%'))
        for (data,) in self.conn.execute(with_overlays):
            refs.update(m.decode() for m in _SHA_IN_JSON.findall(_json_bytes(data)))
        dead = [sha for (sha,) in self.conn.execute(select(blob_t.c.sha256)) if sha not in refs]
        for k in range(0, len(dead), 500):
            self.conn.execute(delete(blob_t).where(blob_t.c.sha256.in_(dead[k:k + 500])))
        return len(dead)
    # -- commit -----------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write what was buffered in this transaction (just before commit): one executemany per kind of row."""
        self._points.flush()
        if self._versions:
            hot.run(self.conn, hot.SET_PANE_VERSION, [{"pid": p, "v": v, "t": self.now} for p, v in self._versions.items()])
        env_ids = [env_id for env in self._touched_envs if (env_id := self._env_id(env)) is not None]
        if env_ids:
            hot.run(self.conn, hot.SET_ENV_UPDATED, [{"eid": e, "t": self.now} for e in env_ids])
        self._versions.clear()


__all__ = ["SqlTx", "WriterCache", "StoreError"]
