"""The sweep page's API: counts and best from aggregates, every value for the chart, one page of trial rows."""

from __future__ import annotations

import re
import time
import urllib.error
from typing import Any

import pytest
from sqlalchemy import event

from paneboard.server.store.sweep_records import TrialRecord

pytest.importorskip("optuna")

CONFIG = {"method": "random", "metric": {"name": "loss", "goal": "minimize"},
          "parameters": {"x": {"min": 0.0, "max": 1.0}}}
# Reads of the trial table that are narrowed: a page (LIMIT), an aggregate, the running trials, the values only.
NARROW = re.compile(r"LIMIT|count\(|sweep_trial\.state = |^SELECT sweep_trial\.number, sweep_trial\.value, "
                    r"sweep_trial\.state\s+FROM", re.I)


def _seed(svc: Any, sweep_id: str, n: int) -> None:
    """n finished trials with values 1/(1+number) (trial 0 worst, the last best), as the controller stores them."""
    with svc.store.sweep_session(sweep_id) as session:
        for k in range(n):
            session.put_trial(TrialRecord(sweep_id=sweep_id, number=k, state="finished", params={"x": 0.5},
                                          config={"x": 0.5}, run=f"sw/{sweep_id}-{k}", agent="seed",
                                          value=1.0 / (1 + k), steps=1, last=1.0, created=time.time()))


def test_describe_pages_the_trials_and_counts_by_aggregate(server: Any):
    svc = server.app.services
    sweep_id = svc.sweeps.create(CONFIG, "pages").id
    _seed(svc, sweep_id, 30)
    running = svc.sweeps.next_trial(sweep_id, "a", 30.0)["trial"]
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "FROM sweep_trial" in statement:
            seen.append(statement)

    event.listen(svc.store.engine, "before_cursor_execute", record)
    try:
        page = server.get_json(f"/api/v1/sweeps/{sweep_id}?limit=10&offset=5&newest=1")
    finally:
        event.remove(svc.store.engine, "before_cursor_execute", record)
    assert seen and [s for s in seen if not NARROW.search(s)] == []
    assert [t["number"] for t in page["trials"]] == list(range(25, 15, -1))
    assert page["offset"] == 5 and page["total"] == 31
    assert page["counts"]["finished"] == 30 and page["counts"]["running"] == 1
    assert page["best"]["number"] == 29 and page["best"]["value"] == pytest.approx(1 / 30)
    assert [a["trial"] for a in page["agents"]] == [running["number"]] == [30]
    assert [p["number"] for p in page["points"]] == list(range(30))

    oldest = server.get_json(f"/api/v1/sweeps/{sweep_id}?limit=3")
    assert [t["number"] for t in oldest["trials"]] == [0, 1, 2]
    every = server.get_json(f"/api/v1/sweeps/{sweep_id}")  # no limit: up to 1,000 rows, by number
    assert [t["number"] for t in every["trials"]] == list(range(31))


@pytest.mark.parametrize("query", ["limit=0", "limit=1001", "limit=x", "offset=-1"])
def test_describe_refuses_a_bad_page(server: Any, query: str):
    sweep_id = server.app.services.sweeps.create(CONFIG, "pages").id
    with pytest.raises(urllib.error.HTTPError) as err:
        server.get_json(f"/api/v1/sweeps/{sweep_id}?{query}")
    assert err.value.code == 400
    assert ("limit" in query and b"limit" in err.value.read()) or "offset" in query
