"""A warm report does only what its news needs: one connection, the deadline alone when nothing is new, and an
Optuna study that still decides as one rebuilt from the rows would."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.statements import statements

pytest.importorskip("optuna")

CONFIG = {"method": "random", "metric": {"name": "loss", "goal": "minimize"},
          "parameters": {"x": {"min": 0.0, "max": 1.0}}}
HYPERBAND = {**CONFIG, "early_terminate": {"type": "hyperband", "min_iter": 1, "max_iter": 2, "eta": 3}}


def _trial_updates(sql: list[str]) -> list[str]:
    return [s for s in sql if s.lstrip().upper().startswith("UPDATE SWEEP_TRIAL")]


def _connections(engine: Any, fn: Any) -> tuple[Any, set[int]]:
    """fn's result and the connections this thread checked out of the pool meanwhile."""
    import threading

    from sqlalchemy import event

    me, seen = threading.get_ident(), set()

    def checkout(dbapi_conn: Any, *_rest: Any) -> None:
        if threading.get_ident() == me:
            seen.add(id(dbapi_conn))

    event.listen(engine, "checkout", checkout)
    try:
        return fn(), seen
    finally:
        event.remove(engine, "checkout", checkout)


def _log(server: Any, run: str, ys: list[float], first: int = 0) -> None:
    client = server.client(run)
    client.line(X=list(range(first, first + len(ys))), Y=ys, win="loss", update="append" if first else None)
    assert client.flush(30)
    client.close_connection(timeout=10)


def test_a_report_runs_on_one_connection_and_an_idle_one_writes_only_the_deadline(server: Any):
    svc = server.app.services
    ctl, engine = svc.sweeps, svc.store.engine
    sweep_id = ctl.create(CONFIG, "cost").id
    trial = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
    _log(server, trial["run"], [3.0, 2.0])

    def beat() -> dict[str, Any]:
        return ctl.heartbeat(sweep_id, trial["number"], "a", 30.0)

    assert beat()["steps"] == 2
    _log(server, trial["run"], [1.0], first=2)
    (more, conns), sql = statements(engine, lambda: _connections(engine, beat))
    assert more["steps"] == 3 and any("FROM chunk" in s for s in sql) and any("FROM trace" in s for s in sql)
    # A heartbeat's session has a connection of its own (none from the pool): the metric is read on it too.
    assert len(conns) <= 1, "the metric is read in the report's session, not on connections of its own"
    before = svc.store.sweep_trials(sweep_id)[0].deadline
    idle, sql = statements(engine, beat)
    assert idle == {"action": "continue", "state": "running", "steps": 3}
    updates = _trial_updates(sql)
    assert len(updates) == 1 and "deadline" in updates[0] and "steps" not in updates[0], updates
    assert not [s for s in sql if "INSERT" in s.upper()], sql
    row = svc.store.sweep_trials(sweep_id)[0]
    assert (row.steps, row.last) == (3, 1.0) and row.deadline is not None and row.deadline >= before
    assert svc.store.sweep_trial_values(sweep_id, trial["number"]) == [3.0, 2.0, 1.0]
    assert ctl.finish(sweep_id, trial["number"], "a", 0)["value"] == 1.0


def test_a_report_after_the_pane_was_replaced_reads_the_new_line(server: Any):
    svc = server.app.services
    ctl = svc.sweeps
    sweep_id = ctl.create(CONFIG, "cost").id
    trial = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
    _log(server, trial["run"], [3.0, 2.0, 1.0])
    assert ctl.heartbeat(sweep_id, trial["number"], "a", 30.0)["steps"] == 3
    _log(server, trial["run"], [9.0, 8.0, 7.0, 6.0, 0.25])  # a new line: the old trace (and its id) is gone
    assert ctl.heartbeat(sweep_id, trial["number"], "a", 30.0)["steps"] == 5
    done = ctl.finish(sweep_id, trial["number"], "a", 0)
    assert done["value"] == 0.25 and done["steps"] == 5


def test_hyperband_prunes_and_the_warm_study_matches_one_rebuilt_from_the_rows(server: Any):
    from paneboard.server.sweeps.config import parse
    from paneboard.server.sweeps.search import SweepStudy

    svc = server.app.services
    ctl = svc.sweeps
    sweep_id = ctl.create(HYPERBAND, "cost").id
    good = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
    _log(server, good["run"], [1.0, 0.5])  # two values in one report: the study gets the last one
    assert ctl.heartbeat(sweep_id, good["number"], "a", 30.0)["action"] == "continue"
    assert ctl.finish(sweep_id, good["number"], "a", 0)["value"] == 0.5
    bad = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
    _log(server, bad["run"], [9.0])
    stopped = ctl.heartbeat(sweep_id, bad["number"], "a", 30.0)
    assert stopped["action"] == "stop" and stopped["reason"].startswith("pruned by hyperband at step 1: loss=9")

    warm = ctl._studies[sweep_id]
    values = {n: svc.store.sweep_trial_values(sweep_id, n) for n in (good["number"], bad["number"])}
    rebuilt = SweepStudy(sweep_id, parse(HYPERBAND), svc.store.sweep_trials(sweep_id), values, 0)
    for number in (good["number"], bad["number"]):
        a, b = warm._frozen_of(number), rebuilt._frozen_of(number)
        assert (a.state, a.value, a.last_step, a.system_attrs) == (b.state, b.value, b.last_step, b.system_attrs)
        assert a.intermediate_values[a.last_step] == b.intermediate_values[b.last_step]
    assert values == {good["number"]: [1.0, 0.5], bad["number"]: [9.0]}


def _level(conn: Any) -> str:
    if conn.dialect.name == "sqlite":
        return {0: "off", 1: "normal", 2: "full", 3: "extra"}[conn.exec_driver_sql("PRAGMA synchronous").scalar()]
    return str(conn.exec_driver_sql("SHOW synchronous_commit").scalar())


def test_heartbeats_set_no_durability_per_session_and_the_other_sessions_stay_durable(server: Any):
    svc = server.app.services
    ctl, store = svc.sweeps, svc.store
    sweep_id = ctl.create(CONFIG, "cost").id
    trial = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
    _log(server, trial["run"], [3.0])
    assert ctl.heartbeat(sweep_id, trial["number"], "a", 30.0)["steps"] == 1  # the first sets its connection up
    for _ in range(2):
        beat, sql = statements(store.engine, lambda: ctl.heartbeat(sweep_id, trial["number"], "a", 30.0))
        assert beat["steps"] == 1
        assert not [s for s in sql if "synchronous" in s.lower()], sql
    relaxed = "normal" if store.engine.dialect.name == "sqlite" else "off"
    durable = "full" if store.engine.dialect.name == "sqlite" else "on"
    with store.sweep_session(sweep_id, durable=False) as session:
        assert _level(session.conn) == relaxed
    for _ in range(3):  # several at once: the pool's connections, none of them left relaxed
        with store.sweep_session(sweep_id) as session, store.engine.connect() as other:
            assert (_level(session.conn), _level(other)) == (durable, durable)
    assert ctl.finish(sweep_id, trial["number"], "a", 0)["value"] == 3.0
