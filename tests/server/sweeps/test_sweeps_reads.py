"""The controller's reads: a report or a suggestion touches only the rows it needs, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from paneboard.server.store import open_store
from paneboard.server.store.schema import ensure_schema
from paneboard.server.sweeps.controller import SweepController

pytest.importorskip("optuna")

BAYES = {"method": "bayes", "metric": {"name": "loss", "goal": "minimize"},
         "parameters": {"x": {"min": 0.0, "max": 1.0}, "opt": {"values": ["adam", "sgd"]}}}
# A read of the trial table narrowed to one trial, the oldest queued one, the expired ones, or an aggregate.
NARROW = re.compile(r"sweep_trial\.number = |LIMIT|count\(|sweep_trial\.deadline < ", re.I)


@pytest.fixture
def store(db_url: str) -> Iterator[Any]:
    ensure_schema(db_url, db_url)
    st = open_store(db_url)
    yield st
    st.close()


def _finished(ctl: SweepController, sweep_id: str, n: int) -> None:
    for _ in range(n):
        trial = ctl.next_trial(sweep_id, "seed", 30.0)["trial"]
        ctl.finish(sweep_id, trial["number"], "seed", 0)


def _trial_reads(store: Any, fn: Any) -> list[str]:
    """The SELECTs on sweep_trial that `fn` runs."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "FROM sweep_trial" in statement:
            seen.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        fn()
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    return seen


def test_warm_reports_and_suggestions_never_read_every_trial(store):
    ctl = SweepController(store)
    sweep_id = ctl.create(BAYES, "reads").id
    _finished(ctl, sweep_id, 25)
    trial = ctl.next_trial(sweep_id, "a", 30.0)["trial"]

    def work() -> None:
        for _ in range(3):
            assert ctl.heartbeat(sweep_id, trial["number"], "a", 30.0)["action"] == "continue"
        ctl.finish(sweep_id, trial["number"], "a", 0)
        nxt = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
        assert nxt["number"] == 26
        ctl.heartbeat(sweep_id, nxt["number"], "a", 30.0)

    reads = _trial_reads(store, work)
    assert reads, "the controller read nothing: the listener missed its statements"
    wide = [s for s in reads if not NARROW.search(s)]
    assert wide == [], wide


def test_counts_come_from_one_aggregate_and_match_the_trials(store):
    ctl = SweepController(store)
    sweep_id = ctl.create({**BAYES, "run_cap": 5}, "reads").id
    _finished(ctl, sweep_id, 3)
    running = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
    failed = ctl.next_trial(sweep_id, "b", 30.0)["trial"]
    ctl.finish(sweep_id, failed["number"], "b", 1)
    counts = store.sweep_counts(sweep_id)
    assert counts.to_json() == {"queued": 0, "running": 1, "finished": 3, "stopped": 0, "failed": 1, "crashed": 0}
    assert counts.total == 5 and counts.fresh == 5 and counts.fresh_running == 1
    # run_cap reached: the next agent waits for the running trial (its agent may die), not a sixth trial.
    nxt = ctl.next_trial(sweep_id, "c", 30.0)
    assert nxt["trial"] is None and nxt["retry_s"] > 0
    ctl.finish(sweep_id, running["number"], "a", 0)
    assert ctl.next_trial(sweep_id, "c", 30.0) == {"trial": None, "state": "finished"}


def test_a_restarted_controller_rebuilds_its_study_and_goes_on(store):
    ctl = SweepController(store)
    sweep_id = ctl.create(BAYES, "reads").id
    _finished(ctl, sweep_id, 12)
    again = SweepController(store)  # a server start: its study is rebuilt from the rows
    trial = again.next_trial(sweep_id, "a", 30.0)["trial"]
    assert trial["number"] == 12
    # The first controller's warm study is now behind the database: it rebuilds too, and never repeats 12.
    other = ctl.next_trial(sweep_id, "b", 30.0)["trial"]
    assert other["number"] == 13
    info = ctl.describe(sweep_id)
    assert info["counts"]["finished"] == 12 and info["counts"]["running"] == 2


def test_warm_builds_open_sweeps_studies_so_the_first_suggestion_reads_no_rows(store):
    first = SweepController(store)
    open_id = first.create(BAYES, "reads").id
    _finished(first, open_id, 10)
    done_id = first.create({**BAYES, "run_cap": 1}, "reads").id
    _finished(first, done_id, 1)
    assert first.next_trial(done_id, "a", 30.0) == {"trial": None, "state": "finished"}

    started = SweepController(store)  # as Services.start does for a new server, in its own thread
    assert started.warm() == 1  # the finished sweep hands out nothing: no study for it
    reads = _trial_reads(store, lambda: started.next_trial(open_id, "a", 30.0))
    assert reads and [s for s in reads if not NARROW.search(s)] == []
