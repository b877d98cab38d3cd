"""Migration 0012: the trials of a database at 0011 keep their metric values, moved into rows of their own."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa
from alembic import command

from paneboard.server.store import SqlStore
from paneboard.server.store.dialect import create_engine_for
from paneboard.server.store.schema import alembic_config, ensure_schema

pytest.importorskip("optuna")

CONFIG = {"method": "random", "metric": {"name": "loss", "goal": "minimize"},
          "parameters": {"x": {"min": 0.0, "max": 1.0}}}
# number -> (state, value, intermediate) as 0011 stored them
TRIALS = {0: ("finished", 0.5, [1.0, 0.75, 0.5]), 1: ("stopped", None, [9.0]), 2: ("queued", None, []),
          3: ("running", None, [2.0, 1.5])}


def _old_trial_table() -> sa.TableClause:
    return sa.table("sweep_trial", *[sa.column(c) for c in ("sweep_id", "number", "state", "value", "created",
                                                            "deadline")],
                    *[sa.column(c, sa.JSON()) for c in ("params", "config", "system_attrs", "intermediate")])


def test_upgrade_from_0011_moves_every_trials_values_and_downgrade_puts_them_back(db_url):
    ensure_schema(db_url, db_url)
    cfg = alembic_config(db_url)
    command.downgrade(cfg, "0011_provenance_parts")
    engine = create_engine_for(db_url)
    now = time.time()
    try:
        with engine.begin() as conn:
            conn.execute(sa.table("sweep", *[sa.column(c) for c in ("id", "project", "name", "state", "created",
                                                                      "updated", "version")],
                                  sa.column("config", sa.JSON())).insert(),
                         [{"id": "s1", "project": "p", "name": "", "config": CONFIG, "state": "running",
                           "created": now, "updated": now, "version": 3}])
            conn.execute(_old_trial_table().insert(), [
                {"sweep_id": "s1", "number": n, "state": state, "params": {"x": 0.5}, "config": {"x": 0.5},
                 "value": value, "intermediate": values, "system_attrs": {}, "created": now,
                 "deadline": now + 3600} for n, (state, value, values) in TRIALS.items()])
    finally:
        engine.dispose()

    command.upgrade(cfg, "head")
    store = SqlStore(db_url)
    try:
        rows = {t.number: t for t in store.sweep_trials("s1")}
        for n, (_state, _value, values) in TRIALS.items():
            assert store.sweep_trial_values("s1", n) == values
            assert (rows[n].steps, rows[n].last) == (len(values), values[-1] if values else None)
        from paneboard.server.sweeps.controller import SweepController

        ctl = SweepController(store)
        assert ctl.warm() == 1  # the study is rebuilt from the moved rows
        study = ctl._studies["s1"]
        assert study._frozen_of(0).intermediate_values == {1: 1.0, 2: 0.75, 3: 0.5}
        assert [t["steps"] for t in ctl.describe("s1")["trials"]] == [3, 1, 0, 2]
    finally:
        store.close()

    command.downgrade(cfg, "0011_provenance_parts")
    engine = create_engine_for(db_url)
    try:
        with engine.connect() as conn:
            t = _old_trial_table()
            back = dict(conn.execute(sa.select(t.c.number, t.c.intermediate)).all())
            assert "sweep_trial_value" not in sa.inspect(conn).get_table_names()
    finally:
        engine.dispose()
    assert back == {n: values for n, (_s, _v, values) in TRIALS.items()}
