"""The statements of a sweep report (a heartbeat), built once: building a Core statement costs more than running it."""

from __future__ import annotations

from sqlalchemy import bindparam, case, insert, select, update

from .models import chunk_t, env_t, pane_t, sweep_t, trace_t, trial_t, trial_value_t

_trial_key = (trial_t.c.sweep_id == bindparam("sid")) & (trial_t.c.number == bindparam("n"))

# The first write of every session: see sqla_sweeps._claim.
CLAIM = (update(sweep_t).where(sweep_t.c.id == bindparam("sid"))
         .values(version=sweep_t.c.version + 1, updated=bindparam("now")).returning(*sweep_t.c))
TRIAL = select(trial_t).where(_trial_key)
# Bind names differ from the column names: SQLAlchemy reserves those for the SET clause.
PROGRESS = update(trial_t).where(_trial_key).values(
    steps=bindparam("k"), last_value=bindparam("last"),
    system_attrs=bindparam("sa", type_=trial_t.c.system_attrs.type), deadline=bindparam("dl"))
ADD_VALUES = insert(trial_value_t)
DEADLINE = update(trial_t).where(_trial_key).values(deadline=bindparam("dl"))

_t = trace_t.c
_MARK = (_t.id, _t.pane_id, _t.idx, _t.name, _t.style, _t.npoints, _t.s_last_x, _t.s_last_y)
# The trace named after the metric, else the pane's first, with its mark.
METRIC_TRACE = (select(*_MARK).join(pane_t, pane_t.c.id == _t.pane_id).join(env_t, env_t.c.id == pane_t.c.env_id)
                .where(env_t.c.name == bindparam("env"), pane_t.c.win == bindparam("win"), pane_t.c.kind == "line")
                .order_by(case((_t.name == bindparam("name"), 0), else_=1), _t.idx).limit(1))
METRIC_CHUNKS = (select(chunk_t.c.seq, chunk_t.c.ys)
                 .where(chunk_t.c.trace_id == bindparam("tid"), chunk_t.c.seq >= bindparam("seq"))
                 .order_by(chunk_t.c.seq))
