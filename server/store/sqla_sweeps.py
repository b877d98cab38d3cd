"""Sweeps in SQL: the SqlStore's part that keeps sweeps and their trials, each call its own short transaction."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection, Engine

from .models import sweep_t, trial_t
from .sweep_records import SweepRecord, SweepSession, TrialRecord


def _sweep(row: Any) -> SweepRecord:
    return SweepRecord(id=row.id, project=row.project, name=row.name, config=dict(row.config), state=row.state,
                       created=float(row.created), updated=float(row.updated), version=int(row.version))


def _trial(row: Any) -> TrialRecord:
    return TrialRecord(sweep_id=row.sweep_id, number=int(row.number), state=row.state, params=dict(row.params),
                       config=dict(row.config), run=row.run, agent=row.agent, value=row.value,
                       intermediate=tuple(row.intermediate or ()), system_attrs=dict(row.system_attrs or {}),
                       reason=row.reason, retry_of=row.retry_of, created=float(row.created), started=row.started,
                       ended=row.ended, deadline=row.deadline)


def _trial_values(t: TrialRecord) -> dict[str, Any]:
    return {"sweep_id": t.sweep_id, "number": t.number, "state": t.state, "params": t.params, "config": t.config,
            "run": t.run, "agent": t.agent, "value": t.value, "intermediate": list(t.intermediate),
            "system_attrs": t.system_attrs, "reason": t.reason, "retry_of": t.retry_of, "created": t.created,
            "started": t.started, "ended": t.ended, "deadline": t.deadline}


class _SqlSweepSession(SweepSession):
    def __init__(self, conn: Connection, sweep: SweepRecord) -> None:
        self.conn = conn
        self.sweep = sweep
        self._numbers: set[int] | None = None

    def trials(self) -> list[TrialRecord]:
        rows = self.conn.execute(select(trial_t).where(trial_t.c.sweep_id == self.sweep.id)
                                 .order_by(trial_t.c.number)).all()
        self._numbers = {int(r.number) for r in rows}
        return [_trial(r) for r in rows]

    def put_trial(self, trial: TrialRecord) -> None:
        if self._numbers is None:
            self.trials()
        assert self._numbers is not None
        values = _trial_values(trial)
        if trial.number in self._numbers:
            self.conn.execute(update(trial_t).where(trial_t.c.sweep_id == trial.sweep_id,
                                                    trial_t.c.number == trial.number).values(**values))
        else:
            self.conn.execute(insert(trial_t).values(**values))
            self._numbers.add(trial.number)

    def set_state(self, state: str) -> None:
        self.conn.execute(update(sweep_t).where(sweep_t.c.id == self.sweep.id)
                          .values(state=state, updated=time.time()))
        self.sweep = SweepRecord(**{**self.sweep.__dict__, "state": state})


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

    def sweep_trials(self, sweep_id: str) -> list[TrialRecord]:
        with self.engine.connect() as conn:
            return [_trial(r) for r in conn.execute(select(trial_t).where(trial_t.c.sweep_id == sweep_id)
                                                   .order_by(trial_t.c.number))]

    @contextmanager
    def sweep_session(self, sweep_id: str) -> Iterator[SweepSession | None]:
        # The first statement writes the sweep's row: SQLite takes its write lock and PostgreSQL the row's lock
        # before anything is read, so two sessions on one sweep (any agents, any servers) never interleave.
        with self.engine.begin() as conn:
            row = conn.execute(update(sweep_t).where(sweep_t.c.id == sweep_id)
                               .values(version=sweep_t.c.version + 1, updated=time.time())
                               .returning(*sweep_t.c)).first()
            yield None if row is None else _SqlSweepSession(conn, _sweep(row))
