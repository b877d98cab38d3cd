"""Retention deletes exactly what its dry run listed (by a confirmation token), never a run that changed since,
and never an env with a live writer (a Visdom stream has no run record)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request


def call(srv, body):
    req = urllib.request.Request(srv.url + "/api/v1/runs/delete", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def events(srv, *evs):
    assert srv.http("POST", "/api/v1/events", {"events": list(evs)})["ok"]


def line(env):
    return {"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append",
            "traces": [{"name": None, "x": [0.0], "y": [1.0]}]}


def runs(srv):
    return {r["env"] for r in srv.get_json("/api/v1/runs")["runs"]}


def test_delete_takes_exactly_the_dry_runs_list_and_spares_live_writers(server):
    for env in ("old_a", "old_b"):
        events(server, {"op": "run_start", "env": env, "client": env, "t": 1000.0, "provenance": {}}, line(env))
    events(server, {"op": "run_end", "env": "old_a", "client": "old_a"})
    events(server, line("visdom_live"))  # a Visdom script streaming now: no run record
    status, dry = call(server, {"query": 'name ~ "."', "dry_run": True})
    assert status == 200 and dry["envs"] == ["old_a"] and dry["confirm"]
    # Meanwhile old_b finishes: a delete by query would now take it too; the confirmed one does not.
    events(server, {"op": "run_end", "env": "old_b", "client": "old_b"})
    assert call(server, {"envs": ["old_a", "old_b"], "confirm": dry["confirm"]})[0] == 409  # not what it listed
    assert call(server, {"envs": ["old_a"], "confirm": "0" * 64})[0] == 409
    status, done = call(server, {"envs": dry["envs"], "confirm": dry["confirm"]})
    assert status == 200 and done["envs"] == ["old_a"] and done["count"] == 1
    assert runs(server) == {"old_b", "visdom_live"}
    # A run that changed after its dry run is refused, not deleted in a changed state.
    status, dry = call(server, {"query": 'name ~ "^old_b$"', "dry_run": True})
    events(server, line("old_b"))
    assert call(server, {"envs": dry["envs"], "confirm": dry["confirm"]})[0] == 409
    assert runs(server) == {"old_b", "visdom_live"}
