"""A warm report reads its run's metric only when the run logged a point since the last report."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from sqlalchemy import event

from helpers.statements import statements as _statements

pytest.importorskip("optuna")

CONFIG = {"method": "random", "metric": {"name": "loss", "goal": "minimize"},
          "parameters": {"x": {"min": 0.0, "max": 1.0}}}


def _series_reads(statements: list[str]) -> list[str]:
    return [s for s in statements if "FROM chunk" in s]


def test_a_report_without_new_points_reads_no_series_and_one_with_them_reads_them(server: Any):
    svc = server.app.services
    ctl, engine = svc.sweeps, svc.store.engine
    sweep_id = ctl.create(CONFIG, "reports").id
    trial = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
    client = server.client(trial["run"])
    client.line(X=[0, 1, 2], Y=[3.0, 2.0, 1.5], win="loss")
    assert client.flush(30)

    def beat() -> dict[str, Any]:
        return ctl.heartbeat(sweep_id, trial["number"], "a", 30.0)

    first, sql = _statements(engine, beat)
    assert first["steps"] == 3 and _series_reads(sql), "the first report must read the points"
    again, sql = _statements(engine, beat)
    assert again == {"action": "continue", "state": "running", "steps": 3}
    assert sql, "the listener saw nothing: it missed the report's statements"
    assert _series_reads(sql) == []
    # The metric lookup is a single statement: pane, trace and the trace's mark together.
    assert len([s for s in sql if "FROM trace" in s]) == 1 and not [s for s in sql if "FROM pane" in s]

    client.line(X=[3, 4], Y=[1.0, 0.5], win="loss", update="append")
    assert client.flush(30)
    more, sql = _statements(engine, beat)
    assert more["steps"] == 5 and _series_reads(sql)
    client.close_connection(timeout=10)
    done = ctl.finish(sweep_id, trial["number"], "a", 0)
    assert done["value"] == 0.5 and done["steps"] == 5


def test_a_restarted_controller_reads_the_metric_again(server: Any):
    from paneboard.server.sweeps.controller import SweepController

    svc = server.app.services
    sweep_id = svc.sweeps.create(CONFIG, "reports").id
    trial = svc.sweeps.next_trial(sweep_id, "a", 30.0)["trial"]
    client = server.client(trial["run"])
    client.line(X=[0, 1], Y=[2.0, 1.0], win="loss")
    assert client.flush(30)
    assert svc.sweeps.heartbeat(sweep_id, trial["number"], "a", 30.0)["steps"] == 2
    client.line(X=[2], Y=[0.5], win="loss", update="append")
    assert client.flush(30)
    client.close_connection(timeout=10)
    other = SweepController(svc.store)  # another server: its memory has no mark of this trial
    assert other.heartbeat(sweep_id, trial["number"], "a", 30.0)["steps"] == 3
    assert svc.sweeps.heartbeat(sweep_id, trial["number"], "a", 30.0)["steps"] == 3


def test_reports_past_a_full_chunk_read_only_the_rows_after_it_and_miss_nothing(server: Any):
    from paneboard.server.store.chunks import CHUNK_POINTS

    svc = server.app.services
    ctl, engine = svc.sweeps, svc.store.engine
    sweep_id = ctl.create(CONFIG, "reports").id
    trial = ctl.next_trial(sweep_id, "a", 30.0)["trial"]
    client = server.client(trial["run"])
    n = CHUNK_POINTS + 100
    client.line(X=list(range(n)), Y=[float(i) for i in range(n)], win="loss")
    assert client.flush(30)
    assert ctl.heartbeat(sweep_id, trial["number"], "a", 30.0)["steps"] == n
    client.line(X=[n, n + 1], Y=[-1.0, -2.0], win="loss", update="append")
    assert client.flush(30)
    client.close_connection(timeout=10)
    params: list[Any] = []
    me = threading.get_ident()

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if "FROM chunk" in statement and threading.get_ident() == me:
            params.append(parameters)

    event.listen(engine, "before_cursor_execute", record)
    try:
        assert ctl.heartbeat(sweep_id, trial["number"], "a", 30.0)["steps"] == n + 2
    finally:
        event.remove(engine, "before_cursor_execute", record)
    # One read, from the row after the full one (seq 1): the first 2,048 points are not read again.
    assert len(params) == 1
    from_seq = [v for k, v in params[0].items() if "seq" in k] if isinstance(params[0], dict) else [params[0][-1]]
    assert from_seq == [1]
    done = ctl.finish(sweep_id, trial["number"], "a", 0)
    assert done["value"] == -2.0 and done["steps"] == n + 2
