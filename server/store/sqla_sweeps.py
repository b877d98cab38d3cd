"""Sweeps in SQL: the SqlStore's part that keeps sweeps and their trials, each call its own short transaction."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection, Engine

from . import codec
from . import sweep_statements as st
from .dialect import relax_durability
from .models import sweep_t, trial_t, trial_value_t
from .records import TraceRecord
from .sweep_records import MetricTrace, SweepRecord, SweepSession, TrialCounts, TrialRecord


def _sweep(row: Any) -> SweepRecord:
    return SweepRecord(id=row.id, project=row.project, name=row.name, config=dict(row.config), state=row.state,
                       created=float(row.created), updated=float(row.updated), version=int(row.version))


def _trial(row: Any) -> TrialRecord:
    return TrialRecord(sweep_id=row.sweep_id, number=int(row.number), state=row.state, params=dict(row.params),
                       config=dict(row.config), run=row.run, agent=row.agent, value=row.value,
                       steps=int(row.steps), last=row.last_value, system_attrs=dict(row.system_attrs or {}),
                       reason=row.reason, retry_of=row.retry_of, created=float(row.created), started=row.started,
                       ended=row.ended, deadline=row.deadline)


def _trial_values(t: TrialRecord) -> dict[str, Any]:
    return {"sweep_id": t.sweep_id, "number": t.number, "state": t.state, "params": t.params, "config": t.config,
            "run": t.run, "agent": t.agent, "value": t.value, "steps": t.steps, "last_value": t.last,
            "system_attrs": t.system_attrs, "reason": t.reason, "retry_of": t.retry_of, "created": t.created,
            "started": t.started, "ended": t.ended, "deadline": t.deadline}


class _SqlSweepSession(SweepSession):
    def __init__(self, conn: Connection, sweep: SweepRecord) -> None:
        self.conn = conn
        self.sweep = sweep

    def _select(self) -> Any:
        return select(trial_t).where(trial_t.c.sweep_id == self.sweep.id)

    def trials(self) -> list[TrialRecord]:
        return [_trial(r) for r in self.conn.execute(self._select().order_by(trial_t.c.number))]

    def trial(self, number: int) -> TrialRecord | None:
        row = self.conn.execute(st.TRIAL, {"sid": self.sweep.id, "n": number}).first()
        return None if row is None else _trial(row)

    def counts(self) -> TrialCounts:
        return _counts(self.conn, self.sweep.id)

    def first_queued(self) -> TrialRecord | None:
        row = self.conn.execute(self._select().where(trial_t.c.state == "queued")
                                .order_by(trial_t.c.number).limit(1)).first()
        return None if row is None else _trial(row)

    def expired(self, now: float) -> list[TrialRecord]:
        rows = self.conn.execute(self._select().where(trial_t.c.state == "running", trial_t.c.deadline < now)
                                 .order_by(trial_t.c.number))
        return [_trial(r) for r in rows]

    def values(self) -> dict[int, list[float]]:
        return _values(self.conn, self.sweep.id)

    def add_values(self, number: int, first_step: int, values: list[float]) -> None:
        self.conn.execute(st.ADD_VALUES, [{"sweep_id": self.sweep.id, "number": number, "step": first_step + i,
                                           "value": v} for i, v in enumerate(values)])

    def put_progress(self, trial: TrialRecord) -> None:
        self.conn.execute(st.PROGRESS, {"sid": trial.sweep_id, "n": trial.number, "k": trial.steps,
                                        "last": trial.last, "sa": trial.system_attrs, "dl": trial.deadline})

    def put_deadline(self, trial: TrialRecord) -> None:
        self.conn.execute(st.DEADLINE, {"sid": trial.sweep_id, "n": trial.number, "dl": trial.deadline})

    def metric_trace(self, env: str, name: str) -> MetricTrace | None:
        return _metric_trace(self.conn, env, name, name)

    def metric_chunks(self, trace_id: int, from_seq: int) -> list[tuple[int, np.ndarray]]:
        return _metric_chunks(self.conn, trace_id, from_seq)

    def put_trial(self, trial: TrialRecord) -> None:
        values = _trial_values(trial)
        done = self.conn.execute(update(trial_t).where(trial_t.c.sweep_id == trial.sweep_id,
                                                       trial_t.c.number == trial.number).values(**values))
        if done.rowcount == 0:  # a new trial: one statement either way, never a read of the others
            self.conn.execute(insert(trial_t).values(**values))

    def set_state(self, state: str) -> None:
        self.conn.execute(update(sweep_t).where(sweep_t.c.id == self.sweep.id)
                          .values(state=state, updated=time.time()))
        self.sweep = SweepRecord(**{**self.sweep.__dict__, "state": state})


def _values(conn: Connection, sweep_id: str, number: int | None = None) -> dict[int, list[float]]:
    v = trial_value_t.c
    q = select(v.number, v.value).where(v.sweep_id == sweep_id)
    if number is not None:
        q = q.where(v.number == number)
    out: dict[int, list[float]] = {}
    for n, value in conn.execute(q.order_by(v.number, v.step)):
        out.setdefault(int(n), []).append(math.nan if value is None else float(value))  # SQLite keeps NaN as NULL
    return out


def _counts(conn: Connection, sweep_id: str, now: float | None = None) -> TrialCounts:
    fresh = trial_t.c.retry_of.is_(None)
    rows = conn.execute(select(trial_t.c.state, fresh.label("fresh"), func.count()).where(
        trial_t.c.sweep_id == sweep_id).group_by(trial_t.c.state, fresh)).all()
    by_state: dict[str, int] = {}
    for state, _fresh, n in rows:
        by_state[state] = by_state.get(state, 0) + int(n)
    alive = 0
    if now is not None and by_state.get("running"):
        alive = int(conn.execute(select(func.count(func.distinct(trial_t.c.agent))).where(
            trial_t.c.sweep_id == sweep_id, trial_t.c.state == "running", trial_t.c.deadline >= now)).scalar_one())
    return TrialCounts(by_state=by_state, fresh=sum(int(n) for _s, f, n in rows if f),
                       fresh_running=sum(int(n) for s, f, n in rows if f and s == "running"), agents_alive=alive)


def _metric_trace(conn: Connection, env: str, win: str, name: str) -> MetricTrace | None:
    r = conn.execute(st.METRIC_TRACE, {"env": env, "win": win, "name": name}).first()
    if r is None:
        return None
    return MetricTrace(TraceRecord(r.id, r.pane_id, r.idx, r.name, r.style or {}, int(r.npoints)),
                       r.s_last_x, r.s_last_y)


def _metric_chunks(conn: Connection, trace_id: int, from_seq: int) -> list[tuple[int, np.ndarray]]:
    return [(int(r.seq), codec.decode(r.ys)) for r in conn.execute(st.METRIC_CHUNKS, {"tid": trace_id,
                                                                                      "seq": from_seq})]


class SqlSweeps:
    """Mixed into SqlStore; outside the writer thread, as the share tokens and settings are."""

    engine: Engine

    def add_sweep(self, sweep: SweepRecord) -> SweepRecord:
        with self.engine.begin() as conn:
            conn.execute(insert(sweep_t).values(id=sweep.id, project=sweep.project, name=sweep.name,
                                                config=sweep.config, state=sweep.state, created=sweep.created,
                                                updated=sweep.updated, version=0))
            return _sweep(conn.execute(select(sweep_t).where(sweep_t.c.id == sweep.id)).one())

    def get_sweep(self, sweep_id: str) -> SweepRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(sweep_t).where(sweep_t.c.id == sweep_id)).first()
        return _sweep(row) if row is not None else None

    def list_sweeps(self) -> list[SweepRecord]:
        with self.engine.connect() as conn:
            return [_sweep(r) for r in conn.execute(select(sweep_t).order_by(sweep_t.c.created.desc()))]

    def sweep_trials(self, sweep_id: str, limit: int | None = None, offset: int = 0, newest: bool = False,
                     state: str | None = None) -> list[TrialRecord]:
        q = select(trial_t).where(trial_t.c.sweep_id == sweep_id)
        if state is not None:
            q = q.where(trial_t.c.state == state)
        q = q.order_by(trial_t.c.number.desc() if newest else trial_t.c.number).offset(offset).limit(limit)
        with self.engine.connect() as conn:
            return [_trial(r) for r in conn.execute(q)]

    def sweep_trial_values(self, sweep_id: str, number: int) -> list[float]:
        with self.engine.connect() as conn:
            return _values(conn, sweep_id, number).get(number, [])

    def sweep_runs(self, sweep_id: str | None = None) -> dict[str, set[str]]:
        t = trial_t.c
        q = select(t.sweep_id, t.run).where(t.run.is_not(None)).distinct()
        if sweep_id is not None:
            q = q.where(t.sweep_id == sweep_id)
        out: dict[str, set[str]] = {}
        with self.engine.connect() as conn:
            for r in conn.execute(q):
                out.setdefault(r.sweep_id, set()).add(r.run)
        return out

    def sweep_points(self, sweep_id: str) -> list[tuple[int, float, str]]:
        t = trial_t.c
        q = (select(t.number, t.value, t.state).where(t.sweep_id == sweep_id, t.value.is_not(None))
             .order_by(t.number))
        with self.engine.connect() as conn:
            return [(int(r.number), float(r.value), r.state) for r in conn.execute(q)]

    def sweep_counts(self, sweep_id: str, now: float | None = None) -> TrialCounts:
        with self.engine.connect() as conn:
            return _counts(conn, sweep_id, now)

    def sweep_best(self, sweep_id: str, maximize: bool) -> TrialRecord | None:
        order = trial_t.c.value.desc() if maximize else trial_t.c.value.asc()
        with self.engine.connect() as conn:
            row = conn.execute(select(trial_t).where(trial_t.c.sweep_id == sweep_id, trial_t.c.state == "finished",
                                                     trial_t.c.value.is_not(None))
                               .order_by(order, trial_t.c.number).limit(1)).first()
        return None if row is None else _trial(row)

    def metric_trace(self, env: str, win: str, name: str) -> MetricTrace | None:
        with self.engine.connect() as conn:
            return _metric_trace(conn, env, win, name)

    def metric_chunks(self, trace_id: int, from_seq: int) -> list[tuple[int, np.ndarray]]:
        with self.engine.connect() as conn:
            return _metric_chunks(conn, trace_id, from_seq)

    _relaxed: RelaxedConnection  # SqlStore's

    @contextmanager
    def sweep_session(self, sweep_id: str, durable: bool = True) -> Iterator[SweepSession | None]:
        with self.engine.connect() if durable else self._relaxed.hold() as conn, conn.begin():
            row = _claim(conn, sweep_id)
            yield None if row is None else _SqlSweepSession(conn, _sweep(row))


class RelaxedConnection:
    """The one connection of the sweeps' non-durable sessions (heartbeats), its commits not waiting for the disk
    (dialect.relax_durability) once for its whole life: a pooled connection would have to be set and reset
    around each session, two more round trips per heartbeat. The pool's connections stay durable."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._conn: Connection | None = None
        self._lock = threading.Lock()  # one session at a time on it, from any thread

    @contextmanager
    def hold(self) -> Iterator[Connection]:
        with self._lock:
            if self._conn is None:
                conn = self.engine.connect()
                relax_durability(conn)
                self._conn = conn
            try:
                yield self._conn
            finally:
                if self._conn.invalidated:  # the error broke it: reconnected, it would have lost the setting
                    self._drop()

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()


def _claim(conn: Connection, sweep_id: str) -> Any:
    """The sweep's row, its version bumped. The first write is to that row: SQLite takes its write lock and
    PostgreSQL the row's lock before anything is read, so two sessions on one sweep (any agents, any servers)
    never interleave."""
    return conn.execute(st.CLAIM, {"sid": sweep_id, "now": time.time()}).first()
