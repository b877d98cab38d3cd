"""A share link scoped to some runs lists and reads only the sweeps whose runs it may all read; a hidden sweep
answers as a missing one. The rule (every run of the sweep in scope) is in server/web/sweeps_api.py."""

from __future__ import annotations

import json
import time

import pytest

from helpers.http import request_raw
from paneboard.server.store.sweep_records import TrialRecord

pytest.importorskip("optuna")

ADMIN = "admin-token-for-sweeps"
CONFIG = {"method": "random", "metric": {"name": "loss", "goal": "minimize"},
          "parameters": {"x": {"min": 0.0, "max": 1.0}}}


def call(srv, path, token=ADMIN, method="GET", body=None):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    status, raw = request_raw(srv.url + path, method, None if body is None else json.dumps(body).encode(), headers)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def _sweep(srv, runs: list[str | None]) -> str:
    """A sweep whose trials ran as `runs` (None: a queued trial, no run yet)."""
    status, made = call(srv, "/api/v1/sweeps", method="POST", body={"config": CONFIG, "project": "p"})
    assert status == 201
    with srv.app.services.store.sweep_session(made["id"]) as session:
        for k, run in enumerate(runs):
            session.put_trial(TrialRecord(sweep_id=made["id"], number=k, state="finished" if run else "queued",
                                          params={"x": 0.5}, config={"x": 0.5}, run=run, agent="seed",
                                          value=float(k) if run else None, created=time.time()))
    return made["id"]


def _token(srv, envs):
    status, made = call(srv, "/api/v1/tokens", method="POST", body={"envs": envs})
    assert status == 201
    return made["token"]


@pytest.fixture
def world(make_server):
    srv = make_server(token=ADMIN)
    srv.inside = _sweep(srv, ["p/a", "p/b", None])  # every run in the link's scope (and a queued retry)
    srv.straddles = _sweep(srv, ["p/a", "p/secret"])  # one run outside it
    srv.outside = _sweep(srv, ["p/secret"])
    srv.empty = _sweep(srv, [])  # no run yet: nothing of it is the link's
    srv.scoped, srv.every = _token(srv, ["p/a", "p/b"]), _token(srv, None)
    return srv


def test_a_scoped_link_lists_only_sweeps_whose_runs_it_may_all_read(world):
    ids = lambda token: sorted(s["id"] for s in call(world, "/api/v1/sweeps", token)[1]["sweeps"])  # noqa: E731
    assert ids(world.scoped) == [world.inside]
    every = sorted([world.inside, world.straddles, world.outside, world.empty])
    assert ids(world.every) == every and ids(ADMIN) == every


def test_a_hidden_sweep_reads_as_a_missing_one(world):
    status, shown = call(world, f"/api/v1/sweeps/{world.inside}", world.scoped)
    assert status == 200 and [t["run"] for t in shown["trials"]] == ["p/a", "p/b", None]
    assert shown["total"] == 3 and shown["best"]["run"] == "p/a"
    for hidden in (world.straddles, world.outside, world.empty):
        assert call(world, f"/api/v1/sweeps/{hidden}", world.scoped) == (404, {"error": f"no sweep {hidden!r}"})
    assert call(world, "/api/v1/sweeps/feedf00d", world.scoped) == (404, {"error": "no sweep 'feedf00d'"})
    for sweep_id in (world.straddles, world.outside, world.empty):
        assert call(world, f"/api/v1/sweeps/{sweep_id}", world.every)[0] == 200


def test_a_share_link_cannot_steer_or_feed_a_sweep(world):
    for path, body in ((f"/api/v1/sweeps/{world.inside}/state", {"action": "pause"}),
                       (f"/api/v1/sweeps/{world.inside}/next", {"agent": "x"}),
                       ("/api/v1/sweeps", {"config": CONFIG})):
        status, answer = call(world, path, world.scoped, "POST", body)
        assert status == 403 and "read-only share link" in answer["error"]
    assert call(world, f"/api/v1/sweeps/{world.inside}")[1]["state"] == "running"
